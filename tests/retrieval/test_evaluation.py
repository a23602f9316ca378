"""The matcher and metrics on hand-built rankings, so benchmark numbers can be trusted."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from codeqa_lsp.retrieval.evaluation import (
    Expected,
    Question,
    QuestionFileError,
    Retrieved,
    first_match_rank,
    grouped,
    load_questions,
    matches,
    score_question,
    summarize,
)


def test_symbols_match_on_equal_or_last_dotted_component() -> None:
    expected = Expected("lib/router/route.js", "Route.prototype.dispatch")
    assert matches(Retrieved("lib/router/route.js", "Route.prototype.dispatch"), expected)
    assert matches(Retrieved("lib/router/route.js", "Route.dispatch"), expected)
    assert matches(Retrieved("lib/router/route.js", "dispatch"), expected)
    assert not matches(Retrieved("lib/router/route.js", "Route.prototype.dispatcher"), expected)
    assert not matches(Retrieved("lib/router/index.js", "Route.dispatch"), expected)


def test_split_definition_pieces_take_one_rank() -> None:
    ranked = [
        Retrieved("a.py", "big", part=0, parts=3),
        Retrieved("a.py", "big", part=1, parts=3),
        Retrieved("a.py", "big", part=2, parts=3),
        Retrieved("b.py", "target"),
    ]
    assert first_match_rank(ranked, [Expected("b.py", "target")]) == 2


def test_unsplit_duplicates_keep_their_ranks() -> None:
    ranked = [Retrieved("a.py", "f"), Retrieved("a.py", "f"), Retrieved("b.py", "g")]
    assert first_match_rank(ranked, [Expected("b.py", "g")]) == 3


def test_any_expected_entry_counts() -> None:
    ranked = [Retrieved("x.py", "n"), Retrieved("b.py", "B.second")]
    assert first_match_rank(ranked, [Expected("a.py", "first"), Expected("b.py", "second")]) == 2


def _q(qid: str, overlap: str, set_name: str = "s") -> Question:
    return Question(qid, "q?", (Expected("a.py", "f"),), lexical_overlap=overlap, set_name=set_name)


def test_metrics_from_ranks() -> None:
    hit_first = score_question(_q("1", "low"), [Retrieved("a.py", "f")])
    hit_third = score_question(
        _q("2", "high"), [Retrieved("a.py", "g"), Retrieved("z.py", "h"), Retrieved("a.py", "f")]
    )
    miss = score_question(_q("3", "low"), [Retrieved("z.py", "f")] * 12)
    summary = summarize([hit_first, hit_third, miss])
    assert summary.count == 3
    assert summary.metrics["hit@1"] == pytest.approx(1 / 3)
    assert summary.metrics["hit@5"] == pytest.approx(2 / 3)
    assert summary.metrics["mrr@10"] == pytest.approx((1 + 1 / 3) / 3)
    assert summary.metrics["file_hit@5"] == pytest.approx(2 / 3)
    assert summary.metrics["ndcg@10"] == pytest.approx((1 + 1 / math.log2(4)) / 3)
    assert miss.is_miss and not hit_third.is_miss


def test_rank_beyond_ten_scores_zero_mrr_but_counts_nowhere() -> None:
    ranked = [Retrieved("z.py", f"n{i}") for i in range(10)] + [Retrieved("a.py", "f")]
    result = score_question(_q("1", "low"), ranked)
    assert result.rank == 11
    assert summarize([result]).metrics["mrr@10"] == 0.0


def test_grouping_by_overlap_and_set() -> None:
    results = [
        score_question(_q("1", "low", "s1"), [Retrieved("a.py", "f")]),
        score_question(_q("2", "high", "s2"), []),
    ]
    groups = grouped(results)
    assert groups["all"].count == 2
    assert groups["overlap:low"].metrics["hit@1"] == 1.0
    assert groups["overlap:high"].metrics["hit@1"] == 0.0
    assert groups["set:s2"].count == 1


def test_load_questions_reports_bad_line(tmp_path: Path) -> None:
    good = (
        '{"id": "x-1", "question": "why?", "expected": [{"path": "a.py", "symbol": "f"}], '
        '"lexical_overlap": "low"}'
    )
    path = tmp_path / "x.jsonl"
    path.write_text(good + "\n\n")
    [question] = load_questions(path)
    assert question.set_name == "x" and question.expected == (Expected("a.py", "f"),)
    path.write_text(good + '\n{"id": "x-2", "question": "no expected"}\n')
    with pytest.raises(QuestionFileError, match=r"x.jsonl:2"):
        load_questions(path)


def test_offtopic_questions_load_and_are_scored_by_confidence_only(tmp_path: Path) -> None:
    from codeqa_lsp.retrieval.evaluation import confidence_shares, evaluate

    path = tmp_path / "mixed.jsonl"
    path.write_text(
        '{"id": "r", "question": "real?", "expected": [{"path": "a.py", "symbol": "f"}]}\n'
        '{"id": "o1", "question": "thumbnails?", "expected": []}\n'
        '{"id": "o2", "question": "oauth refresh?", "expected": []}\n'
    )
    questions = load_questions(path)
    assert [q.id for q in questions] == ["r", "o1", "o2"]
    assert [r.question.id for r in evaluate(questions, lambda text: [])] == ["r"]
    shares = confidence_shares(questions, lambda q: q.id in ("r", "o2"))
    assert shares["real_confident"] == 1.0 and shares["offtopic_confident"] == 0.5
    assert shares["offtopic_confident_questions"] == ["oauth refresh?"]
