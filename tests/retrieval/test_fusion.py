"""Properties every fusion method must have, whatever the weights the benchmark chose."""

from __future__ import annotations

import pytest

from codeqa_lsp.retrieval.fusion import DEFAULT_FUSION, FusionConfig, fuse

METHODS = [
    FusionConfig(method="rrf", weights={"bm25": 1.0, "dense": 1.0}),
    FusionConfig(method="minmax", weights={"bm25": 0.4, "dense": 0.6}),
    FusionConfig(method="zscore", weights={"bm25": 0.5, "dense": 0.5}),
    DEFAULT_FUSION,
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
