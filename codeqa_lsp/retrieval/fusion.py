"""Fusing the ranked lists of the BM25 and dense arms into one ranking.

Why not plain Reciprocal Rank Fusion: on CoSQA equal-weight RRF (0.510 nDCG@10) loses to
the dense arm alone (0.603), because RRF throws the scores away: a BM25 list whose top is a
weak, accidental term match counts as much as a dense list with a clear winner. Several
methods are implemented here so the benchmark (`bench/quality.py`) can measure them side by
side; `fusion_for(embedder)` returns the one the measurements chose.

Measured 2026-11-21 on the 100 questions (hit@5 / MRR@10, with path priors and the dense
cosine completed for every BM25 candidate, see search.py):
  local: minmax bm25 0.3 → 0.79/0.61, 0.4 → 0.81/0.62, 0.5 → 0.80/0.59 (requests, click,
         express); z-score and weighted RRF were 0.02-0.05 lower at every weight tried.
  hash:  minmax bm25 0.5 → 0.71/0.54, 0.6 → 0.72/0.55, 0.7 → 0.71/0.54, 0.8 → 0.71/0.55.

Measured 2026-11-21 (second pass), local: a fixed BM25 weight cannot suit both kinds of
query. The repository questions want BM25 near 0.4; on CoSQA (short web queries over
small functions) any BM25 weight above ~0.15 drags nDCG@10 below the dense arm alone
(0.4 → 0.541 against dense 0.599). The dense arm says which case it is in: its top cosine
is high (CoSQA median 0.70) when the embedder has clearly recognised what is asked, and
middling (questions median ~0.50) when it is guessing. `DenseConfidence` therefore lowers
the BM25 weight as the top cosine rises: 0.45 at or below 0.45, 0.15 at or above 0.70.
  local, hit@5 / MRR@10 on the 100 questions, CoSQA nDCG@10 (bench/quality.py):
    fixed bm25 0.4                      0.76/0.58  CoSQA 0.541  (dense alone 0.596)
    dense confidence, BM25 arm 100 deep 0.77/0.60  CoSQA 0.598  (search.py)
  Tried and dropped (no gain on the questions, or a loss on CoSQA): weighting BM25 by its
  top-score gap, by whether the query names identifiers, by how much of the query its top
  hit contains, by the cosine of its top hits; gating BM25 by the candidate's cosine;
  dividing BM25 by its max instead of min-max; min-max of the dense arm over its own list
  only; a small RRF term mixed in; a dense arm 100 deep. Re-shaping the cosine space
  (2026-11-26, exact search over every window, the 100 questions, dense / hybrid hit@5 /
  MRR@10 against 0.68 / 0.476 and 0.86 / 0.748): chunk vectors centred on the index's mean
  0.70 / 0.446 and 0.83 / 0.682; the top principal component removed from chunks and
  question ("all-but-the-top") 0.68 / 0.439 and 0.83 / 0.693; two components 0.64 / 0.412
  and 0.83 / 0.687. MiniLM's raw cosines rank best.
The hashing embedder's cosines say little (its dense arm alone scores 0.168 on CoSQA), so
it keeps a fixed weight.

All methods work on ids and scores only (higher is better in every arm) and treat an arm
with no results as absent, so the other arm's order passes through unchanged.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from codeqa_lsp.chunking.model import Chunk

FusionMethod = Literal["rrf", "minmax", "zscore"]
Ranked = Sequence[tuple[str, float]]  # (id, raw score), best first


@dataclass(frozen=True)
class DenseConfidence:
    """BM25's weight by how sure the dense arm is: `bm25_high` while the dense arm's top
    score is at or below `low`, `bm25_low` from `high` up, linear in between. The dense
    arm's weight is the rest (1 - BM25's). Thresholds are in the embedder's cosine scale."""

    low: float
    high: float
    bm25_high: float
    bm25_low: float

    def weights(self, top_dense: float) -> dict[str, float]:
        span = self.high - self.low
        share = 1.0 if span <= 0 else (top_dense - self.low) / span
        share = min(1.0, max(0.0, share))
        bm25 = self.bm25_high + (self.bm25_low - self.bm25_high) * share
        return {"bm25": bm25, "dense": 1.0 - bm25}


@dataclass(frozen=True)
class FusionConfig:
    """How to fuse. `weights` maps arm name → weight; arms not named weigh 1.

    * `rrf`: sum of weight / (k + rank).
    * `minmax`: convex combination of scores min-max normalised per arm over its list;
      an id absent from an arm scores 0 there.
    * `zscore`: like minmax with z-scores; an id absent from an arm gets that arm's
      lowest z-score.
    """

    method: FusionMethod = "minmax"
    weights: Mapping[str, float] = field(default_factory=lambda: {"bm25": 0.3, "dense": 0.7})
    rrf_k: int = 60
    # When set, replaces `weights` per query from the dense arm's top score.
    dense_confidence: DenseConfidence | None = None

    def weight(self, arm: str) -> float:
        return float(self.weights.get(arm, 1.0))

    def for_query(self, arms: Mapping[str, Ranked]) -> FusionConfig:
        """The config with this query's weights (itself when the weights are fixed)."""
        dense = arms.get("dense")
        if self.dense_confidence is None or not dense:
            return self
        top = max(score for _, score in dense)
        return replace(self, weights=self.dense_confidence.weights(top), dense_confidence=None)


DEFAULT_FUSION = FusionConfig()

# The arms are not equally good with every embedder: the hashing embedder's "dense" arm is
# a blurred keyword match, so BM25 should lead; a semantic model earns more weight. Chosen
# on the evaluation sets (bench/quality.py; numbers in BENCHMARKS.md).
FUSION_BY_EMBEDDER: dict[str, FusionConfig] = {
    "hash": FusionConfig(method="minmax", weights={"bm25": 0.6, "dense": 0.4}),
    "local": FusionConfig(
        method="minmax",
        weights={"bm25": 0.4, "dense": 0.6},
        dense_confidence=DenseConfidence(low=0.45, high=0.70, bm25_high=0.45, bm25_low=0.15),
    ),
}


def fusion_for(embedder_name: str) -> FusionConfig:
    """The measured fusion for an embedder; unknown (remote) embedders get the default."""
    return FUSION_BY_EMBEDDER.get(embedder_name, DEFAULT_FUSION)


def fuse(
    arms: Mapping[str, Ranked], config: FusionConfig = DEFAULT_FUSION
) -> list[tuple[str, float]]:
    """Fused (id, score) list, best first; ties keep first-seen order (stable)."""
    present = {name: ranked for name, ranked in arms.items() if ranked}
    if not present:
        return []
    config = config.for_query(present)
    scores = _rrf(present, config) if config.method == "rrf" else _normalized(present, config)
    order = {doc: i for i, doc in enumerate(_first_seen(present))}
    return sorted(scores.items(), key=lambda item: (-item[1], order[item[0]]))


def _first_seen(arms: Mapping[str, Ranked]) -> list[str]:
    seen: dict[str, None] = {}
    for ranked in arms.values():
        for doc, _ in ranked:
            seen.setdefault(doc, None)
    return list(seen)


def _rrf(arms: Mapping[str, Ranked], config: FusionConfig) -> dict[str, float]:
    scores: dict[str, float] = {}
    for name, ranked in arms.items():
        weight = config.weight(name)
        for rank, (doc, _) in enumerate(ranked, 1):
            scores[doc] = scores.get(doc, 0.0) + weight / (config.rrf_k + rank)
    return scores


def normalize(values: Sequence[float], method: FusionMethod) -> tuple[list[float], float]:
    """Normalised values and the value an absent id gets in this arm."""
    if method == "zscore":
        mean = sum(values) / len(values)
        std = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
        if std == 0:
            return [0.0] * len(values), -1.0
        normed = [(v - mean) / std for v in values]
        return normed, min(normed)
    low, high = min(values), max(values)
    if high == low:
        return [1.0] * len(values), 0.0
    return [(v - low) / (high - low) for v in values], 0.0


def _normalized(arms: Mapping[str, Ranked], config: FusionConfig) -> dict[str, float]:
    every = _first_seen(arms)
    scores = dict.fromkeys(every, 0.0)
    for name, ranked in arms.items():
        weight = config.weight(name)
        normed, absent = normalize([score for _, score in ranked], config.method)
        got = {doc: value for (doc, _), value in zip(ranked, normed, strict=True)}
        for doc in every:
            scores[doc] += weight * got.get(doc, absent)
    return scores


def added_scores(
    base: list[tuple[Chunk, float]], extra: list[tuple[Chunk, float]], weight: float, limit: int
) -> list[tuple[Chunk, float]]:
    """`base` (BM25) plus `weight` x each score in `extra`, the BM25 list of added terms
    (`expansion.py`, `feedback.py`); best first, at most `limit`."""
    chunks = {c.id: c for c, _ in base}
    scores = {c.id: s for c, s in base}
    for chunk, score in extra:
        chunks.setdefault(chunk.id, chunk)
        scores[chunk.id] = scores.get(chunk.id, 0.0) + weight * score
    ranked = sorted(scores.items(), key=lambda item: -item[1])[:limit]
    return [(chunks[doc], score) for doc, score in ranked]
