"""Recover the definitions a syntax error hid from the query.

Files are saved mid-edit all the time. tree-sitter's error recovery then often wraps the
rest of a statement list in an ERROR node, or lets a broken function swallow the functions
below it (`def bad_one(x:` above `def after_error(y):`), and the query finds nothing there.

Recovery is local and bounded:

1. only the top-level statements that contain an error are *damaged*; in them, a cheap
   line-based finder lists the rows that look like the start of a definition
   (`def`, `class`, `function`, `const f = (...) =>`, `name(...) {`, ...);
2. the first such row that no found definition starts at is re-parsed with the same grammar
   from that line to the end of the damaged region (`Parser.included_ranges`, so byte and
   row positions stay those of the file), its definitions are taken, and the next row still
   not covered is tried, up to MAX_REPARSES times and REPARSE_BYTES_FACTOR times the file's
   size in total: a hostile file full of errors costs a few parses, never a quadratic walk;
3. a recovered definition nests under the found one whose span holds it *and* whose header
   is indented less (indentation is what the author meant when the parser could not know);
   a found definition that swallowed code at its own indentation ends before it.
"""

from __future__ import annotations

import re

from tree_sitter import Node, Parser, Range

from codeqa_lsp.chunking.definitions import Definition, find_definitions
from codeqa_lsp.chunking.languages import Grammar
from codeqa_lsp.chunking.splitter import Lines

# Re-parses per file. A file rarely has more than a couple of broken spots while being
# edited; each re-parse covers the rest of one damaged region.
MAX_REPARSES = 8
# Total bytes re-parsed, as a multiple of the file's size (hostile inputs stay linear).
REPARSE_BYTES_FACTOR = 4
# Damaged statements looked at per file (a file of thousands of broken lines is noise).
MAX_DAMAGED = 256

_MODIFIERS = (
    r"(?:(?:export|default|async|static|public|private|protected|abstract|final|override|"
    r"virtual|inline|unsafe|extern|declare|readonly|pub(?:\([^)]*\))?"
    r"|internal|open|data|sealed|suspend|operator|infix|expect|actual|companion)\s+)*"
)
_PYTHON_START = re.compile(rb"[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+[A-Za-z_]\w*")
_JS_START = re.compile(
    (
        r"[ \t]*" + _MODIFIERS + r"(?:function\b|class[ \t]+[\w$]"
        r"|(?:const|let|var)[ \t]+[\w$]+[ \t]*(?::[^=]*)?=[ \t]*(?:async[ "
        r"\t]+)?(?:function\b|\(|[\w$]+[ \t]*=>)"
        r"|(?:get[ \t]+|set[ \t]+)?[\w$]+[ \t]*(?:<[^>]*>)?\([^)]*\)[ \t]*(?::[^{]*)?\{[ \t]*$"
        r"|[\w$.]+[ \t]*=[ \t]*(?:async[ \t]+)?function\b)"
    ).encode()
)
_OTHER_START = re.compile(
    (
        r"[ \t]*"
        + _MODIFIERS
        + r"(?:def|fn|func|fun|function|class|object|struct|impl|interface|trait|enum|module"
        r"|namespace)\b"
    ).encode()
)
_STARTS = {
    "python": _PYTHON_START,
    "javascript": _JS_START,
    "typescript": _JS_START,
    "tsx": _JS_START,
}
# Lines that belong with the definition below them (decorators, doc comments).
_ATTACHED_LINE = re.compile(rb"[ \t]*(?:@|#|//|/\*|\*)")


def recover_definitions(
    gram: Grammar,
    root: Node,
    lines: Lines,
    path: str,
    defs: list[Definition],
    parsed: bytes,
) -> list[Definition]:
    """`defs` (from `find_definitions` over `root`) plus the definitions recovered from the
    damaged regions, sorted and nested. Returns `defs` itself when nothing was damaged.
    `parsed`: the bytes `root` was parsed from (`lines.data`, or with C/C++ macros blanked by
    `macros.parsed_bytes`, same length); re-parses read them too."""
    if not root.has_error:
        return defs
    regions = _damaged_regions(root)
    if not regions:
        return defs
    pattern = _STARTS.get(gram.name, _OTHER_START)
    # A definition error recovery placed (inside an ERROR node) does not vouch for its row.
    known_rows = {d.node.start_point[0] for d in defs if not _inside_error(d.node)}
    defs = list(defs)
    recovered: list[Definition] = []
    parser = Parser(gram.language)
    budget = REPARSE_BYTES_FACTOR * len(lines.data) + 4096
    reparses = 0
    for first_row, last_row in regions:
        row = first_row
        while row <= last_row and reparses < MAX_REPARSES and budget > 0:
            candidate = _next_candidate(lines, pattern, row, last_row, known_rows)
            if candidate is None:
                break
            row = candidate
            start_row = _attached_start(lines, row, first_row)
            start, end = lines.row_start(start_row), lines.row_end(last_row)
            budget -= end - start
            reparses += 1
            parser.included_ranges = [Range((start_row, 0), (last_row + 1, 0), start, end)]
            tree = parser.parse(parsed)
            found = [
                d
                for d in find_definitions(gram, tree.root_node, lines.data, path)
                if d.node.start_byte >= start
            ]
            # The re-parse saw this text without the broken code above it: its view of the
            # range supersedes what the first parse (or an earlier re-parse) made of it.
            defs = _without(defs, start, end)
            recovered = [d for d in recovered if not start <= d.node.start_byte < end]
            recovered.extend(found)
            defs.extend(found)
            known_rows.update(d.node.start_point[0] for d in found)
            known_rows.add(row)  # tried: a row that yields nothing is not tried again
            row += 1
    if not recovered:
        return defs
    fresh = {id(d) for d in recovered}
    return _attach([d for d in defs if id(d) not in fresh], recovered, lines)


def _damaged_regions(root: Node) -> list[tuple[int, int]]:
    """Row spans of the top-level statements holding an error, adjacent ones merged."""
    regions: list[tuple[int, int]] = []
    for child in root.children:
        if not (child.has_error or child.is_error or child.is_missing):
            continue
        first, last = child.start_point[0], child.end_point[0]
        if regions and first <= regions[-1][1] + 1:
            regions[-1] = (regions[-1][0], max(regions[-1][1], last))
        else:
            regions.append((first, last))
        if len(regions) >= MAX_DAMAGED:
            break
    return regions


def _next_candidate(
    lines: Lines, pattern: re.Pattern[bytes], row: int, last_row: int, known_rows: set[int]
) -> int | None:
    data = lines.data
    while row <= last_row:
        if row not in known_rows and pattern.match(data, lines.row_start(row), lines.row_end(row)):
            return row
        row += 1
    return None


def _attached_start(lines: Lines, row: int, floor: int) -> int:
    """Include the decorators and comments right above a candidate row in its re-parse."""
    data = lines.data
    start = row
    while (
        start - 1 >= floor
        and row - start < 20
        and _ATTACHED_LINE.match(data, lines.row_start(start - 1), lines.row_end(start - 1))
    ):
        start -= 1
    return start


def _inside_error(node: Node) -> bool:
    """Whether error recovery placed this node (an ancestor is an ERROR node)."""
    current = node.parent
    for _ in range(64):
        if current is None:
            return False
        if current.is_error:
            return True
        current = current.parent
    return True


def _without(defs: list[Definition], start: int, end: int) -> list[Definition]:
    """`defs` minus those starting in [start, end), unlinked from their parents."""
    stale = {id(d) for d in defs if start <= d.node.start_byte < end}
    if not stale:
        return defs
    for definition in defs:
        if id(definition) not in stale and definition.children:
            definition.children = [c for c in definition.children if id(c) not in stale]
    return [d for d in defs if id(d) not in stale]


def _indent(lines: Lines, definition: Definition) -> int:
    row = definition.node.start_point[0]
    text = lines.data[lines.row_start(row) : lines.row_end(row)]
    return len(text) - len(text.lstrip(b" \t"))


def _attach(defs: list[Definition], recovered: list[Definition], lines: Lines) -> list[Definition]:
    """Nest each recovered definition whose parent was not recovered with it under the
    innermost definition that holds it at a smaller indentation; cut back the ones that
    swallowed it at their own indentation. One pass with a stack of open spans."""
    everything = sorted([*defs, *recovered], key=lambda d: (d.start_byte, -d.end_byte))
    fresh = {id(d) for d in recovered}
    stack: list[Definition] = []
    for definition in everything:
        while stack and stack[-1].end_byte <= definition.start_byte:
            stack.pop()
        own_parent = definition.parent
        if id(definition) in fresh and (own_parent is None or id(own_parent) not in fresh):
            indent = _indent(lines, definition)
            parent = None
            while stack:
                holder = stack[-1]
                if _indent(lines, holder) < indent:
                    parent = holder
                    break
                _cut_before(holder, definition, lines)
                stack.pop()
            definition.parent = parent
            if parent is not None:
                parent.children.append(definition)
                if definition.kind == "function" and parent.kind in ("class", "impl"):
                    definition.kind = "method"
            _rename(definition)
        stack.append(definition)
    return sorted(everything, key=lambda d: (d.start_byte, -d.end_byte))


def _cut_before(holder: Definition, below: Definition, lines: Lines) -> None:
    """End `holder` at the last non-blank row above `below`."""
    row = below.start_row - 1
    while (
        row > holder.start_row and not lines.data[lines.row_start(row) : lines.row_end(row)].strip()
    ):
        row -= 1
    row = max(row, holder.start_row)
    begin = lines.row_start(row)
    holder.end_row = row
    holder.end_byte = max(
        holder.start_byte, begin + len(lines.data[begin : lines.row_end(row)].rstrip())
    )
    for child in list(holder.children):
        if child.start_byte >= holder.end_byte:
            holder.children.remove(child)
            child.parent = holder.parent
            _rename(child)


def _rename(definition: Definition) -> None:
    """Recompute the symbols of a definition and its descendants from their parents."""
    stack = [definition]
    while stack:
        current = stack.pop()
        if not current.absolute:
            parent = current.parent
            current.symbol = (
                f"{parent.symbol}.{current.name}" if parent is not None else current.name
            )
        stack.extend(current.children)
