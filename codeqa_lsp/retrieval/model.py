"""Search results, free of any storage or protocol types (the request's filters are
`index.filters.SearchFilters`: the index applies them)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
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


def search_hits(
    ranked: Sequence[tuple[Chunk, float]],
    bm25: Sequence[tuple[Chunk, float]],
    dense: Sequence[tuple[Chunk, float]] | None,
    cosines: Mapping[str, float],
    exact_ids: set[str],
    used: Mapping[str, tuple[int, ...]],
) -> list[SearchHit]:
    """The hits of a final ranking, each with its rank and score in either arm (a chunk the
    dense arm did not return keeps its cosine, when it was computed), whether the query named
    it, and the lines of its uses."""
    bm25_of = {c.id: (rank, s) for rank, (c, s) in enumerate(bm25, 1)}
    dense_of = {c.id: (rank, s) for rank, (c, s) in enumerate(dense or [], 1)}
    hits = []
    for chunk, score in ranked:
        b_rank, b_score = bm25_of.get(chunk.id, (None, None))
        d_rank, d_score = dense_of.get(chunk.id, (None, cosines.get(chunk.id)))
        hits.append(
            SearchHit(
                chunk=chunk,
                score=float(score),
                bm25_rank=b_rank,
                bm25_score=b_score,
                dense_rank=d_rank,
                dense_score=d_score,
                exact_symbol=chunk.id in exact_ids,
                use_lines=used.get(chunk.id, ()),
            )
        )
    return hits
