"""The tests share code only through ``tests/support`` (and take the settings modules by name):
no module under ``tests/`` imports a test module or a conftest, at module level or inside a
function, so each test file can be read, moved or deleted on its own, and a fixture is taken by
its name from a ``conftest.py``, never imported."""

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
#: The parts of the tests package any module under ``tests/`` may import.
ALLOWED = ("tests.support", "tests.settings", "tests.settings_host_only")


def imported_modules(tree: ast.AST, package: str) -> list[tuple[int, str]]:
    """Every module ``tree`` (a module of ``package``) imports, as (line, dotted name), at any
    depth; relative imports are resolved, and for ``from tests import x`` each name is counted
    as the module ``tests.x``."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            parts = package.split(".")
            parent = ".".join(parts[: len(parts) - node.level + 1]) if node.level else ""
            module = ".".join(part for part in (parent, node.module or "") if part)
            if node.module:
                found.append((node.lineno, module))
            if module == "tests" or not node.module:
                found += [(node.lineno, f"{module}.{alias.name}") for alias in node.names]
    return found


def is_allowed(module: str) -> bool:
    if module != "tests" and not module.startswith("tests."):
        return True  # not the tests' own code
    if module == "tests":
        return True  # the package itself: what it names is checked one by one
    return any(module == allowed or module.startswith(f"{allowed}.") for allowed in ALLOWED)


def forbidden_imports(root: Path = TESTS) -> list[str]:
    """``file:line module`` for each import, under ``root``, of a tests module outside
    :data:`ALLOWED`."""
    found = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        package = ".".join(path.relative_to(root.parent).parent.parts)
        for line, module in imported_modules(tree, package):
            if not is_allowed(module):
                found.append(f"{path.relative_to(root.parent)}:{line} {module}")
    return found


def test_no_module_under_tests_imports_a_test_module_or_a_conftest() -> None:
    found = forbidden_imports()
    assert not found, "import these from tests/support (or take the fixture by name):\n" + (
        "\n".join(found)
    )


def test_the_check_sees_imports_at_module_level_and_inside_functions(tmp_path: Path) -> None:
    folder = tmp_path / "tests"
    folder.mkdir()
    (folder / "test_example.py").write_text(
        "from tests.support.live_servers import ROOT\n"
        "import tests.settings\n"
        "from tests.webui.conftest import RecordingTool\n"
        "from tests import conftest\n"
        "from .conftest import TOKEN\n"
        "\n"
        "def test_inner():\n"
        "    import tests.reliability.test_two_sites\n"
        "    from tests.support import households\n",
        encoding="utf-8",
    )

    assert forbidden_imports(folder) == [
        "tests/test_example.py:3 tests.webui.conftest",
        "tests/test_example.py:4 tests.conftest",
        "tests/test_example.py:5 tests.conftest",
        "tests/test_example.py:8 tests.reliability.test_two_sites",
    ]
