"""The house's layers: ubpe's import graph has no cycle and no edge that goes up.

Every ``import`` in ``ubpe/`` counts, also inside functions and under ``TYPE_CHECKING``: a
deferred import still ties two modules together at run time. Each module belongs to one
layer of :data:`LAYERS` (a folder is one stage; the flat modules of our own data flow each
sit where they are used); a module may import its own layer's modules and lower layers only.
Inside a layer the module graph must have no cycle either.

Run as a script to print the graph, one module per line with the modules it imports::

    python tests/spec/test_layers.py
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "ubpe"

#: bottom to top; a name is a module (``fit``) or a folder (``models``) of ``ubpe``
LAYERS: list[tuple[str, ...]] = [
    ("__init__", "__main__"),  # the package root wires the hooks (see ubpe._hooks); nothing imports it back
    ("errors", "_version", "_lazy", "_fntools", "_hooks", "threads", "files", "tables_cache"),  # no stage: shared by all
    ("text",),  # normalizers, pre-tokenizers, special tokens, byte tables
    ("alphabet", "vocabulary"),  # symbols <-> base ids; the fitted vocabulary
    ("known_words", "splitting", "pieces"),  # our split pipeline (on text's patterns); id <-> piece tables
    ("fit",),  # corpus -> Vocabulary (scale-out through a hook)
    ("encoders",),  # parts -> encodings, one module per encoder
    ("models",),  # the tokenizer families
    ("io",),  # file formats: read into models, write them back
    ("view",),  # token boundaries in a terminal or a page
    ("distributed",),  # Dask: fit on a Bag, encode a collection
    ("cli", "lab", "integrations"),  # the command line; the experiments engine (`ubpe experiment`); transformers, datasets
]
# the root package and __main__ sit on top, whatever their place in the list: they compose
TOP = {"__init__", "__main__"}


def layer_of(module: str) -> int:
    """The layer of ``ubpe.<module>`` (dotted below ``ubpe``)."""
    head = module.split(".")[0]
    if module in TOP:
        return len(LAYERS)
    for level, names in enumerate(LAYERS):
        if head in names:
            return level
    raise KeyError(f"ubpe.{module} is in no layer: add it to LAYERS in {Path(__file__).name}")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    if parts[-1] == "__init__" and len(parts) > 1:
        parts.pop()
    return ".".join(parts)


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> list[str]:
    """The ubpe modules a ``from ... import ...`` names (a name may be a submodule)."""
    if node.level:
        base = module.split(".") if is_package else module.split(".")[:-1]
        if module == "__init__":
            base = []
        base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
        target = ".".join(base + ([node.module] if node.module else []))
    elif node.module and (node.module == "ubpe" or node.module.startswith("ubpe.")):
        target = node.module[len("ubpe."):] if node.module != "ubpe" else ""
    else:
        return []
    found = []
    for alias in node.names:
        sub = f"{target}.{alias.name}" if target else alias.name
        found.append(sub if _exists(sub) else target)
    return [t for t in found if t]


def _exists(module: str) -> bool:
    path = PACKAGE.joinpath(*module.split("."))
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def import_graph() -> dict[str, set[str]]:
    """``module -> the ubpe modules it imports`` (dotted below ``ubpe``), every import counted."""
    graph: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        module = module_name(path)
        is_package = path.name == "__init__.py"
        edges: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                edges.update(_resolve(module, is_package, node))
            elif isinstance(node, ast.Import):
                edges.update(a.name[len("ubpe."):] for a in node.names if a.name.startswith("ubpe."))
        edges.discard(module)
        graph[module] = {e for e in edges if _exists(e)}
    return graph


def upward_edges(graph: dict[str, set[str]]) -> list[str]:
    return [f"ubpe.{a} (layer {layer_of(a)}) imports ubpe.{b} (layer {layer_of(b)})"
            for a, targets in sorted(graph.items()) for b in sorted(targets)
            if layer_of(b) > layer_of(a) and not (b in TOP and a in TOP)]


def module_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan), a package's ``__init__``
    counted as its own module; the root package is left out (it composes, nothing imports it
    back but its own submodules' ``from .. import`` of a sibling, which is an edge to the
    sibling, not to the root)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]
    nodes = {m for m in graph if m not in TOP}

    def strong(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in nodes:
                continue
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))
    try:
        for v in sorted(nodes):
            if v not in index:
                strong(v)
    finally:  # the process's limit is not this test's to keep (the JSON readers' depth errors rely on it)
        sys.setrecursionlimit(limit)
    return out


def test_every_module_has_a_layer():
    for module in import_graph():
        layer_of(module)


def test_no_import_goes_up_a_layer():
    assert upward_edges(import_graph()) == []


def test_no_import_cycle_between_modules():
    assert module_cycles(import_graph()) == []


def private_imports(source: str) -> list[str]:
    """The private names a test file imports: the kernels (``ubpe_native``), or a module or name
    of ``ubpe`` whose dotted path has a part starting with ``_`` (dunders aside). The test layers
    (issue 23): the specification tests use the public API only; the kernels' entry points are
    tested in ``tests/kernels``."""

    def private(name: str) -> bool:
        root, *parts = name.split(".")
        return root == "ubpe_native" or (
            root == "ubpe" and any(p.startswith("_") and not p.endswith("__") for p in parts)
        )

    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if private(alias.name)}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if private(node.module):
                found.add(node.module)
            else:
                found |= {f"{node.module}.{a.name}" for a in node.names if private(f"{node.module}.{a.name}")}
    return sorted(found)


def test_the_specification_tests_import_no_private_module():
    found = {path.name: private_imports(path.read_text()) for path in sorted(Path(__file__).parent.glob("*.py"))}
    assert {name: modules for name, modules in found.items() if modules} == {}


def test_the_checks_can_fail():
    """The checks see a deferred import, an upward edge and a cycle in a made-up graph."""
    graph = {"fit": {"models.ubpe"}, "models.ubpe": {"fit"}, "text.patterns": set()}
    assert upward_edges(graph) == ["ubpe.fit (layer 5) imports ubpe.models.ubpe (layer 7)"]
    assert module_cycles(graph) == [["fit", "models.ubpe"]]
    source = "def f():\n    from ..models.ubpe import UBPE\n"
    node = next(n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.ImportFrom))
    assert _resolve("encoders.tfidf", False, node) == ["models.ubpe"]
    source = ("import ubpe_native._fit\nfrom ubpe.encoders._base import Encoder\nfrom ubpe import _hooks, __version__\n"
              "from ubpe.io import gguf\nimport ubpe.text.patterns\n")
    assert private_imports(source) == ["ubpe._hooks", "ubpe.encoders._base", "ubpe_native._fit"]


if __name__ == "__main__":
    graph = import_graph()
    for module, targets in sorted(graph.items(), key=lambda item: (layer_of(item[0]), item[0])):
        print(f"[{layer_of(module):2d}] ubpe.{module}" + (" -> " + ", ".join(sorted(targets)) if targets else ""))
    problems = upward_edges(graph) + [" <-> ".join(c) for c in module_cycles(graph)]
    print("\n".join(problems) if problems else "no cycle, no upward edge")
    sys.exit(1 if problems else 0)
