"""Structure-first chunks for docs and for code we have no grammar for.

Markdown is cut at headings (ATX `#` and setext underlines, ignoring fenced code), a
section's symbol being its heading path (`Install > From source`); reStructuredText at
underlined titles (levels in order of first appearance, as docutils does); plain text and
unknown code at blank-line blocks. Parts are packed up to the budget and overlap ~15%
(see `splitter`). This is also the last resort for a file whose parse failed.
"""

from __future__ import annotations

import re
from dataclasses import replace
from itertools import pairwise
from pathlib import PurePosixPath

from codeqa_lsp.chunking.model import Chunk, ChunkKind
from codeqa_lsp.chunking.splitter import (
    Element,
    Lines,
    byte_tokens,
    line_elements,
    split_elements,
)

MODULE_SYMBOL = "<module>"
_ATX = re.compile(rb"[ ]{0,3}(#{1,6})[ \t]+(.*?)[ \t#]*\r?\n?$")
_FENCE = re.compile(rb"[ ]{0,3}(```|~~~)")
_SETEXT = re.compile(rb"[ ]{0,3}(=+|-+)[ \t]*\r?\n?$")
_MD_IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)")
_MD_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_RST_ADORNMENT = re.compile(rb"([=\-~^\"'`#*+:.<>_])\1{2,}[ \t]*\r?\n?$")


def structure_chunks(path: str, lines: Lines, language: str, budget: int) -> list[Chunk]:
    """Chunks for the whole file by its textual structure.

    Each section (heading to next heading; the whole file when there are none) is split on
    its own when over the budget; whole sections that are small are then packed together
    up to the budget, so a chunk never starts in the middle of one section and runs on
    into the next.
    """
    data = lines.data
    if not data.strip():
        return []
    if language == "markdown":
        headings = _markdown_headings(lines)
    elif language == "rst":
        headings = _rst_headings(lines)
    else:
        headings = {}
    paths = _heading_paths(headings)
    is_doc = language in ("markdown", "rst", "text")
    default_symbol = PurePosixPath(path).name if is_doc else MODULE_SYMBOL
    kind: ChunkKind = "section" if is_doc else "module"
    bounds = sorted({0, *(lines.row_start(row) for row in headings), len(data)})
    units: list[tuple[int, int, int, int, bool]] = []  # start, end, start_row, end_row, whole
    for start, end in pairwise(bounds):
        elements = line_elements(lines, start, end, budget)
        if not elements:
            continue
        parts = trimmed_parts(data, elements, split_elements(elements, budget))
        for first, last in parts:
            units.append(
                (
                    elements[first].start,
                    elements[last].end,
                    elements[first].start_row,
                    elements[last].end_row,
                    len(parts) == 1,
                )
            )
    chunks: list[Chunk] = []
    for start, end, start_row, end_row in _pack_small(units, budget):
        symbol = _symbol_at(paths, start_row, end_row) or default_symbol
        chunks.append(
            Chunk(
                path=path,
                symbol=symbol,
                kind=kind,
                language=language,
                start_line=start_row + 1,
                end_line=end_row + 1,
                start_byte=start,
                end_byte=end,
                text=data[start:end].decode("utf-8", "replace").rstrip("\n"),
                signature=symbol if symbol in paths.values() else "",
            )
        )
    return numbered(chunks)


def _pack_small(
    units: list[tuple[int, int, int, int, bool]], budget: int
) -> list[tuple[int, int, int, int]]:
    """Merge consecutive whole sections while they fit the budget together."""
    packed: list[tuple[int, int, int, int]] = []
    open_whole = False
    for start, end, start_row, end_row, whole in units:
        if packed and open_whole and whole and byte_tokens(end - packed[-1][0]) <= budget:
            packed[-1] = (packed[-1][0], end, packed[-1][2], end_row)
            continue
        packed.append((start, end, start_row, end_row))
        open_whole = whole
    return packed


def trimmed_parts(
    data: bytes, elements: list[Element], parts: list[tuple[int, int]]
) -> list[tuple[int, int]]:
    """Parts as inclusive element ranges without leading/trailing blank lines; blank parts
    dropped."""
    out: list[tuple[int, int]] = []
    for first, end in parts:
        last = end - 1
        while first <= last and not data[elements[first].start : elements[first].end].strip():
            first += 1
        while last >= first and not data[elements[last].start : elements[last].end].strip():
            last -= 1
        if first <= last:
            out.append((first, last))
    return out


def numbered(chunks: list[Chunk]) -> list[Chunk]:
    """Give chunks sharing a symbol their part numbers so their ids stay distinct."""
    counts: dict[str, int] = {}
    for chunk in chunks:
        counts[chunk.symbol] = counts.get(chunk.symbol, 0) + 1
    seen: dict[str, int] = {}
    out = []
    for chunk in chunks:
        total = counts[chunk.symbol]
        if total == 1:
            out.append(chunk)
            continue
        index = seen.get(chunk.symbol, 0)
        seen[chunk.symbol] = index + 1
        out.append(replace(chunk, part=index, parts=total))
    return out


def _markdown_headings(lines: Lines) -> dict[int, tuple[int, str]]:
    """Row → (level 0-5, title) for Markdown headings outside fenced code blocks."""
    data, headings = lines.data, {}
    fence: bytes | None = None
    previous = b""
    in_front_matter = data.startswith((b"---\n", b"---\r\n"))  # YAML front matter
    for row in range(lines.count):
        line = data[lines.row_start(row) : lines.row_end(row)]
        if in_front_matter:
            in_front_matter = row == 0 or line.rstrip() not in (b"---", b"...")
            continue
        opened = _FENCE.match(line)
        if opened:
            marker = opened.group(1)
            fence = None if fence == marker else (fence or marker)
            previous = b""
            continue
        if fence is not None:
            continue
        atx = _ATX.match(line)
        if atx:
            headings[row] = (len(atx.group(1)) - 1, _decode(atx.group(2)))
        elif previous.strip() and _SETEXT.match(line) and row - 1 not in headings:
            level = 0 if line.lstrip().startswith(b"=") else 1
            headings[row - 1] = (level, _decode(previous))
        previous = line
    return headings


def _rst_headings(lines: Lines) -> dict[int, tuple[int, str]]:
    """Row → (level, title): a title line underlined (optionally overlined) by a repeated
    punctuation character at least as long as the title."""
    data, headings = lines.data, {}
    styles: list[tuple[bytes, bool]] = []
    rows = [data[lines.row_start(r) : lines.row_end(r)] for r in range(lines.count)]
    for row in range(1, len(rows)):
        under, title = rows[row], rows[row - 1].rstrip()
        match = _RST_ADORNMENT.match(under)
        if not match or not title.strip() or _RST_ADORNMENT.match(title):
            continue
        if len(under.rstrip()) < len(title.strip()):
            continue
        overlined = row >= 2 and rows[row - 2].rstrip() == under.rstrip()
        style = (match.group(1), overlined)
        if style not in styles:
            styles.append(style)
        head_row = row - 2 if overlined else row - 1
        headings[head_row] = (min(styles.index(style), 5), _decode(title.strip()))
    return headings


def _heading_paths(headings: dict[int, tuple[int, str]]) -> dict[int, str]:
    """Row → `Parent > Child` path of the heading on that row."""
    stack: list[tuple[int, str]] = []
    paths: dict[int, str] = {}
    for row in sorted(headings):
        level, title = headings[row]
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, title))
        paths[row] = " > ".join(t for _, t in stack)
    return paths


def _symbol_at(paths: dict[int, str], start_row: int, end_row: int) -> str | None:
    """The heading path in force at `start_row`, or the first heading inside the part."""
    current = None
    for row in sorted(paths):
        if row <= start_row:
            current = paths[row]
        elif current is None and row <= end_row:
            return paths[row]
        else:
            break
    return current


def _decode(raw: bytes) -> str:
    """A heading's text as a reader sees it: links and images reduced to their text."""
    text = raw.decode("utf-8", "replace")
    text = _MD_IMAGE.sub("", text)
    text = _MD_LINK.sub(r"\1", text)
    text = " ".join(text.split())
    return text if len(text) <= 80 else text[:77] + "..."
