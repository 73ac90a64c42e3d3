"""The layers of the package, read from its source with `ast` (nothing is imported, no network).

tokexplorer has five parts (see the package docstring): `core` < `server` < `gui`, and beside them
`cli` and `bench`. The rules, one test each:

- core imports no Qt (PySide6, shiboken6, pyqtgraph) and nothing of server, gui, cli or bench;
- server imports core only (and the standard library, numpy, the tokenizer libraries), never gui,
  cli, bench or Qt;
- gui never imports cli or bench;
- cli imports core, and gui only where it exists for the window, and only inside a function
  (`CLI_INTO_GUI`): `gui.app` to start the window, `gui.widgets.figures` to draw a plot offscreen
  to a PNG with the same figure code the window's plot panel uses (design §10: "the same figure can
  be written offscreen to a PNG for the command line"). No Qt of its own;
- bench imports core and server; gui only inside a function (the drivers of `bench --gui` run in
  a child process that loads the window); never cli, never Qt itself;
- every part may import the root package `tokexplorer` (its version), which imports nothing.
- no circles: none between parts (every import counted, lazy ones too), and none between modules;
- no module imports another module's private (underscored) name.

subtle: for the circles between modules only module-level imports count, not those inside a
function body nor under `if TYPE_CHECKING:`. A function's import runs when the function is called,
after every module it names has finished importing, so it cannot meet a half-initialised module;
that is how heavy libraries (tiktoken, Qt) are loaded on first use, how `core/__init__` offers its
names lazily, and how a backend reaches the analysis it reports (`merge_tree`). A TYPE_CHECKING
import never runs. Both still count for the layers: a lazy import of a higher part is still an
upward dependency.

tests/core/test_core_is_pure.py stays beside this: it imports every core module in a fresh
interpreter and looks at `sys.modules`, which also catches what a static reading cannot (an
`importlib.import_module` of a computed name, a library that pulls Qt in).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

import tokexplorer

PACKAGE = Path(tokexplorer.__file__).parent
PARTS = ("core", "server", "gui", "cli", "bench")
QT = frozenset({"PySide6", "shiboken6", "pyqtgraph"})

# part -> the parts it may import anywhere, and those it may import only inside a function
ALLOWED = {
    "core": ({"core"}, set()),
    "server": ({"core", "server"}, set()),
    "gui": ({"core", "server", "gui"}, set()),
    "cli": ({"core", "cli"}, {"gui"}),
    "bench": ({"core", "server", "bench"}, {"gui"}),
}
CLI_INTO_GUI = frozenset({"tokexplorer.gui.app", "tokexplorer.gui.widgets.figures"})
MAY_IMPORT_QT = frozenset({"gui"})


@dataclass(frozen=True)
class Import:
    """One import statement's target, as seen in the importing module's source."""

    importer: str  # dotted module name
    target: str  # dotted module name imported (a package's submodule when `from pkg import mod`)
    line: int
    lazy: bool  # inside a function body: runs on call, not on import
    type_only: bool  # under `if TYPE_CHECKING:`: never runs


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def imports_of(source: str, module: str, is_package: bool, known: set[str]) -> list[Import]:
    """Every import in a module's source, with where it runs. `known`: the package's modules, to
    tell `from pkg import submodule` from `from pkg import name`."""
    found: list[Import] = []
    package = module if is_package else module.rpartition(".")[0]

    def visit(node: ast.AST, lazy: bool, type_only: bool) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            lazy = True
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.body:
                visit(child, lazy, True)
            for child in node.orelse:
                visit(child, lazy, type_only)
            return
        if isinstance(node, ast.Import):
            for alias in node.names:
                found.append(Import(module, alias.name, node.lineno, lazy, type_only))
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: resolved against the importing package
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            found.append(Import(module, base, node.lineno, lazy, type_only))
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                if sub in known:
                    found.append(Import(module, sub, node.lineno, lazy, type_only))
        for child in ast.iter_child_nodes(node):
            visit(child, lazy, type_only)

    visit(ast.parse(source), False, False)
    return found


def package_imports(root: Path = PACKAGE) -> list[Import]:
    """Every import of every module of the package under `root`."""
    files = {module_name(p, root): p for p in sorted(root.rglob("*.py"))}
    known = set(files)
    out: list[Import] = []
    for name, path in files.items():
        out += imports_of(path.read_text("utf-8"), name, path.name == "__init__.py", known)
    return out


def part_of(module: str) -> str | None:
    """The part a tokexplorer module belongs to ("core", ...), "" for the root package and
    `__main__`, None for a module of another distribution."""
    pieces = module.split(".")
    if pieces[0] != "tokexplorer":
        return None
    return pieces[1] if len(pieces) > 1 and pieces[1] in PARTS else ""


def layer_violations(imports: list[Import]) -> list[str]:
    """Each import that breaks a rule of the module docstring, as 'importer:line -> target (why)'."""
    bad = []
    for imp in imports:
        src, dst = part_of(imp.importer), part_of(imp.target)
        where = f"{imp.importer}:{imp.line} -> {imp.target}"
        if src is None or src == "":
            if src == "" and imp.importer == "tokexplorer" and dst is not None:
                bad.append(f"{where} (the root package imports nothing of its parts)")
            continue
        if dst is None:
            if imp.target.split(".")[0] in QT and src not in MAY_IMPORT_QT:
                bad.append(f"{where} ({src} imports no Qt)")
            continue
        if dst == "" and imp.target in ("tokexplorer", "tokexplorer.__main__"):
            if imp.target == "tokexplorer":
                continue  # the version
            bad.append(f"{where} (nothing imports __main__)")
            continue
        anywhere, lazily = ALLOWED[src]
        if dst in anywhere:
            continue
        if dst in lazily and imp.lazy and (src != "cli" or imp.target in CLI_INTO_GUI):
            continue
        if dst in lazily and not imp.lazy:
            bad.append(f"{where} ({src} may import {dst} only inside a function)")
        else:
            bad.append(f"{where} ({src} does not import {dst})")
    return bad


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (or a node importing itself):
    each is a circle of imports. Tarjan's algorithm, iterative.

    >>> cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}})
    [['a', 'b']]
    """
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    nodes = sorted(set(edges) | {t for ts in edges.values() for t in ts})
    counter = 0
    for start in nodes:
        if start in index:
            continue
        work = [(start, iter(sorted(edges.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
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
                if len(component) > 1 or node in edges.get(node, ()):
                    found.append(sorted(component))
    return sorted(found)


def module_graph(imports: list[Import]) -> dict[str, set[str]]:
    """tokexplorer module -> the tokexplorer modules it imports when it is imported itself."""
    edges: dict[str, set[str]] = {}
    for imp in imports:
        if imp.lazy or imp.type_only or part_of(imp.target) is None or imp.target == imp.importer:
            continue
        edges.setdefault(imp.importer, set()).add(imp.target)
    # (Importing a.b.c runs a/__init__ first too; those implied edges are left out: a package is
    # in sys.modules before its __init__ runs, so a submodule reaching back to it is no circle.)
    return edges


def part_graph(imports: list[Import]) -> dict[str, set[str]]:
    """part -> the parts it imports, counting every import (lazy and type-only ones too)."""
    edges: dict[str, set[str]] = {}
    for imp in imports:
        src, dst = part_of(imp.importer), part_of(imp.target)
        if src and dst and src != dst:
            edges.setdefault(src, set()).add(dst)
    return edges


@pytest.fixture(scope="module")
def imports() -> list[Import]:
    return package_imports()


# --- the package ---------------------------------------------------------------------------------


def test_the_reader_sees_the_package(imports):
    """A guard for the guards: the reader finds the parts and their known imports (a reader
    that saw nothing would pass every rule)."""
    importers = {part_of(i.importer) for i in imports}
    assert set(PARTS) <= importers
    assert any(i.importer == "tokexplorer.cli.main" and i.target == "tokexplorer.gui.app" and i.lazy
               for i in imports)
    assert any(i.importer.startswith("tokexplorer.gui.") and i.target.startswith("PySide6") for i in imports)
    assert any(i.importer == "tokexplorer.core.tokenizer" and i.type_only for i in imports)


@pytest.mark.parametrize("part", PARTS)
def test_each_part_imports_only_what_its_layer_allows(imports, part):
    assert [v for v in layer_violations(imports) if v.startswith(f"tokexplorer.{part}")] == []


def test_the_root_package_and_main_obey_the_rules(imports):
    assert [v for v in layer_violations(imports)
            if v.startswith(("tokexplorer:", "tokexplorer.__main__:"))] == []


def test_no_circle_between_parts(imports):
    assert cycles(part_graph(imports)) == []


def test_no_circle_between_modules(imports):
    assert cycles(module_graph(imports)) == []


def private_imports(source: str, module: str, known: set[str]) -> list[str]:
    """Each `from tokexplorer.x import _name` that takes a private name of another module (a
    private module of the importer's own package, such as a compiled extension, is its own).

    >>> private_imports("from tokexplorer.core.a import _helper", "tokexplorer.core.b", set())
    ['tokexplorer.core.b:1 -> tokexplorer.core.a._helper']
    >>> private_imports("from tokexplorer.core import _ext", "tokexplorer.core.b", {"tokexplorer.core._ext"})
    []
    """
    found = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("tokexplorer")):
            continue
        for alias in node.names:
            if not alias.name.startswith("_") or alias.name.startswith("__") or node.module == module:
                continue
            own_module = f"{node.module}.{alias.name}" in known and module.rpartition(".")[0] == node.module
            if not own_module:
                found.append(f"{module}:{node.lineno} -> {node.module}.{alias.name}")
    return found


def test_no_module_imports_a_private_name_of_another():
    """A leading underscore means "this module's own": another module asks through a public name
    (the same rule for attributes, `tok._sp`, is kept by review: it needs types to check)."""
    files = {module_name(p, PACKAGE): p for p in sorted(PACKAGE.rglob("*.py"))}
    # compiled extensions are modules too (their C source in a checkout, the built library once built)
    extensions = {module_name(p.with_name(p.name.split(".")[0] + ".py"), PACKAGE)
                  for pattern in ("*.c", "*.so", "*.pyd") for p in PACKAGE.rglob(pattern)}
    assert [hit for name, path in files.items()
            for hit in private_imports(path.read_text("utf-8"), name, set(files) | extensions)] == []


# --- the checks fail on a violation --------------------------------------------------------------


def _imp(importer, target, *, lazy=False, type_only=False):
    return Import(importer, target, 1, lazy, type_only)


@pytest.mark.parametrize("violation", [
    _imp("tokexplorer.core.encoding", "PySide6.QtCore"),
    _imp("tokexplorer.core.encoding", "pyqtgraph", lazy=True),
    _imp("tokexplorer.core.registry", "tokexplorer.server.protocol", lazy=True),
    _imp("tokexplorer.core.tokenizer", "tokexplorer.gui.app", type_only=True),
    _imp("tokexplorer.server.documents", "tokexplorer.gui.state"),
    _imp("tokexplorer.server.documents", "tokexplorer.cli.output", lazy=True),
    _imp("tokexplorer.server.process", "PySide6.QtCore", lazy=True),
    _imp("tokexplorer.gui.main_window", "tokexplorer.cli.main", lazy=True),
    _imp("tokexplorer.gui.main_window", "tokexplorer.bench.gui", lazy=True),
    _imp("tokexplorer.cli.main", "tokexplorer.gui.app"),  # at module level
    _imp("tokexplorer.cli.commands.encoding", "tokexplorer.gui.main_window", lazy=True),
    _imp("tokexplorer.cli.main", "PySide6.QtWidgets", lazy=True),
    _imp("tokexplorer.bench.gui", "tokexplorer.gui.bench.typing"),  # at module level
    _imp("tokexplorer.bench.encoding", "tokexplorer.cli.main", lazy=True),
    _imp("tokexplorer", "tokexplorer.core.registry", lazy=True),
    _imp("tokexplorer.core.registry", "tokexplorer.__main__", lazy=True),
], ids=lambda i: f"{i.importer}->{i.target}")
def test_a_violation_is_reported(violation):
    assert layer_violations([violation]) != []


def test_allowed_imports_are_not_reported():
    allowed = [
        _imp("tokexplorer.server.documents", "tokexplorer.core.incremental.encoder"),
        _imp("tokexplorer.gui.app", "PySide6.QtWidgets"),
        _imp("tokexplorer.gui.editor.editor", "tokexplorer.server.protocol"),
        _imp("tokexplorer.cli.main", "tokexplorer.gui.app", lazy=True),
        _imp("tokexplorer.bench.gui", "tokexplorer.gui.bench.typing", lazy=True),
        _imp("tokexplorer.core.encoding", "numpy"),
        _imp("tokexplorer.gui.widgets.about", "tokexplorer"),
    ]
    assert layer_violations(allowed) == []


def test_a_circle_between_parts_is_found():
    graph = part_graph([_imp("tokexplorer.core.a", "tokexplorer.server.b", lazy=True),
                        _imp("tokexplorer.server.b", "tokexplorer.core.a")])
    assert cycles(graph) == [["core", "server"]]


def test_a_circle_between_modules_is_found_and_a_lazy_import_closes_none():
    chain = [_imp("tokexplorer.core.a", "tokexplorer.core.b"), _imp("tokexplorer.core.b", "tokexplorer.core.c"),
             _imp("tokexplorer.core.c", "tokexplorer.core.a")]
    assert cycles(module_graph(chain)) == [["tokexplorer.core.a", "tokexplorer.core.b", "tokexplorer.core.c"]]
    lazy_back = chain[:2] + [_imp("tokexplorer.core.c", "tokexplorer.core.a", lazy=True)]
    typed_back = chain[:2] + [_imp("tokexplorer.core.c", "tokexplorer.core.a", type_only=True)]
    assert cycles(module_graph(lazy_back)) == cycles(module_graph(typed_back)) == []


def test_the_reader_tells_where_an_import_runs():
    source = (
        "from typing import TYPE_CHECKING\n"
        "import tokexplorer.core.a\n"
        "from tokexplorer.core import b\n"
        "from . import c\n"
        "if TYPE_CHECKING:\n"
        "    from tokexplorer.gui import app\n"
        "def f():\n"
        "    import PySide6.QtCore\n"
        "class K:\n"
        "    from tokexplorer.server import protocol\n"
    )
    known = {"tokexplorer.core.a", "tokexplorer.core.b", "tokexplorer.core.c", "tokexplorer.gui.app",
             "tokexplorer.server.protocol"}
    got = {(i.target, i.lazy, i.type_only) for i in imports_of(source, "tokexplorer.core.x", False, known)}
    assert {("tokexplorer.core.a", False, False), ("tokexplorer.core.b", False, False),
            ("tokexplorer.core.c", False, False), ("tokexplorer.gui.app", False, True),
            ("PySide6.QtCore", True, False), ("tokexplorer.server.protocol", False, False)} <= got
