"""Verify what the model cited before anyone can click it.

The model's text may cite `[n]` markers (also `[n, m]`, `[n-m]`) and mention `path:line`.
Only what can be checked survives:

- a marker must name a chunk that was in the prompt *and* still resolves to an existing
  file and line range; other numbers are removed from the text and counted;
- a `path:line` mention must fall inside a chunk that was in the prompt (the model saw
  nothing else, so anything else is invented or injected by a comment) in a file that
  exists; valid ones get that chunk's marker, others are marked as not found;
- a citation of a file that changed since it was indexed is flagged `stale` and, when the
  symbol still exists, re-pointed to its current lines (the file is re-chunked).

Code spans and fenced blocks are left untouched: `items[0]` is code, not a citation.
Model text arrives here already sanitised (`sanitize.sanitize_markdown`): no links of its own.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from codeqa_lsp.answering.markdown import prose_and_code
from codeqa_lsp.answering.model import Citation
from codeqa_lsp.answering.source import CodeSource
from codeqa_lsp.chunking.model import Chunk
from codeqa_lsp.chunking.scanner import decode_source

NOT_FOUND_NOTE = " *(not found in the provided code)*"
_MAX_RANGE = 30  # `[1-400]` is not a citation range we expand

_MARKER = re.compile(
    r"(?P<space>[ \t]*)(?<![\w)])\[(?P<body>\s*\d+(?:\s*[,;\-–]\s*\d+)*\s*)\](?!\()"
)
_MENTION = re.compile(
    r"(?<![\w/.\-])(?P<path>(?:[\w.\-]+/)*[\w.\-]+\.[A-Za-z0-9]+):(?P<start>\d+)(?:-(?P<end>\d+))?\b"
)


@dataclass
class VerifiedText:
    text: str
    citations: list[Citation] = field(default_factory=list)
    dropped: int = 0  # marker numbers that cited nothing provided (or nothing resolvable)
    unverified_mentions: int = 0  # `path:line` mentions outside the provided code


def parse_marker(body: str) -> list[int]:
    """Numbers in a marker body: `1, 3` → [1, 3]; `2-4` → [2, 3, 4]."""
    numbers: list[int] = []
    for part in re.split(r"[,;]", body):
        bounds = [int(b) for b in re.split(r"[\-–]", part) if b.strip()]
        if len(bounds) == 2 and 0 <= bounds[1] - bounds[0] <= _MAX_RANGE:
            numbers.extend(range(bounds[0], bounds[1] + 1))
        else:
            numbers.extend(bounds)
    return list(dict.fromkeys(numbers))


class CitationResolver:
    """Maps a provided chunk to a citation of the file as it is *now*.

    `fresh` holds texts the chunks were cut from just now (an unsaved editor buffer being
    explained): those are current by definition and never stale.
    """

    def __init__(self, source: CodeSource, fresh: Mapping[str, str] | None = None) -> None:
        self.source = source
        self.fresh = dict(fresh or {})
        self._files: dict[str, tuple[str, str] | None] = {}
        self._rechunked: dict[str, list[Chunk]] = {}

    def current(self, path: str) -> tuple[str, str] | None:
        """(text, sha256 of bytes) of the file now, or None when it is gone/unreadable."""
        if path not in self._files:
            if path in self.fresh:
                text = self.fresh[path]
                digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
                self._files[path] = (text, digest)
            else:
                # The scanner's rules: inside the root, regular file, size cap (a FIFO or a
                # /dev/zero symlink swapped in for a cited file must not hang or blow up).
                data = self.source.read_file(path)
                self._files[path] = (
                    None
                    if data is None
                    else (decode_source(data), hashlib.sha256(data).hexdigest())
                )
        return self._files[path]

    def resolve(self, number: int, chunk: Chunk) -> Citation | None:
        current = self.current(chunk.path)
        if current is None:
            return None
        text, digest = current
        line_count = len(text.splitlines())
        start, end = chunk.start_line, chunk.end_line
        if chunk.path in self.fresh:
            # Chunks cut from this very text are current; an indexed chunk of the same file
            # is current only if the text still yields it (same id: same symbol and code).
            same = [c for c in self._chunks_of(chunk.path, text) if c.id == chunk.id]
            stale = not same
            if same:  # the same code, possibly moved by edits above it
                start, end = same[0].start_line, same[0].end_line
        else:
            indexed = self.source.file_hash(chunk.path)
            stale = indexed is not None and indexed != digest
        if stale:
            moved = self._current_lines(chunk, text)
            if moved is not None:
                start, end = moved
        if start < 1 or start > line_count:
            return None
        return Citation(number, chunk.path, start, min(end, line_count), chunk.symbol, stale)

    def _chunks_of(self, path: str, text: str) -> list[Chunk]:
        if path not in self._rechunked:
            try:
                self._rechunked[path] = self.source.chunk_text(path, text)
            except Exception:  # a chunker failure must not lose the citation
                self._rechunked[path] = []
        return self._rechunked[path]

    def _current_lines(self, chunk: Chunk, text: str) -> tuple[int, int] | None:
        """Where the same symbol (same part) is in the current text, nearest the old place."""
        same = [c for c in self._chunks_of(chunk.path, text) if c.symbol == chunk.symbol]
        if not same:
            return None
        best = min(same, key=lambda c: (c.part != chunk.part, abs(c.start_line - chunk.start_line)))
        return best.start_line, best.end_line


def verify(
    text: str, chunks: Sequence[Chunk], resolver: CitationResolver, check_mentions: bool = True
) -> VerifiedText:
    """Check every marker and mention in `text` against the provided `chunks` (numbered 1..n).

    `check_mentions=False` for text we wrote ourselves (extractive answers), whose
    `path:start-end` locations are already next to their marker.
    """
    resolved: dict[int, Citation | None] = {}

    def citation(number: int) -> Citation | None:
        if not 1 <= number <= len(chunks):
            return None
        if number not in resolved:
            resolved[number] = resolver.resolve(number, chunks[number - 1])
        return resolved[number]

    result = VerifiedText(text="")
    cited: set[int] = set()

    def fix_marker(match: re.Match[str]) -> str:
        numbers = parse_marker(match.group("body"))
        good = [n for n in numbers if citation(n) is not None]
        result.dropped += len(numbers) - len(good)
        cited.update(good)
        return f"{match.group('space')}[{', '.join(map(str, good))}]" if good else ""

    def fix_mention(match: re.Match[str], following: str) -> str:
        number = _mention_chunk(match, chunks)
        original = match.group(0)
        if number is None or citation(number) is None:
            result.unverified_mentions += 1
            return original + NOT_FOUND_NOTE
        cited.add(number)
        already = re.match(rf"\s*\[[^\]]*\b{number}\b[^\]]*\]", following)
        return original if already else f"{original} [{number}]"

    pieces = prose_and_code(text)
    out: list[str] = []
    for index, piece in enumerate(pieces):
        if index % 2:  # code: only an inline span that is exactly a `path:line` is looked at
            inline = check_mentions and piece.startswith("`") and not piece.startswith("```")
            mention = _MENTION.fullmatch(piece.strip("`").strip(" ")) if inline else None
            if mention is None:
                out.append(piece)
            else:
                fixed = fix_mention(mention, "".join(pieces[index + 1 : index + 2]))
                out.append(piece + fixed[len(mention.group(0)) :])
            continue
        # Links, images and HTML the model wrote were reduced to text by `sanitize_markdown`
        # before this point (a per-piece regex here once deleted prose after a code span).
        prose = _MARKER.sub(fix_marker, piece)

        def mention_in_prose(match: re.Match[str], source: str = prose) -> str:
            return fix_mention(match, source[match.end() :])

        out.append(_MENTION.sub(mention_in_prose, prose) if check_mentions else prose)
    result.text = "".join(out)
    result.citations = [c for n in sorted(cited) if (c := citation(n)) is not None]
    return result


def _mention_chunk(match: re.Match[str], chunks: Sequence[Chunk]) -> int | None:
    """The number of the provided chunk whose file and lines contain a `path:line` mention."""
    path = match.group("path").lstrip("./")
    start = int(match.group("start"))
    end = int(match.group("end") or start)
    containing = [
        (chunk.end_line - chunk.start_line, number)
        for number, chunk in enumerate(chunks, 1)
        if (chunk.path == path or chunk.path.endswith("/" + path))
        and chunk.start_line <= start <= end <= chunk.end_line
    ]
    return min(containing)[1] if containing else None
