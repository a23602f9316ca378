"""VectorCode returns line ranges, our questions name definitions: the mapping between them.

Split from `peers.py` (the ~500-line rule): this part needs only our chunker and the
evaluation matcher, not VectorCode.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from codeqa_lsp.retrieval.evaluation import Question, Retrieved, matches


def definition_spans(path: Path, rel: str) -> list[tuple[str, int, int]] | None:
    """(symbol, first line, last line) of every definition our chunker finds in `path`.

    Pieces of a split definition are merged back into one span. None when our chunker is
    not importable (then only file-level metrics mean anything).
    """
    try:
        from codeqa_lsp.chunking.chunker import chunk_source
    except ImportError:
        return None
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    spans: dict[str, tuple[int, int]] = {}
    for chunk in chunk_source(rel, text):
        if chunk.kind not in ("function", "method", "class") or not chunk.symbol:
            continue
        start, end = spans.get(chunk.symbol, (chunk.start_line, chunk.end_line))
        spans[chunk.symbol] = (min(start, chunk.start_line), max(end, chunk.end_line))
    return [(symbol, start, end) for symbol, (start, end) in spans.items()]


def innermost_containing(spans: Sequence[tuple[str, int, int]], start: int, end: int) -> str:
    """The smallest definition whose lines contain the whole chunk ("" when none)."""
    inside = [(e - s, symbol) for symbol, s, e in spans if s <= start and end <= e]
    return min(inside)[1] if inside else ""


def covered(spans: Sequence[tuple[str, int, int]], start: int, end: int) -> list[str]:
    """Definitions the chunk covers at least half of (a 60-line chunk swallowing a method)."""
    out = []
    for symbol, s, e in spans:
        overlap = min(e, end) - max(s, start) + 1
        if overlap > 0 and 2 * overlap >= e - s + 1:
            out.append(symbol)
    return out


class SymbolMapper:
    """Maps VectorCode's line-range chunks to our definitions, caching each file's spans.

    `contained` (the headline): a chunk stands for the innermost definition containing all
    its lines. `covers` (an upper bound, labelled as such): a chunk counts as an expected
    definition when it covers at least half of it - VectorCode's fixed-size chunks often
    hold a whole small method together with its neighbours, and this gives it that credit.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self._spans: dict[str, list[tuple[str, int, int]] | None] = {}

    def spans(self, rel: str) -> list[tuple[str, int, int]] | None:
        if rel not in self._spans:
            self._spans[rel] = definition_spans(self.root / rel, rel)
        return self._spans[rel]

    def retrieved(
        self, raw: Sequence[dict[str, Any]], question: Question, mode: str
    ) -> list[Retrieved]:
        out = []
        for item in raw:
            rel = Path(item["path"]).as_posix()
            if Path(rel).is_absolute():
                rel = Path(rel).relative_to(self.root).as_posix()
            spans = self.spans(rel) or []
            start, end = int(item.get("start_line") or 0), int(item.get("end_line") or 0)
            symbol = innermost_containing(spans, start, end)
            if mode == "covers":
                for candidate in covered(spans, start, end):
                    if any(matches(Retrieved(rel, candidate), e) for e in question.expected):
                        symbol = candidate
                        break
            out.append(Retrieved(rel, symbol))
        return out
