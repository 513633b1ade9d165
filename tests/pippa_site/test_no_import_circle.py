"""No import circle among the benchmark scripts, not even a hidden one: every import counts,
function-local and ``TYPE_CHECKING`` ones too (STYLE.md: move the shared piece down a level
instead). The packages are held by the import contracts in ``pyproject.toml`` (import-linter,
``make lint``); the bench scripts import their siblings by bare name and are no package, so this
test holds them.

The graph is read from the source (``ast``), not from what Python happened to import, so an
import inside a function body is an edge like any other. ``from package import name`` counts as
an import of ``package.name`` when that is a module, and of ``package`` either way. The bench
scripts import their siblings by bare name (``from _report import figure``): those count too.
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: What this test reads: the benchmark scripts.
SHIPPED = ("bench",)


def module_files() -> dict[str, Path]:
    """Each shipped module's dotted name and file."""
    modules = {}
    for package in SHIPPED:
        for path in (ROOT / package).rglob("*.py"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


def imported_names(module: str, path: Path) -> set[str]:
    """Every dotted name ``module`` imports, anywhere in its file."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package
                for _ in range(node.level - 1):
                    anchor = anchor.rpartition(".")[0]
                base = f"{anchor}.{base}" if base else anchor
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    if module.startswith("bench."):
        names |= {f"bench.{name}" for name in names}  # the scripts' sibling imports
    return names


def import_graph() -> dict[str, set[str]]:
    """Each shipped module and the shipped modules it imports."""
    modules = module_files()

    def owner(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph = {}
    for module, path in modules.items():
        targets = {owner(name) for name in imported_names(module, path)}
        graph[module] = {target for target in targets if target and target != module}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for target in edges:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def test_the_checker_finds_a_circle_and_an_import_hidden_in_a_function(tmp_path: Path) -> None:
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []
    hidden = tmp_path / "late.py"
    hidden.write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from webui import models\n"
        "def later():\n    from webui.conf import webui_settings\n"
    )
    assert {"webui.models", "webui.conf"} <= imported_names("late", hidden)


@pytest.mark.parametrize("package", SHIPPED)
def test_no_import_circle_touches_the_package(package: str) -> None:
    graph = import_graph()
    touching = [
        component
        for component in circles(graph)
        if any(member == package or member.startswith(f"{package}.") for member in component)
    ]
    described = [
        {member: sorted(graph[member] & set(component)) for member in component}
        for component in touching
    ]
    assert touching == [], (
        f"import circles (each module -> what it imports in the circle): {described}"
    )
