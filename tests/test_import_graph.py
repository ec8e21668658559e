"""The package's modules import each other without circles, and each layer imports only itself and
the layers below it (docs/architecture.md).

The rule, read from the source with :mod:`ast` (nothing is imported):

* every ``import`` statement counts, wherever it is: at module level, inside functions and methods
  (the lazy imports), under ``if``/``try`` (``TYPE_CHECKING`` blocks too);
* an edge goes from the importing module to the imported module. ``import gpude.a.b`` and
  ``from gpude.a import b`` name the module ``gpude.a.b`` when it is one; ``from gpude.a import
  name`` names ``gpude.a`` otherwise; relative imports are resolved against the importing module's
  package. A package's ``__init__.py`` is the package's node;
* no edge is added from a module to the packages above it, although Python runs their
  ``__init__.py`` first: a package's ``__init__`` that imports its own submodules is the usual
  layout, not a circle;
* a name handed to :func:`importlib.import_module` is no import statement and is not seen: that is
  how the registries refer to what plugs into them from above (implementation classes, algorithm
  parameters, the functions' problem families), by name, loaded on first use.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"

#: the layers, lowest first (docs/architecture.md): each a folder of the package (the library's
#: layers are its five folders); ``gpude`` itself (the composition root), ``gpude.cli`` and
#: ``gpude.__main__`` are the only modules outside one
LAYERS = {
    "gpude.core": 0,
    "gpude.problems": 1, "gpude.cecdata": 1,
    "gpude.functions": 2,
    "gpude.algorithms": 3,
    "gpude.implementations": 4, "gpude.stats": 4,
    "gpude.run": 5,
    "gpude.study": 6,
    "gpude.campaign": 7,
    "gpude.report": 8,
    "gpude.cli": 9, "gpude.__main__": 9,
}
LAYER_NAMES = ["core", "problems", "functions", "algorithms", "implementations", "run", "study", "campaign",
               "report", "cli"]


def module_nodes(src: Path, package: str = "gpude") -> dict[str, tuple[Path, bool]]:
    """``module name -> (file, is a package)`` for every module under ``src/package``."""
    nodes = {}
    for path in sorted((src / package).rglob("*.py")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        nodes[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return nodes


def import_edges(src: Path, package: str = "gpude") -> dict[str, set[str]]:
    """``module -> the package modules it imports`` (the rule of the module docstring)."""
    nodes = module_nodes(src, package)

    def known(name: str) -> str | None:
        while name and name not in nodes:  # gpude.x.attribute -> gpude.x
            name = name.rpartition(".")[0]
        return name or None

    edges: dict[str, set[str]] = {m: set() for m in nodes}
    for module, (path, is_package) in nodes.items():
        here = module if is_package else module.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = here.split(".")[: len(here.split(".")) - (node.level - 1)]
                    origin = ".".join(base + ([node.module] if node.module else []))
                else:
                    origin = node.module or ""
                targets = [f"{origin}.{a.name}" if f"{origin}.{a.name}" in nodes else origin for a in node.names]
            for target in targets:
                if target == package or target.startswith(package + "."):
                    found = known(target)
                    if found and found != module:
                        edges[module].add(found)
    return edges


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def describe(component: list[str], edges: dict[str, set[str]]) -> str:
    inside = set(component)
    return "; ".join(f"{m} -> {', '.join(sorted(edges[m] & inside))}" for m in component)


def layer(module: str) -> int:
    prefixes = [p for p in LAYERS if module == p or module.startswith(p + ".")]
    if not prefixes:
        raise LookupError(f"{module} lies in no layer's folder")
    return LAYERS[max(prefixes, key=len)]


def test_every_module_lies_in_a_layers_folder():
    """A new module's layer is its folder's, never a guess: no module lies loose in ``src/gpude``."""
    loose = [m for m in module_nodes(SRC) if m != "gpude" and not any(m == p or m.startswith(p + ".") for p in LAYERS)]
    assert not loose, f"modules outside the layers' folders: {loose} (move each into its layer's folder)"


def test_no_import_circle_in_the_package():
    edges = import_edges(SRC)
    assert len(edges) > 80  # the walk found the package
    found = circles(edges)
    assert not found, "import circles: " + " | ".join(describe(c, edges) for c in found)


def test_each_layer_imports_only_itself_and_the_layers_below():
    """E.g. gpude.problems never imports gpude.functions; the root package ``gpude`` (the
    composition root that plugs the functions into the problem registry, and ``__version__``) is
    exempt."""
    edges = import_edges(SRC)
    upward = [f"{m} ({LAYER_NAMES[layer(m)]}) -> {t} ({LAYER_NAMES[layer(t)]})"
              for m in sorted(edges) for t in sorted(edges[m])
              if "gpude" not in (m, t) and layer(t) > layer(m)]
    assert not upward, "imports against the layers: " + "; ".join(upward)


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = tmp_path / "gpude" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


@pytest.mark.parametrize("files,expected", [
    # a lazy import inside a function closes the circle as much as a module-level one
    ({"__init__.py": "", "a.py": "from .b import f\n", "b.py": "def f():\n    from . import a\n"},
     [["gpude.a", "gpude.b"]]),
    # absolute imports, a subpackage and "from package import module"
    ({"__init__.py": "", "x/__init__.py": "from gpude.x import y\n", "x/y.py": "import gpude.z\n",
      "z.py": "from gpude import x\n"},
     [["gpude.x", "gpude.x.y", "gpude.z"]]),
    # a package's __init__ importing its submodules, which import each other in one direction: no circle
    ({"__init__.py": "from . import a, b\n", "a.py": "from .b import f\n", "b.py": "def f():\n    pass\n"}, []),
])
def test_the_circle_finder_sees_what_it_must(tmp_path, files, expected):
    assert circles(import_edges(_package(tmp_path, files))) == expected


def test_the_layers_are_drawn_in_the_docs_and_linked_from_the_readme():
    """docs/architecture.md names every top-level module and package of the layers, the README links
    it and shows `gpude problems`."""
    root = SRC.parent
    text = (root / "docs" / "architecture.md").read_text()
    top = sorted({m.split(".")[1] for m in module_nodes(SRC) if m.count(".") >= 1})
    missing = [name for name in top if name not in ("__main__",) and name + ".py" not in text
               and name + "/" not in text]
    assert not missing, f"docs/architecture.md does not place {missing} in a layer"
    assert "core -> problems -> functions -> algorithms -> implementations -> run -> study -> campaign -> report" \
        in (root / "README.md").read_text().replace("\n  ", " ")
    readme = (root / "README.md").read_text()
    assert "(docs/architecture.md)" in readme and "gpude problems" in readme
