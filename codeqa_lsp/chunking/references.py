"""What each chunk calls and imports: the raw edges of the call graph.

One query per file (the same parse the chunker already made, and the same walk as the
definitions: `tree_pass.py`) lists every call and import with its byte offset; each chunk
then takes the references inside its span that no nested chunk of its own owns. They are
stored with the chunk, so the graph is as incremental as the index: saving a file
re-chunks it and replaces its edges.

A reference is a short string:

- a call, as written, reduced to identifiers: `helper`, `self.save`, `os.path.join`,
  `this.route`; a receiver that is not a plain name chain (`a().b`, `x[0].f`) becomes `*`
  (`*.b`: "some object's `b`");
- an import, `alias=target`: `join=os.path.join`, `np=numpy`, `util=./lib/util`,
  `helper=.helpers.helper` (Python relative imports keep their dots).

Resolution (which definition a name means) needs the whole index and lives in
`index/callgraph.py`.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Mapping, Sequence
from functools import cache
from itertools import islice

from tree_sitter import Language, Node, Query, QueryCursor

from codeqa_lsp.chunking.languages import Grammar

# Per chunk and per file, so a generated file with a million calls costs a bounded amount.
MAX_REFS_PER_CHUNK = 200
MAX_REFS_PER_FILE = 20_000

_PYTHON = """
(call function: [(identifier) (attribute)] @call)
(import_statement) @import
(import_from_statement) @import
"""
_JAVASCRIPT = """
(call_expression function: [(identifier) (member_expression)] @call)
(new_expression constructor: [(identifier) (member_expression)] @call)
(import_statement) @import
(variable_declarator
  name: (identifier)
  value: (call_expression function: (identifier) arguments: (arguments . (string)))) @require_call
"""
_QUERIES = {
    "python": _PYTHON,
    "javascript": _JAVASCRIPT,
    "typescript": _JAVASCRIPT,
    "tsx": _JAVASCRIPT,
}

_IDENT_CHAIN = re.compile(r"^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*$")
_SPACE = re.compile(r"\s+")
_WHITESPACE = re.compile(r"\s")
_PY_FROM = re.compile(r"^from\s+(\S+)\s+import\s+(.+)$", re.S)
_PY_IMPORT = re.compile(r"^import\s+(.+)$", re.S)
_JS_FROM = re.compile(r"""^import\s+(?:type\s+)?(.*?)\s*from\s*['"]([^'"]+)['"]""", re.S)
_JS_NAMED = re.compile(r"\{([^}]*)\}")
_JS_STAR = re.compile(r"\*\s*as\s+([\w$]+)")
_JS_DEFAULT = re.compile(r"^([\w$]+)")


@cache
def _query(language: Language, source: str) -> Query:
    return Query(language, source)


def has_references(language: str) -> bool:
    return language in _QUERIES


def combined_query(gram: Grammar) -> Query | None:
    """The grammar's definition patterns followed by its reference patterns, as one query
    (pattern indices below `gram.query.pattern_count` are definitions); None for a language
    without references."""
    source = _QUERIES.get(gram.name)
    return None if source is None else _query(gram.language, f"{gram.source}\n{source}")


def call_name(text: str) -> str:
    """`self.a.b` → `self.a.b`; `foo( x )` → `foo`; `a().b` → `*.b`; nothing usable → ``.
    JavaScript private members lose their `#` (`this.#delay` → `this.delay`), as their
    definitions do."""
    if "#" in text:
        text = text.replace("#", "")
    parts = text.split(".")
    if text.isascii() and all(part.isidentifier() for part in parts):
        # Most calls (`foo`, `self.save`): `_IDENT_CHAIN`'s answer without the regexes.
        return ".".join(parts[-3:]) if len(parts) > 3 else text
    text = _SPACE.sub("", text)
    if _IDENT_CHAIN.match(text):
        parts = text.split(".")
        return ".".join(parts[-3:]) if len(parts) > 3 else text
    last = text.rsplit(".", 1)[-1]
    return f"*.{last}" if _IDENT_CHAIN.match(last) and "." in text else ""


def python_imports(text: str) -> list[str]:
    """`alias=target` for one Python import statement."""
    text = _SPACE.sub(" ", text.replace("(", " ").replace(")", " ").replace("\\", " ")).strip()
    out = []
    if match := _PY_FROM.match(text):
        module = match.group(1)
        for item in match.group(2).split(","):
            words = item.split()
            if not words or words[0] == "*":
                continue
            alias = words[2] if len(words) == 3 and words[1] == "as" else words[0]
            joiner = "" if module.endswith(".") else "."
            out.append(f"{alias}={module}{joiner}{words[0]}")
    elif match := _PY_IMPORT.match(text):
        for item in match.group(1).split(","):
            words = item.split()
            if not words:
                continue
            alias = words[2] if len(words) == 3 and words[1] == "as" else words[0]
            out.append(f"{alias}={words[0]}")
    return out


def javascript_imports(text: str) -> list[str]:
    """`alias=module.name` for one ES import (`default` for a default import)."""
    match = _JS_FROM.match(_SPACE.sub(" ", text).strip())
    if not match:
        return []
    clause, module = match.groups()
    out = []
    if named := _JS_NAMED.search(clause):
        for item in named.group(1).split(","):
            words = item.replace("type ", "").split()
            if not words:
                continue
            alias = words[2] if len(words) == 3 and words[1] == "as" else words[0]
            out.append(f"{alias}={module}.{words[0]}")
        clause = clause[: named.start()] + clause[named.end() :]
    if star := _JS_STAR.search(clause):
        out.append(f"{star.group(1)}={module}")
    elif default := _JS_DEFAULT.match(clause.strip(" ,")):
        out.append(f"{default.group(1)}={module}.default")
    return out


class FileReferences:
    """Every reference of one file with its byte offset, sorted, for span lookups."""

    def __init__(
        self,
        language: Language,
        name: str,
        root: Node,
        data: bytes,
        captures: Mapping[str, Sequence[Node]] | None = None,
    ) -> None:
        """`captures`: the reference nodes by capture name when a combined pass already
        collected them (`tree_pass.py`), else this runs the references query itself."""
        self.offsets: list[int] = []
        self.refs: list[str] = []
        source = _QUERIES.get(name)
        if source is None:
            return
        if captures is None or any(len(n) > MAX_REFS_PER_FILE for n in captures.values()):
            # Past the cap, which nodes are kept follows the order `captures()` hands them
            # over, so such a (rare) file gets the query's own pass.
            # `captures()` hands every node over in one call: per-match Python work was
            # most of the cost of a pass of its own (chunking 1.3x slower with `matches()`).
            captures = QueryCursor(_query(language, source)).captures(root)
        python = name == "python"
        found = _calls(captures.get("call", ())[:MAX_REFS_PER_FILE], data)
        for node in captures.get("import", ())[:MAX_REFS_PER_FILE]:
            text = _text(data, node)[:2000]
            imports = python_imports(text) if python else javascript_imports(text)
            found.extend((node.start_byte, item) for item in imports)
        for node in captures.get("require_call", ())[:MAX_REFS_PER_FILE]:
            required = _required(node, data)
            if required:
                found.append((node.start_byte, required))
        # Stored space-separated: a module path with whitespace (rare) is not a usable edge.
        # Sorted by offset, then text: two calls can start at one byte (`super().f()`), and
        # the order `captures()` hands such nodes over differs from run to run.
        found = sorted(item for item in found if not _WHITESPACE.search(item[1]))
        self.offsets = [offset for offset, _ in found]
        self.refs = [ref for _, ref in found]

    def inside(
        self, start: int, end: int, holes: Sequence[tuple[int, int]] = ()
    ) -> tuple[str, ...]:
        """The distinct references in [start, end) outside the `holes` (the spans of nested
        chunks, sorted and disjoint), the first MAX_REFS_PER_CHUNK of them.

        Runs of references inside or outside a hole are found by bisection and taken as
        slices, instead of a merge step per reference: class skeletons and module chunks
        span many references, most of them in their holes."""
        offsets, refs = self.offsets, self.refs
        index = bisect_left(offsets, start)
        stop = bisect_left(offsets, end, index)
        if index >= stop:
            return ()
        kept: list[str] = []
        hole, count = 0, len(holes)
        while index < stop:
            offset = offsets[index]
            while hole < count and holes[hole][1] <= offset:
                hole += 1
            if hole >= count:
                kept += refs[index:stop]
                break
            hole_start, hole_end = holes[hole]
            # Up to the hole's start the references are kept; from there to its end, not.
            keep = offset < hole_start
            following = bisect_left(offsets, hole_start if keep else hole_end, index, stop)
            if keep:
                kept += refs[index:following]
            index = following
        return tuple(islice(dict.fromkeys(kept), MAX_REFS_PER_CHUNK))


def _calls(nodes: Sequence[Node], data: bytes) -> list[tuple[int, str]]:
    """(offset, name) of each call whose callee names something (`call_name`).

    A file calls the same few names over and over (`self.assertEqual`), so each distinct
    callee text is read once. With the slices in `inside`: 0.37 -> 0.34 s CPU for the
    definitions and references of 600 stdlib files (a timer per phase, mean of 3 runs)."""
    names: dict[bytes, str] = {}
    found = []
    for node in nodes:
        start, end = node.byte_range
        raw = data[start : min(end, start + 200)]
        called = names.get(raw)
        if called is None:
            called = names[raw] = call_name(raw.decode("utf-8", "replace"))
        if called:
            found.append((start, called))
    return found


def _text(data: bytes, node: Node) -> str:
    return data[node.start_byte : node.end_byte].decode("utf-8", "replace")


def _required(declarator: Node, data: bytes) -> str:
    """`alias=module` for `const alias = require('module')`, else ``."""
    alias = declarator.child_by_field_name("name")
    value = declarator.child_by_field_name("value")
    if alias is None or value is None:
        return ""
    function = value.child_by_field_name("function")
    arguments = value.child_by_field_name("arguments")
    if function is None or arguments is None or _text(data, function) != "require":
        return ""
    module = arguments.named_children[0] if arguments.named_child_count else None
    if module is None or module.type != "string":
        return ""
    return f"{_text(data, alias)}={_text(data, module).strip(chr(39) + chr(34) + '`')}"
