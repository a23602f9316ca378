"""Source text → chunks: one per function, method and class, plus module and doc chunks.

`chunk_source` is the only entry point. Per file it parses once, runs one query pass
(`tree_pass.definitions_and_references`: definitions, and calls/imports), then builds:

- a chunk per function/method (doc comments, decorators and `export` included), split at
  statement boundaries into overlapping parts when over the budget;
- a skeleton chunk per class: header, docstring, fields and member signatures, the member
  bodies elided (they have their own chunks);
- `module` chunks for every line no definition covers (imports, constants, top-level
  statements, and whatever a syntax error hid from the query), packed up to the budget.

Docs and languages without a grammar go to `structure.structure_chunks`. Any unexpected
failure falls back to structure chunks too: a file never makes the chunker raise.

Byte offsets refer to `text` encoded as UTF-8 (lone surrogates replaced). A lone `\\r` counts
as a line break, as in LSP; it is read as `\\n` for parsing (same length, offsets unchanged).
"""

from __future__ import annotations

import logging
import re

from tree_sitter import Node

from codeqa_lsp.chunking.declarations import is_declaration, is_stub_path
from codeqa_lsp.chunking.definitions import Definition
from codeqa_lsp.chunking.languages import grammar, language_for_path, parser_for
from codeqa_lsp.chunking.macros import parsed_bytes
from codeqa_lsp.chunking.model import FUNCTION_KINDS, Chunk, estimate_tokens
from codeqa_lsp.chunking.node_text import (
    doc_of,
    find_body,
    header_node,
    member_summary,
    signature_of,
)
from codeqa_lsp.chunking.recovery import recover_definitions
from codeqa_lsp.chunking.references import FileReferences
from codeqa_lsp.chunking.splitter import (
    Element,
    Lines,
    byte_tokens,
    line_elements,
    looks_minified,
    split_elements,
)
from codeqa_lsp.chunking.structure import (
    MODULE_SYMBOL,
    structure_chunks,
    trimmed_parts,
)
from codeqa_lsp.chunking.tree_pass import definitions_and_references

logger = logging.getLogger(__name__)

# Bump when a change to the chunker alters chunk boundaries or symbol names: existing
# indexes then re-chunk every file on their next run and re-embed every chunk (texts the
# embedding cache knows cost no model call). Unchanged files are otherwise never re-read.
# 5: TypeScript overload signatures left out of the embedded text (`overloads.py`).
# 6: Java enum constants with a body, and fields holding an anonymous class, are containers
#    (their methods are named `Policy.IDENTITY.translateName`; `queries/java.scm`).
# 7: named types are definitions, no longer module text: TypeScript and Rust type aliases
#    (`type output<T> = ...`), every Go `type` (`type HandlerFunc func(...)`, aliases), and
#    C/C++ anonymous structs, unions and enums by their typedef name; Ruby predicates keep
#    their `?` (`redirect?` was named `redirect`, beside the real `redirect`); `::Name` is
#    top-level (`module ::HelperOne` inside a class was `HelpersTest..HelperOne`).
# 8: C/C++ function-like macros are definitions (`#define MAX(a, b) ...`), no longer module
#    text; `class SPDLOG_API logger {...}` is the class `logger` with its methods, not a
#    function (`macros.parsed_bytes`). The re-chunk also corrects the lines of chunks left behind
#    by code added above them (`Store.refresh_kept`, same release).
# 9: JavaScript/TypeScript private methods are definitions (`#calculateDelay() {}` was left
#    in its class's skeleton: its name read as a comment), and calls of private members
#    resolve (`this.#calculateDelay()`); a TypeScript type alias (`type RetryOptions =
#    {...}`) is a declaration, as an interface is (`declarations.py`).
# 10: C/C++ declaration macros are blanked for the parser as export macros are
#    (`SPDLOG_INLINE spdlog::logger *default_logger_raw()` was named
#    `spdlog.logger*default_logger_raw`, `void SPDLOG_INLINE base_sink<M>::flush()`
#    `SPDLOG_INLINEspdlog.sinks.base_sink.flush`, `f() const SPDLOG_NOEXCEPT {` `SPDLOG_NOEXCEPT`);
#    the re-parses of syntax-error recovery read the same blanked bytes.
# 11: Kotlin is parsed (tree-sitter-kotlin): classes, objects, functions and extension
#    functions (`Buffer.commonReadUtf8`) are definitions; every Kotlin chunk was module text.
# 12: a C/C++ macro alone on its line is blanked for the parser (`FMT_END_EXPORT` before
#    `namespace detail {` made fmt's base.h nine functions named `namespace`); a C++ struct
#    specialization is a class (`template <> struct formatter<T> {`: `formatter.parse`).
# 13: a macro *call* alone on its line is no longer blanked (12 did: spdlog's
#    `SPDLOG_LOGGER_CATCH(msg.source)` closes a `try`, and `async_logger.sink_it_` was lost).
# 14: C++ operators keep their names (`operator()`, `operator<=>`, `operator bool`; they were
#    `operator`, `operator` and `operatorbool`).
# 15: no C/C++/C#/Java/Go definition is named by a statement word (`if`, `switch`...: what
#    the parser made of a statement it could not read).
CHUNKER_VERSION = "16"

MIN_TOKENS = 64
# Module runs further apart than this many lines go to separate module chunks, so a
# citation of "the module code" does not span the whole file.
MODULE_GAP_ROWS = 80
_LONE_CR = re.compile(rb"\r(?!\n)")
_WORD = re.compile(rb"\w")
_SPACE = re.compile(r"\s+")


def chunk_source(
    path: str, text: str, *, language: str | None = None, max_tokens: int = 1500
) -> list[Chunk]:
    """Chunks of one file, sorted by start line. Never raises; deterministic."""
    budget = max(MIN_TOKENS, int(max_tokens))
    lang = language or language_for_path(path) or "text"
    lines: Lines | None = None
    try:
        data = text.encode("utf-8", "replace")
        if b"\r" in data:
            data = _LONE_CR.sub(b"\n", data)
        lines = Lines.of(data)
        if not data.strip():
            return []
        # Minified code: its definitions are not units anyone reads, so it is cut into
        # budget-sized windows instead of thousands of tiny chunks.
        if grammar(lang) is None or looks_minified(data, lines.count):
            return _sorted(structure_chunks(path, lines, lang, budget))
        return _sorted(_code_chunks(path, lines, lang, budget))
    except Exception:  # a chunker bug must cost one file's structure, never the index
        logger.warning(
            "chunking %s as %s failed; using structure chunks", path, lang, exc_info=True
        )
    try:
        if lines is None:
            lines = Lines.of(text.encode("utf-8", "replace"))
        return _sorted(structure_chunks(path, lines, "text" if lang == "text" else lang, budget))
    except Exception:
        logger.error("structure chunking %s failed; file not chunked", path, exc_info=True)
        return []


def _sorted(chunks: list[Chunk]) -> list[Chunk]:
    """Chunks in file order, ids unique: an identical definition under the same name (the
    same fallback written in two branches) is kept once, at its first place, since the
    index keys chunks by id."""
    ordered = sorted(
        chunks, key=lambda c: (c.start_line, c.start_byte, -c.end_byte, c.symbol, c.part)
    )
    seen: set[str] = set()
    unique = []
    for chunk in ordered:
        if chunk.id not in seen:
            seen.add(chunk.id)
            unique.append(chunk)
    return unique


def _code_chunks(path: str, lines: Lines, language: str, budget: int) -> list[Chunk]:
    gram, parser = grammar(language), parser_for(language)
    assert gram is not None and parser is not None
    parsed = parsed_bytes(lines.data, language)
    tree = parser.parse(parsed)
    found, refs = definitions_and_references(gram, tree.root_node, lines.data, path)
    found = recover_definitions(gram, tree.root_node, lines, path, found, parsed)  # errors
    defs = [d for d in found if _own_chunk(d)]
    for definition in defs:  # once each: a class skeleton reuses its members' signatures
        if definition.body is None:  # most queries capture `@body`; the others look it up
            definition.body = find_body(definition.node)
        definition.signature = signature_of(
            lines.data, header_node(definition.node), definition.body
        )
    chunks: list[Chunk] = []
    for definition in defs:
        builder = _Builder(path, language, lines, definition, budget, refs)
        chunks.extend(builder.build())
    chunks.extend(_module_chunks(path, language, lines, defs, budget, refs))
    return chunks


# A function nested in more functions than this gets no chunk of its own: its text is already
# inside its ancestors' chunks, and giving every level a chunk makes chunk text grow with the
# square of the nesting depth (5,000 nested functions would store hundreds of megabytes).
MAX_FUNCTION_NESTING = 3


def _own_chunk(definition: Definition) -> bool:
    if not definition.is_chunk:
        return False
    depth, parent = 0, definition.parent
    while parent is not None and depth <= MAX_FUNCTION_NESTING:
        if parent.kind in FUNCTION_KINDS:
            depth += 1
        parent = parent.parent
    return depth <= MAX_FUNCTION_NESTING


class _Builder:
    """Chunks for one definition: whole, skeleton, or split into parts."""

    def __init__(
        self,
        path: str,
        language: str,
        lines: Lines,
        definition: Definition,
        budget: int,
        refs: FileReferences,
    ):
        self.path, self.language, self.lines = path, language, lines
        self.definition, self.budget = definition, budget
        self.body = definition.body
        self.signature = definition.signature
        self.doc = doc_of(lines.data, definition, self.body)
        self.refs = refs
        self.declaration = is_declaration(path, language, definition, lines.data)
        # Nested chunks own their references (a class skeleton owns none of its methods').
        self.holes = sorted(
            (c.start_byte, c.end_byte) for c in definition.children if _own_chunk(c)
        )

    def build(self) -> list[Chunk]:
        d = self.definition
        data = self.lines.data
        members = [c for c in d.children if c.is_chunk] if d.kind == "class" else []
        if not members or not self._can_elide(members):
            if byte_tokens(d.end_byte - d.start_byte) <= self.budget:
                text = data[d.start_byte : d.end_byte].decode("utf-8", "replace")
                return [self._chunk(d.start_byte, d.end_byte, d.start_row, d.end_row, text)]
            elements = line_elements(
                self.lines,
                d.start_byte,
                d.end_byte,
                self.budget,
                _statement_rows(self.body, self.budget),
            )
            return self._parts(elements, None)
        # A skeleton. Coarse first (one element per gap between members): the common small
        # class never pays for per-line elements; only an oversized one is re-cut by line.
        elements, overrides = self._skeleton_elements(members, fine=False)
        texts = self._texts(elements, overrides)
        if sum(estimate_tokens(t) for t in texts) <= self.budget:
            text = "".join(texts).rstrip("\n")
            return [self._chunk(d.start_byte, d.end_byte, d.start_row, d.end_row, text)]
        elements, overrides = self._skeleton_elements(members, fine=True)
        return self._parts(elements, self._texts(elements, overrides))

    def _texts(self, elements: list[Element], overrides: dict[int, str]) -> list[str]:
        data = self.lines.data
        return [
            overrides.get(i) or data[e.start : e.end].decode("utf-8", "replace")
            for i, e in enumerate(elements)
        ]

    def _parts(self, elements: list[Element], texts: list[str] | None) -> list[Chunk]:
        """Split into parts; `texts` are the elements' rewritten texts (skeletons), else the
        parts are plain slices of the file."""
        data, end = self.lines.data, self.definition.end_byte
        sizes = [estimate_tokens(t) for t in texts] if texts is not None else None
        parts = trimmed_parts(data, elements, split_elements(elements, self.budget, sizes))
        chunks = []
        for index, (first, last) in enumerate(parts):
            start, stop = elements[first].start, min(elements[last].end, end)
            if texts is not None:
                text = "".join(texts[first : last + 1]).rstrip("\n")
            else:
                text = data[start:stop].decode("utf-8", "replace").rstrip("\n")
            chunks.append(
                self._chunk(
                    start,
                    stop,
                    elements[first].start_row,
                    elements[last].end_row,
                    text,
                    part=index,
                    parts=len(parts),
                )
            )
        return chunks

    def _can_elide(self, members: list[Definition]) -> bool:
        """Members must start below the class header line (not `class A { m() {} }`)."""
        header_row = self.definition.node.start_point[0]
        return all(header_row < m.start_row for m in members)

    def _skeleton_elements(
        self, members: list[Definition], fine: bool
    ) -> tuple[list[Element], dict[int, str]]:
        """Class text with each member collapsed to one signature line; the text between
        members is one element per gap, or per line when `fine`."""
        lines, d = self.lines, self.definition
        groups: list[list[Definition]] = []
        for member in sorted(members, key=lambda m: m.start_byte):
            if groups and member.start_row <= groups[-1][-1].end_row:
                groups[-1].append(member)
            else:
                groups.append([member])
        elements: list[Element] = []
        overrides: dict[int, str] = {}
        cursor = d.start_byte
        for group in groups:
            first_row = group[0].start_row
            line_start = lines.row_start(first_row)
            if line_start > cursor:
                elements.extend(self._gap(cursor, line_start, fine))
            end_row = max(m.end_row for m in group)
            end = lines.row_end(end_row)
            indent = _indent(lines.data[line_start : lines.row_end(first_row)])
            summary = "; ".join(member_summary(self.language, lines.data, m) for m in group)
            overrides[len(elements)] = f"{indent}{summary}\n"
            elements.append(Element(line_start, end, first_row, end_row, 0))
            cursor = end
        if cursor < d.end_byte:
            elements.extend(self._gap(cursor, d.end_byte, fine))
        return elements, overrides

    def _gap(self, start: int, end: int, fine: bool) -> list[Element]:
        if fine:
            return line_elements(self.lines, start, end, self.budget)
        rows = self.lines.row_of(start), self.lines.row_of(end - 1)
        return [Element(start, end, rows[0], rows[1], 0)]

    def _chunk(
        self,
        start: int,
        end: int,
        start_row: int,
        end_row: int,
        text: str,
        part: int = 0,
        parts: int = 1,
    ) -> Chunk:
        d = self.definition
        return Chunk(
            path=self.path,
            symbol=d.symbol,
            kind=d.kind,  # type: ignore[arg-type]
            language=self.language,
            start_line=start_row + 1,
            end_line=max(start_row, end_row) + 1,
            start_byte=start,
            end_byte=end,
            text=text,
            signature=self.signature,
            doc=self.doc,
            part=part,
            parts=parts,
            declaration=self.declaration,
            refs=self.refs.inside(start, end, self.holes),
        )


def _indent(line: bytes) -> str:
    return line[: len(line) - len(line.lstrip(b" \t"))].decode("ascii", "replace")


def _statement_rows(body: Node | None, budget: int) -> dict[int, int]:
    """Rows where a statement of the body starts → cost (nesting depth), walking into large
    compound statements only; iterative and bounded, so deep nesting costs nothing extra."""
    if body is None:
        return {}
    rows: dict[int, int] = {}
    big_rows = max(8, budget // 40)
    stack: list[tuple[Node, int]] = [(body, 0)]
    while stack:
        node, depth = stack.pop()
        for child in node.named_children:
            row = child.start_point[0]
            if rows.get(row, 99) > depth:
                rows[row] = depth
            if depth < 5 and child.end_point[0] - row > big_rows:
                stack.append((child, depth + 1))
    return rows


def _module_chunks(
    path: str,
    language: str,
    lines: Lines,
    defs: list[Definition],
    budget: int,
    refs: FileReferences,
) -> list[Chunk]:
    """Every line outside the definitions, packed into `module` chunks, numbered as
    `structure.numbered` would (they share one symbol), with their references.

    Each chunk is built once with all its fields: numbering and adding references with
    `dataclasses.replace` hashed every module text twice more."""
    pieces = _module_pieces(lines, defs, budget)
    spans = sorted((d.start_byte, d.end_byte) for d in defs)  # module code is outside them
    stub = is_stub_path(path)
    return [
        Chunk(
            path=path,
            symbol=MODULE_SYMBOL,
            kind="module",
            language=language,
            start_line=start_row + 1,
            end_line=end_row + 1,
            start_byte=start,
            end_byte=end,
            text=text.rstrip("\n"),
            part=index,
            parts=len(pieces),
            declaration=stub,
            refs=refs.inside(start, end, spans),
        )
        for index, (start, end, start_row, end_row, text) in enumerate(pieces)
    ]


def _module_pieces(
    lines: Lines, defs: list[Definition], budget: int
) -> list[tuple[int, int, int, int, str]]:
    """(start byte, end byte, first row, last row, text) of each module chunk.

    Runs of uncovered lines further apart than MODULE_GAP_ROWS start a new group; a group
    that fits the budget is one chunk, a larger one is split at line boundaries (a run's
    first line being the preferred cut)."""
    data = lines.data
    groups: list[list[tuple[int, int, int, int]]] = []
    for run in _uncovered_runs(lines, defs):
        if groups and run[2] - groups[-1][-1][3] <= MODULE_GAP_ROWS:
            groups[-1].append(run)
        else:
            groups.append([run])
    pieces: list[tuple[int, int, int, int, str]] = []
    for group in groups:
        if byte_tokens(sum(end - start for start, end, _, _ in group)) <= budget:
            text = "".join(data[start:end].decode("utf-8", "replace") for start, end, _, _ in group)
            pieces.append((group[0][0], group[-1][1], group[0][2], group[-1][3], text))
            continue
        elements: list[Element] = []
        for start, end, _, _ in group:
            run_elements = line_elements(lines, start, end, budget)
            head = run_elements[0]  # a run's first line is the best place to cut
            elements.append(Element(head.start, head.end, head.start_row, head.end_row, 0))
            elements.extend(run_elements[1:])
        for first, last in trimmed_parts(data, elements, split_elements(elements, budget)):
            text = "".join(
                data[e.start : e.end].decode("utf-8", "replace") for e in elements[first : last + 1]
            )
            pieces.append(
                (
                    elements[first].start,
                    elements[last].end,
                    elements[first].start_row,
                    elements[last].end_row,
                    text,
                )
            )
    return pieces


def _uncovered_runs(lines: Lines, defs: list[Definition]) -> list[tuple[int, int, int, int]]:
    """(start byte, end byte, first row, last row) of each run of rows outside every
    definition, blank rows at either end trimmed; bytes include the last row's newline.
    Runs of punctuation only (closing braces) are dropped."""
    data = lines.data
    runs = []
    row = 0
    total = lines.count
    for start, end in [*sorted((d.start_row, d.end_row) for d in defs), (total, total)]:
        if start > row:
            begin, stop = lines.row_start(row), lines.row_end(start - 1)
            segment = data[begin:stop]
            body = segment.strip()
            if _WORD.search(body):  # a lone `}` or `});` left between definitions is no content
                first_byte = begin + segment.index(body[:1])
                last_byte = begin + len(segment.rstrip()) - 1
                first_row, last_row = lines.row_of(first_byte), lines.row_of(last_byte)
                runs.append(
                    (lines.row_start(first_row), lines.row_end(last_row), first_row, last_row)
                )
        row = max(row, end + 1)
    return runs
