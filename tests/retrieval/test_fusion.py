"""Properties every fusion method must have, whatever the weights the benchmark chose."""

from __future__ import annotations

import pytest

from codeqa_lsp.retrieval.fusion import (
    DEFAULT_FUSION,
    DenseConfidence,
    FusionConfig,
    fuse,
    fusion_for,
)

ADAPTIVE = FusionConfig(
    method="minmax",
    weights={"bm25": 0.4, "dense": 0.6},
    dense_confidence=DenseConfidence(low=0.45, high=0.70, bm25_high=0.6, bm25_low=0.1),
)

METHODS = [
    FusionConfig(method="rrf", weights={"bm25": 1.0, "dense": 1.0}),
    FusionConfig(method="minmax", weights={"bm25": 0.4, "dense": 0.6}),
    FusionConfig(method="zscore", weights={"bm25": 0.5, "dense": 0.5}),
    DEFAULT_FUSION,
    ADAPTIVE,
    fusion_for("local"),
]


@pytest.mark.parametrize("config", METHODS, ids=lambda c: c.method)
def test_top_in_both_arms_ranks_first(config: FusionConfig) -> None:
    arms = {
        "bm25": [("a", 12.0), ("b", 11.5), ("c", 3.0)],
        "dense": [("a", 0.71), ("c", 0.70), ("d", 0.2)],
    }
    fused = fuse(arms, config)
    assert fused[0][0] == "a"
    assert {doc for doc, _ in fused} == {"a", "b", "c", "d"}


@pytest.mark.parametrize("config", METHODS, ids=lambda c: c.method)
def test_empty_arm_passes_other_order_through(config: FusionConfig) -> None:
    dense = [("x", 0.9), ("y", 0.5), ("z", 0.1)]
    assert [doc for doc, _ in fuse({"bm25": [], "dense": dense}, config)] == ["x", "y", "z"]
    assert fuse({"bm25": [], "dense": []}, config) == []


@pytest.mark.parametrize("config", METHODS, ids=lambda c: c.method)
def test_single_result_arms_and_equal_scores_do_not_divide_by_zero(config: FusionConfig) -> None:
    fused = fuse({"bm25": [("a", 5.0)], "dense": [("b", 0.3), ("c", 0.3)]}, config)
    assert len(fused) == 3
    assert all(score == score for _, score in fused)  # no NaN


def test_weights_decide_between_disagreeing_arms() -> None:
    arms = {"bm25": [("lex", 10.0), ("sem", 1.0)], "dense": [("sem", 0.8), ("lex", 0.1)]}
    dense_heavy = FusionConfig(method="minmax", weights={"bm25": 0.2, "dense": 0.8})
    bm25_heavy = FusionConfig(method="minmax", weights={"bm25": 0.8, "dense": 0.2})
    assert fuse(arms, dense_heavy)[0][0] == "sem"
    assert fuse(arms, bm25_heavy)[0][0] == "lex"


def test_dense_confidence_weights_are_linear_between_the_thresholds() -> None:
    rule = DenseConfidence(low=0.4, high=0.8, bm25_high=0.5, bm25_low=0.1)
    assert rule.weights(0.2) == pytest.approx({"bm25": 0.5, "dense": 0.5})
    assert rule.weights(0.6) == pytest.approx({"bm25": 0.3, "dense": 0.7})
    assert rule.weights(0.95) == pytest.approx({"bm25": 0.1, "dense": 0.9})
    # A degenerate band (low == high) is a step, not a division by zero.
    step = DenseConfidence(low=0.5, high=0.5, bm25_high=0.5, bm25_low=0.1)
    assert step.weights(0.49)["bm25"] == pytest.approx(0.1)


def test_a_confident_dense_arm_outweighs_a_keyword_match() -> None:
    """The same disagreement is settled by BM25 when the dense arm is guessing (top cosine
    0.40) and by the dense arm when it has clearly recognised the query (top cosine 0.90)."""

    def arms(top_cosine: float) -> dict[str, list[tuple[str, float]]]:
        return {
            "bm25": [("lex", 10.0), ("mid", 4.0), ("sem", 1.0)],
            "dense": [("sem", top_cosine), ("mid", top_cosine - 0.05), ("lex", top_cosine - 0.15)],
        }

    assert fuse(arms(0.40), ADAPTIVE)[0][0] == "lex"
    assert fuse(arms(0.90), ADAPTIVE)[0][0] == "sem"
    # Fixed weights ignore the cosine's level: only its shape within the list counts.
    fixed = FusionConfig(method="minmax", weights={"bm25": 0.6, "dense": 0.4})
    assert fuse(arms(0.40), fixed)[0][0] == fuse(arms(0.90), fixed)[0][0] == "lex"


def test_measured_configs_per_embedder() -> None:
    assert fusion_for("local").dense_confidence is not None
    assert fusion_for("hash").dense_confidence is None  # its cosines say little
    assert fusion_for("some-remote-model") == DEFAULT_FUSION
