"""Search results, free of any storage or protocol types (the request's filters are
`index.filters.SearchFilters`: the index applies them)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from codeqa_lsp.chunking.model import Chunk


@dataclass(frozen=True)
class SearchHit:
    chunk: Chunk
    score: float  # fused score, higher is better
    bm25_rank: int | None = None  # 1-based rank in the BM25 arm, None if absent
    bm25_score: float | None = None
    dense_rank: int | None = None
    dense_score: float | None = None  # cosine similarity
    exact_symbol: bool = False  # promoted by the exact-symbol fast path
    # A question about uses (`who calls f?`): the lines (1-based) where this hit uses `f`.
    use_lines: tuple[int, ...] = ()


class Use(NamedTuple):
    """A chunk that uses a name, and the lines (1-based, in the file) where it does: where a
    caller calls, so a click or an agent lands on the call, not on the caller's first line
    (`uses.py`)."""

    chunk: Chunk
    lines: tuple[int, ...]


@dataclass(frozen=True)
class SearchResponse:
    query: str
    hits: list[SearchHit] = field(default_factory=list)
    confident: bool = False
    coverage: float = 1.0  # share of chunks embedded when the query ran
    reason: str = ""  # why not confident, for the user and for logs
