"""The import graph of `codeqa_lsp` reads top to bottom (issue 16).

Layers, bottom first; a module may import its own layer and any layer below it, never one
above (the brief's "config → chunking → index → retrieval → answering → engine → fronts"):

    config, secret_shapes → chunking → index → retrieval → answering → engine
        → server, cli, mcp (the three fronts) → `codeqa_lsp/__main__` (launches the server)

The fronts are siblings and do not import each other, with one kind of exception: the CLI
launches the other fronts (`codeqa mcp` runs the MCP server), so `cli` may import their
entry points, listed in `ENTRY_POINTS`. The bottom two (`config`, `secret_shapes`) may use
each other, one way. Every import counts: module level, inside functions (the lazy imports
that keep start-up fast), and under `if TYPE_CHECKING:` (a type-only import still says
which layer knows about which). Literal `importlib.import_module("codeqa_lsp...")` calls
count too; names built at run time do not.

The parts of the package (its subpackages and top-level modules: `config`, `chunking`,
`index`, ..., `engine`, `server`) must also form a DAG, checked on its own so that a cycle
between two parts of one layer (`config` ↔ `secret_shapes`) fails too. Inside a part,
nested packages use their parent's shared modules by design (`index.pg` reads
`index.tokens`, `answering.providers` returns `answering.model` records), so the graph is
taken at the level of the parts for that check; a second check then forbids cycles between
single modules anywhere, `server/` included.

Pure AST over the source tree beside this test (nothing is imported), so it checks the
checkout it runs in, whatever is installed in the environment.
"""

from __future__ import annotations

import ast
import functools
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parents[1] / "codeqa_lsp"

# Bottom first. The first component of a module name below `codeqa_lsp` picks its layer;
# `codeqa_lsp` itself (`__init__`: the version string) sits at the bottom.
LAYERS: tuple[frozenset[str], ...] = (
    frozenset({"", "config", "secret_shapes"}),
    frozenset({"chunking"}),
    frozenset({"index"}),
    frozenset({"retrieval"}),
    frozenset({"answering"}),
    frozenset({"engine"}),
    frozenset({"server", "cli", "mcp"}),
    # Generators and entry points that only read the layers below; nothing imports them.
    frozenset({"__main__", "config_schema"}),
)
FRONTS = frozenset({"server", "cli", "mcp"})  # siblings that stay apart (the bottom two may meet)
# Front → modules of a sibling front it may import: the entry points it launches.
ENTRY_POINTS: dict[str, frozenset[str]] = {
    "cli": frozenset({"codeqa_lsp.mcp.server", "codeqa_lsp.server.__main__"}),
}
# Third-party protocol libraries and the one part of the package allowed to use them:
# nothing below `server/` knows LSP types, nothing but `mcp/` knows the MCP SDK.
PROTOCOL_LIBRARIES: dict[str, str] = {"pygls": "server", "lsprotocol": "server", "mcp": "mcp"}


@dataclass(frozen=True)
class Import:
    source: str  # importing module, dotted (`codeqa_lsp.index.store`)
    target: str  # imported module, dotted; a package when a name of its __init__ is imported
    line: int

    def __str__(self) -> str:
        return f"{self.source}:{self.line} imports {self.target}"


def module_names(package_dir: Path) -> dict[str, Path]:
    """Dotted module name → file, for every module and package of the tree."""
    names: dict[str, Path] = {}
    root = package_dir.parent
    for path in sorted(package_dir.rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    return names


def _is_package(name: str, names: dict[str, Path]) -> bool:
    return names[name].name == "__init__.py"


def imports_of(name: str, path: Path, names: dict[str, Path]) -> Iterator[Import]:
    """Every import of a `codeqa_lsp` module in one file, wherever it sits in the file."""
    top = name.split(".")[0]
    package = name if _is_package(name, names) else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text("utf-8"), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolved against the importing module's package
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            # `from pkg import mod` imports the module `pkg.mod`; `from pkg import name`, pkg.
            targets = [
                f"{base}.{a.name}" if f"{base}.{a.name}" in names else base for a in node.names
            ]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            targets = [node.args[0].value]
        else:
            continue
        for target in targets:
            if target == top or target.startswith(top + "."):
                while target not in names:  # `import a.b.c` of a name inside a module
                    target = target.rpartition(".")[0]
                yield Import(name, target, node.lineno)
            elif target.split(".")[0] in PROTOCOL_LIBRARIES:
                yield Import(name, target, node.lineno)


@functools.cache  # one parse of the tree for all the checks
def all_imports(package_dir: Path = PACKAGE_DIR) -> tuple[Import, ...]:
    names = module_names(package_dir)
    return tuple(imp for name, path in names.items() for imp in imports_of(name, path, names))


def component(module: str) -> str:
    """`codeqa_lsp.index.pg.dsn` → `index`; `codeqa_lsp` → `` (the package's __init__)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def layer_of(module: str) -> int:
    part = component(module)
    for rank, members in enumerate(LAYERS):
        if part in members:
            return rank
    raise AssertionError(f"{module}: no layer for `{part}`; add it to LAYERS in {__file__}")


def layer_violations(imports: Sequence[Import]) -> list[str]:
    """Imports that point up a layer, cross between sibling fronts, or use a protocol
    library outside its front."""
    found = []
    for imp in imports:
        source = component(imp.source)
        library = imp.target.split(".")[0]
        if library in PROTOCOL_LIBRARIES:
            if source != PROTOCOL_LIBRARIES[library]:
                found.append(f"{imp} (only {PROTOCOL_LIBRARIES[library]}/ may use {library})")
            continue
        target = component(imp.target)
        if layer_of(imp.target) > layer_of(imp.source):
            found.append(f"{imp} (a higher layer)")
        elif (
            source in FRONTS
            and target in FRONTS
            and target != source
            and imp.target not in ENTRY_POINTS.get(source, frozenset())
        ):
            found.append(f"{imp} (another front)")
    return sorted(found)


def part_of(module: str) -> str:
    """The node of the package graph a module belongs to: `codeqa_lsp.index.pg.dsn` →
    `codeqa_lsp.index`, `codeqa_lsp.engine` → itself; `codeqa_lsp` (__init__) stays apart."""
    return ".".join(module.split(".")[:2])


def package_cycles(
    imports: Sequence[Import], node_of: Callable[[str], str] = part_of
) -> list[list[str]]:
    """Strongly connected components (more than one node) of the import graph, its nodes
    the package's parts (default) or, with `node_of=str`, single modules."""
    graph: dict[str, set[str]] = defaultdict(set)
    for imp in imports:
        if imp.target.split(".")[0] in PROTOCOL_LIBRARIES:
            continue
        a, b = node_of(imp.source), node_of(imp.target)
        if a != b:
            graph[a].add(b)
    # Tarjan's algorithm, iterative (no recursion limit to think about).
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            advanced = False
            for nxt in successors:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    advanced = True
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                members = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    members.append(member)
                    if member == node:
                        break
                if len(members) > 1:
                    components.append(sorted(members))
    return sorted(components)


def _explain_cycle(members: list[str], imports: Sequence[Import]) -> str:
    inside = set(members)
    edges = sorted(
        {
            f"  {imp}"
            for imp in imports
            if imp.target.split(".")[0] not in PROTOCOL_LIBRARIES
            and part_of(imp.source) in inside
            and part_of(imp.target) in inside
            and part_of(imp.source) != part_of(imp.target)
        }
    )
    return " ↔ ".join(members) + "\n" + "\n".join(edges)


# -- the checks on this checkout -----------------------------------------------------------


def test_no_import_points_up_or_across() -> None:
    violations = layer_violations(all_imports())
    assert not violations, (
        "imports against the layer order (see this module's docstring):\n" + "\n".join(violations)
    )


def test_packages_form_a_dag() -> None:
    imports = all_imports()
    cycles = package_cycles(imports)
    assert not cycles, "package import cycles:\n" + "\n".join(
        _explain_cycle(c, imports) for c in cycles
    )


def _module_cycles(in_server: bool) -> list[list[str]]:
    cycles = package_cycles(all_imports(), node_of=str)
    return [c for c in cycles if all(m.startswith("codeqa_lsp.server.") for m in c) == in_server]


def test_modules_form_a_dag() -> None:
    """Finer than the parts: no two modules import each other, directly or round a loop."""
    cycles = _module_cycles(in_server=False)
    assert not cycles, "module import cycles:\n" + "\n".join(" ↔ ".join(c) for c in cycles)


def test_server_modules_form_a_dag() -> None:
    cycles = _module_cycles(in_server=True)
    assert not cycles, "module import cycles:\n" + "\n".join(" ↔ ".join(c) for c in cycles)


def test_every_top_level_part_has_a_layer() -> None:
    for name in module_names(PACKAGE_DIR):
        layer_of(name)  # raises for a new top-level module or package nobody placed


# -- the checker itself catches what it must ------------------------------------------------


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    package = tmp_path / "codeqa_lsp"
    for rel, text in {"__init__.py": "", **files}.items():
        path = package / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")
    return package


def test_checker_sees_type_checking_function_level_and_relative_imports(tmp_path: Path) -> None:
    package = _tree(
        tmp_path,
        {
            "index/__init__.py": "",
            "index/store.py": (
                "from typing import TYPE_CHECKING\n"
                "if TYPE_CHECKING:\n    from codeqa_lsp.retrieval.model import SearchFilters\n"
            ),
            "index/indexer.py": "def build():\n    from ..engine import CodeBase\n",
            "retrieval/__init__.py": "",
            "retrieval/model.py": "from codeqa_lsp.index import store\n",
            "engine.py": "import importlib\nimportlib.import_module('codeqa_lsp.index.indexer')\n",
            "chunking/__init__.py": "",
            "chunking/chunker.py": "from lsprotocol import types\n",
        },
    )
    violations = layer_violations(all_imports(package))
    assert violations == [
        "codeqa_lsp.chunking.chunker:1 imports lsprotocol (only server/ may use lsprotocol)",
        "codeqa_lsp.index.indexer:2 imports codeqa_lsp.engine (a higher layer)",
        "codeqa_lsp.index.store:3 imports codeqa_lsp.retrieval.model (a higher layer)",
    ]


def test_checker_allows_launching_entry_points_and_rejects_other_front_imports(
    tmp_path: Path,
) -> None:
    package = _tree(
        tmp_path,
        {
            "cli/__init__.py": "def mcp():\n    from codeqa_lsp.mcp.server import run\n",
            "cli/results.py": "from codeqa_lsp.mcp import results\n",
            "mcp/__init__.py": "",
            "mcp/server.py": "",
            "mcp/results.py": "from codeqa_lsp.cli import main\n",
        },
    )
    assert layer_violations(all_imports(package)) == [
        "codeqa_lsp.cli.results:1 imports codeqa_lsp.mcp.results (another front)",
        "codeqa_lsp.mcp.results:1 imports codeqa_lsp.cli (another front)",
    ]


def test_checker_finds_package_cycles_within_a_layer(tmp_path: Path) -> None:
    package = _tree(
        tmp_path,
        {
            "config.py": "def shapes():\n    from codeqa_lsp.secret_shapes import SHAPES\n",
            "secret_shapes.py": "from codeqa_lsp import config\n",
            "index/__init__.py": "",
            "index/store.py": "from codeqa_lsp.index.pg import dsn\n",
            "index/pg/__init__.py": "",
            "index/pg/dsn.py": "from codeqa_lsp.index import store\n",
        },
    )
    imports = all_imports(package)
    assert layer_violations(imports) == []
    assert package_cycles(imports) == [["codeqa_lsp.config", "codeqa_lsp.secret_shapes"]]
    assert package_cycles(imports, node_of=str) == [
        ["codeqa_lsp.config", "codeqa_lsp.secret_shapes"],
        ["codeqa_lsp.index.pg.dsn", "codeqa_lsp.index.store"],
    ]
