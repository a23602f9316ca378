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

All methods work on ids and scores only (higher is better in every arm) and treat an arm
with no results as absent, so the other arm's order passes through unchanged.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

FusionMethod = Literal["rrf", "minmax", "zscore"]
Ranked = Sequence[tuple[str, float]]  # (id, raw score), best first


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

    def weight(self, arm: str) -> float:
        return float(self.weights.get(arm, 1.0))


DEFAULT_FUSION = FusionConfig()

# The arms are not equally good with every embedder: the hashing embedder's "dense" arm is
# a blurred keyword match, so BM25 should lead; a semantic model earns more weight. Chosen
# on the evaluation sets (bench/quality.py; numbers in BENCHMARKS.md).
FUSION_BY_EMBEDDER: dict[str, FusionConfig] = {
    "hash": FusionConfig(method="minmax", weights={"bm25": 0.6, "dense": 0.4}),
    "local": FusionConfig(method="minmax", weights={"bm25": 0.4, "dense": 0.6}),
}


def fusion_for(embedder_name: str) -> FusionConfig:
    """The measured fusion for an embedder; unknown (remote) embedders get the default."""
    return FUSION_BY_EMBEDDER.get(embedder_name, DEFAULT_FUSION)


def fuse(arms: Mapping[str, Ranked], config: FusionConfig = DEFAULT_FUSION) -> list[tuple[str, float]]:
    """Fused (id, score) list, best first; ties keep first-seen order (stable)."""
    present = {name: ranked for name, ranked in arms.items() if ranked}
    if not present:
        return []
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
