"""The README and docs/ point only at files in the repository, and every module and file they name
exists: a reader who follows a path, a dotted module name or a bare file name finds it (a fresh
clone has no ``../shared``)."""

import re
import subprocess
from pathlib import Path, PurePosixPath

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = (
    "pippa_site",
    "webui",
    "pippa_memory",
    "reference_engine",
    "provider_doubles",
    "bench",
    "tests",
)
PATH = re.compile(r"(?<![\w./-])((?:" + "|".join(PACKAGES) + r")/[\w/.-]*\w)")
DOTTED = re.compile(
    r"(?<![\w./-])((?:pippa_site|webui|pippa_memory|reference_engine|provider_doubles)(?:\.\w+)+)"
)
#: ``app_label.name`` that are no modules: permissions, system check ids, models, migrations and
#: the plug-in's conversation flag.
NOT_A_MODULE = re.compile(
    r"^(?:webui|pippa_memory)\.(?:(?:add|change|delete|view|manage|repin|retry)_\w+|[EW]\d{3}|[A-Z]\w*|\d+"
    r"|questions_out)$"
)


def documents() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "bench/README.md"]


def module_exists(dotted: str) -> bool:
    """Whether some leading part of ``dotted`` is a module or package (the rest may be names in
    it), and that part is more than the top package alone."""
    parts = dotted.split(".")
    for end in range(len(parts), 1, -1):
        base = ROOT.joinpath(*parts[:end])
        if base.with_suffix(".py").exists() or (base / "__init__.py").exists():
            return True
    return False


def test_no_document_points_outside_the_repository() -> None:
    for document in documents():
        assert "../shared" not in document.read_text(), document.name


def test_every_path_a_document_names_exists() -> None:
    missing = []
    for document in documents():
        for path in PATH.findall(document.read_text()):
            path = path.rstrip(".")
            if "*" in path or "<" in path:
                continue
            if not (ROOT / path).exists():
                missing.append(f"{document.name}: {path}")
    assert missing == []


def test_every_module_a_document_names_exists() -> None:
    missing = []
    for document in documents():
        for dotted in DOTTED.findall(document.read_text()):
            if not NOT_A_MODULE.match(dotted) and not module_exists(dotted):
                missing.append(f"{document.name}: {dotted}")
    assert missing == []


#: What a file name ends with, and the files known by a bare name with none.
FILE_EXTENSIONS = frozenset(
    {
        "py",
        "cfg",
        "css",
        "html",
        "ini",
        "js",
        "json",
        "md",
        "sh",
        "sqlite3",
        "toml",
        "txt",
        "yaml",
        "yml",
    }
)
EXTENSIONLESS_FILES = {"Makefile", "Procfile", "Dockerfile"}
#: A word anywhere in a document (prose, a diagram, a code block) that ends with a file extension:
#: not part of a URL, a dotted name or a call such as ``reply.json()``.
FILE_WORD = re.compile(
    r"(?<![\w.:/~-])((?:[\w-]+/)*[\w-]+(?:\.[\w-]+)*\.(?:"
    + "|".join(sorted(FILE_EXTENSIONS))
    + r"))"
    r"(?![\w/(-])"
)
BACKTICKED = re.compile(r"`([^`\s]+)`")
#: Files that are made at run time (or by a command) and so are never in the repository.
MADE_AT_RUN_TIME = {
    "db.sqlite3",
    "engine.sqlite3",
    ".make-run-secrets",
    ".demo-login",
    ".demo-member",
    ".env",
    "BENCHMARKS.quick.md",
    # backup copies a household makes by the commands docs/deployment.md gives
    "site-copy.sqlite3",
    "engine-copy.sqlite3",
    "engine-YYYYMMDD-HHMMSS.sqlite3",
}


def repository_file_names() -> set[str]:
    """The base name of every file the repository tracks or would (of every file in the tree when
    git cannot tell)."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=ROOT,
            capture_output=True,
            check=True,
        ).stdout.decode()
        paths = [p for p in listed.split("\0") if p]
    except (OSError, subprocess.CalledProcessError):
        skipped = {".git", ".venv", "__pycache__", ".pytest_cache", ".ruff_cache", "staticfiles"}
        paths = [
            str(path)
            for path in ROOT.rglob("*")
            if path.is_file() and not skipped & set(path.relative_to(ROOT).parts)
        ]
    return {PurePosixPath(path).name for path in paths}


def named_files(text: str) -> list[str]:
    """Every file name ``text`` names: each word with a file extension, and each backticked name of
    a file known without one (``Makefile``) or of a dotfile (``.gitignore``)."""
    names = [word.rsplit("/", 1)[-1] for word in FILE_WORD.findall(text)]
    for token in BACKTICKED.findall(text):
        name = token.rstrip(".:;").rsplit("/", 1)[-1]
        bare = name in EXTENSIONLESS_FILES and not token.startswith(("/", "~"))
        dotfile = token.startswith(".") and re.fullmatch(r"\.[a-z][\w-]*", name)
        if bare or (dotfile and name[1:] not in FILE_EXTENSIONS):
            names.append(name)
    return names


def test_file_names_are_found_in_prose_diagrams_and_backticks() -> None:
    text = (
        "see `Makefile`, `.make-run-secrets` and turns.py (not https://x.org/a.py or reply.json())"
    )
    assert named_files(text) == ["turns.py", "Makefile", ".make-run-secrets"]


def test_every_file_a_document_names_exists_somewhere_in_the_repository() -> None:
    known = repository_file_names() | MADE_AT_RUN_TIME
    missing = []
    for document in documents():
        for name in named_files(document.read_text(encoding="utf-8")):
            if name not in known:
                missing.append(f"{document.relative_to(ROOT)}: {name}")
    assert missing == []
