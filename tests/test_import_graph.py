"""The library's modules import each other without a cycle, so its layers read bottom-up
(data -> scores -> structure -> classifiers -> evaluation ...) and no module can meet another
half-initialised.

Every import statement of ``bnma_core`` counts, one deferred into a function too (it runs,
only later), and importing ``a.b.c`` also runs the packages ``a.b`` and ``a``. Two kinds do not
count: imports under ``if TYPE_CHECKING:`` (never run) and imports inside a module's
``__getattr__`` (PEP 562), which keep a name importable from its former home (e.g.
``bnma_core.data.informative_features``, now in :mod:`bnma_core.scores`)."""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx
from conftest import ROOT


def _modules(root: Path, package: str) -> dict[str, tuple[Path, bool]]:
    """Dotted module name -> (file, is a package) for every module of ``package``."""
    out = {}
    for f in (root / package).rglob("*.py"):
        parts = list(f.relative_to(root).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        out[".".join(parts[:-1] if is_package else parts)] = (f, is_package)
    return out


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(body: list[ast.stmt]) -> list[ast.Import | ast.ImportFrom]:
    """The import statements that run: at module level, in functions and classes, in
    ``try`` / ``if`` / ``with`` blocks; not under ``if TYPE_CHECKING:`` nor in ``__getattr__``."""
    found = []
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
        elif isinstance(node, ast.If) and _is_type_checking(node.test):
            found += _imports(node.orelse)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                and node.name == "__getattr__":
            continue
        else:
            for field in ("body", "orelse", "finalbody", "handlers"):
                sub = getattr(node, field, None)
                if isinstance(sub, list):
                    found += _imports(sub)
    return found


def _targets(node: ast.Import | ast.ImportFrom, module: str, is_package: bool,
             modules: dict) -> list[str]:
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if node.level:
        base = module.split(".") if is_package else module.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    return [target] + [f"{target}.{a.name}" for a in node.names
                       if f"{target}.{a.name}" in modules]


def import_graph(root: Path = ROOT, package: str = "bnma_core") -> nx.DiGraph:
    """Edges importer -> imported module (and the imported module's packages that are not the
    importer's own), over the modules of ``package``."""
    modules = _modules(root, package)
    graph = nx.DiGraph()
    for module, (path, is_package) in modules.items():
        graph.add_node(module)
        for node in _imports(ast.parse(path.read_text(encoding="utf-8")).body):
            for target in _targets(node, module, is_package, modules):
                parts = target.split(".")
                for i in range(1, len(parts) + 1):
                    name = ".".join(parts[:i])
                    own = name == module or module.startswith(name + ".")
                    if name in modules and not own:
                        graph.add_edge(module, name)
    return graph


def _cycles(graph: nx.DiGraph) -> list[list[str]]:
    return [sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1]


def test_no_import_cycle_in_the_library():
    graph = import_graph()
    assert _cycles(graph) == [], "modules that import each other (directly or through others)"


def test_the_graph_sees_relative_deferred_and_package_imports():
    graph = import_graph()
    assert graph.has_edge("bnma_core.scores", "bnma_core.data")
    assert graph.has_edge("bnma_core.data.loaders", "bnma_core.data.preparation")
    assert graph.has_edge("bnma_core.scores", "bnma_core.kernels")  # via kernels.counting
    assert graph.has_edge("bnma_core.cli", "bnma_core.data.spec")  # deferred, in a function
    assert not graph.has_edge("bnma_core.data", "bnma_core.scores")  # the former cycle


def _package(tmp_path: Path, a: str, b: str) -> nx.DiGraph:
    pkg = tmp_path / "pkg"
    pkg.mkdir(exist_ok=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text(a)
    (pkg / "b.py").write_text(b)
    return import_graph(tmp_path, "pkg")


def test_a_deferred_import_closing_a_loop_is_a_cycle(tmp_path):
    deferred = "X = 1\n\ndef f():\n    from .a import X\n    return X\n"
    assert _cycles(_package(tmp_path, "from . import b\n", deferred)) == [["pkg.a", "pkg.b"]]
    assert _cycles(_package(tmp_path, "import pkg.b\n", "from pkg import a\n")) \
        == [["pkg.a", "pkg.b"]]


def test_type_checking_and_getattr_imports_are_not_edges(tmp_path):
    b = ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import X\n\n"
         "def __getattr__(name):\n    from .a import Y\n    return Y\n")
    assert _cycles(_package(tmp_path, "from . import b\n", b)) == []
