"""The shape of the package (issue 13): no import cycles, no private names imported from
another package, no module or function too long to read.

The import graph is read with :mod:`ast`, not by importing: every ``import`` and
``from ... import`` statement counts, at module level or inside a function (a
function-level import hides a cycle from Python, not from a reader). Imports under
``if TYPE_CHECKING:`` count too.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = "tablesafe"

KNOWN_CYCLES: set[frozenset[str]] = set()
"""Cycles tolerated for now, each as the set of its modules."""

KNOWN_PRIVATE_IMPORTS: set[tuple[str, str, str]] = set()
"""``(importing module, imported module, name)`` triples tolerated for now."""

SIZE_EXCEPTIONS: set[str] = set()
"""Modules (paths under ``src/``) exempt from both size limits for now."""

# over MAX_FUNCTION_LINES when the limit came in (issue 13); each entry went when its
# function was split, and none may be added
FUNCTIONS_TO_SPLIT: set[str] = set()
"""Functions (``path: name``) still over the function limit; no new entry may be added."""

MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 150


# ------------------------------------------------------------------------- the graph
def module_files() -> dict[str, Path]:
    """Every module of the package by its dotted name (packages by their own name)."""
    out = {}
    for path in sorted((SRC / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _is_package(name: str, modules: dict[str, Path]) -> bool:
    return modules[name].name == "__init__.py"


def _resolve(module: str, node: ast.ImportFrom, modules: dict[str, Path]) -> str | None:
    """The absolute module a ``from ... import`` names (relative imports resolved)."""
    if not node.level:
        return node.module
    base = module.split(".")
    if not _is_package(module, modules):
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imports_of(module: str, modules: dict[str, Path]) -> Iterator[tuple[str, str | None, int]]:
    """``(imported module, imported name or None, line)`` for every import in ``module``.

    ``from a.b import c`` gives ``(a.b.c, None)`` when ``a.b.c`` is a module of the
    package, else ``(a.b, "c")``.
    """
    tree = ast.parse(modules[module].read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, None, node.lineno
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(module, node, modules)
            if target is None:
                continue
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                if sub in modules:
                    yield sub, None, node.lineno
                else:
                    yield target, alias.name, node.lineno


def import_graph() -> dict[str, set[str]]:
    """Module -> the package's modules it imports (outside modules left out)."""
    modules = module_files()
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for m in modules:
        for target, _, _ in imports_of(m, modules):
            if target in modules and target != m:
                graph[m].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(frozenset(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def _top_package(module: str, modules: dict[str, Path]) -> str:
    """The subpackage a module belongs to (``tablesafe.audit`` for
    ``tablesafe.audit.block``; top-level modules are their own package)."""
    parts = module.split(".")
    if len(parts) >= 2 and _is_package(".".join(parts[:2]), modules):
        return ".".join(parts[:2])
    return module


# ------------------------------------------------------------------------------ tests
def test_the_graph_sees_function_level_imports() -> None:
    graph = import_graph()
    # cli/main imports the API inside its command bodies only
    assert any(t.startswith("tablesafe.") for t in graph["tablesafe.cli.main"])
    assert "tablesafe.suppress.dispatch" in graph["tablesafe.suppress"]


def test_no_import_cycles() -> None:
    found = [c for c in cycles(import_graph()) if c not in KNOWN_CYCLES]
    assert not found, "import cycles: " + "; ".join(" <-> ".join(sorted(c)) for c in found)


def test_known_cycles_still_exist() -> None:
    """A known cycle that is gone must leave :data:`KNOWN_CYCLES`."""
    found = set(cycles(import_graph()))
    assert KNOWN_CYCLES <= found, f"no longer cycles, delete them: {KNOWN_CYCLES - found}"


def test_no_private_names_from_other_packages() -> None:
    modules = module_files()
    bad = []
    for m in modules:
        for target, name, line in imports_of(m, modules):
            if target not in modules:
                continue
            private = [p for p in ([name] if name else []) + target.split(".") if p.startswith("_")
                       and not p.startswith("__")]
            if not private or _top_package(target, modules) == _top_package(m, modules):
                continue
            if (m, target, name or "") in KNOWN_PRIVATE_IMPORTS:
                continue
            bad.append(f"{m} line {line}: {target}{'.' + name if name else ''}")
    assert not bad, "private names imported from another package: " + "; ".join(bad)


# ------------------------------------------------------------------------------ sizes
def _too_long() -> tuple[list[str], list[str]]:
    """Modules over :data:`MAX_MODULE_LINES` and functions over :data:`MAX_FUNCTION_LINES`
    (``path (n lines)`` and ``path: name (n lines)``)."""
    modules, functions = [], []
    for path in sorted((SRC / PACKAGE).rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel in SIZE_EXCEPTIONS:
            continue
        text = path.read_text(encoding="utf-8")
        lines = len(text.splitlines())
        if lines > MAX_MODULE_LINES:
            modules.append(f"{rel} ({lines} lines)")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = (node.end_lineno or node.lineno) - node.lineno + 1
                if n > MAX_FUNCTION_LINES and f"{rel}: {node.name}" not in FUNCTIONS_TO_SPLIT:
                    functions.append(f"{rel}: {node.name} ({n} lines)")
    return modules, functions


def test_no_module_over_the_size_limit() -> None:
    modules, _ = _too_long()
    assert not modules, f"modules over {MAX_MODULE_LINES} lines: " + "; ".join(modules)


def test_no_function_over_the_size_limit() -> None:
    _, functions = _too_long()
    assert not functions, f"functions over {MAX_FUNCTION_LINES} lines: " + "; ".join(functions)


def test_functions_to_split_are_still_long() -> None:
    """A function split below the limit must leave :data:`FUNCTIONS_TO_SPLIT`."""
    long = set()
    for entry in FUNCTIONS_TO_SPLIT:
        rel, name = entry.split(": ")
        tree = ast.parse((SRC / rel).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and node.name == name and \
                    (node.end_lineno or node.lineno) - node.lineno + 1 > MAX_FUNCTION_LINES:
                long.add(entry)
    assert long == FUNCTIONS_TO_SPLIT, f"no longer too long, delete them: {FUNCTIONS_TO_SPLIT - long}"
