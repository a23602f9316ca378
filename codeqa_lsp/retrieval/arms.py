"""What the two arms of one search returned, and what the pipeline reads about the query
beside it (`search.HybridSearcher._run_arms` fills it; every later step reads it)."""

from __future__ import annotations

from dataclasses import dataclass, field

from codeqa_lsp.chunking.model import Chunk

# The dense arm's list and the BM25 list of the words its first chunks lend (`feedback.py`).
DenseSide = tuple[list[tuple[Chunk, float]], list[tuple[Chunk, float]]]


@dataclass
class Arms:
    bm25: list[tuple[Chunk, float]]
    dense: list[tuple[Chunk, float]] | None  # None: the dense arm did not run
    terms: list[str] = field(default_factory=list)  # the BM25 terms (salient ones if long)
    long_query: bool = False  # a pasted issue (`query.LONG_QUERY_TERMS`)
    report: bool = False  # a short bug report (`query.is_report`)
    # Cosine of every candidate that has a vector, including BM25 candidates the dense arm
    # did not return (`HybridSearcher._complete_cosines`).
    cosines: dict[str, float] = field(default_factory=dict)
    # BM25's fusion weight for this query (set by `_hybrid`; the second stage scales the
    # whole-file BM25 term by it).
    bm25_share: float | None = None
