"""The README and docs/ point only at files in the repository, and every module they name exists:
a reader who follows a path or a dotted module name finds it (a fresh clone has no ``../shared``)."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("webui", "pippa_memory", "reference_engine", "provider_doubles", "bench", "tests")
PATH = re.compile(r"(?<![\w./-])((?:" + "|".join(PACKAGES) + r")/[\w/.-]*\w)")
DOTTED = re.compile(
    r"(?<![\w./-])((?:webui|pippa_memory|reference_engine|provider_doubles)(?:\.\w+)+)"
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
