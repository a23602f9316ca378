"""Retrieval evaluation: question files, the matching rule, and the metrics.

Pure functions over plain records, so `codeqa eval`, the benchmarks and the unit tests all
score results the same way. The rules follow `shared/eval/README.md`:

* a retrieved chunk matches an expected entry when the paths are equal and the symbols are
  equal or their last dotted components are (`Route.dispatch` ~ `Route.prototype.dispatch`);
* pieces of one split definition count once: a ranked list is collapsed to definitions
  before ranks are taken, so a function split in three cannot push others out of the top 5;
* hit@1/5/10 and MRR@10 use the rank of the first matching definition, file hit@5 asks for
  any result from an expected file in the top 5, and nDCG@10 (single relevant item) is
  `1 / log2(rank + 1)`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

METRIC_NAMES: tuple[str, ...] = ("hit@1", "hit@5", "hit@10", "mrr@10", "file_hit@5", "ndcg@10")


@dataclass(frozen=True)
class Expected:
    path: str
    symbol: str


@dataclass(frozen=True)
class Question:
    id: str
    question: str
    expected: tuple[Expected, ...]
    type: str = ""
    lexical_overlap: str = ""  # "low" | "high" | "" (unknown)
    set_name: str = ""


@dataclass(frozen=True)
class Retrieved:
    """One ranked result as the scorer sees it: where it is and what it defines."""

    path: str
    symbol: str
    part: int = 0
    parts: int = 1


class QuestionFileError(ValueError):
    """A questions file line that cannot be used; the message names file and line."""


def load_questions(path: Path, set_name: str | None = None) -> list[Question]:
    """Read a JSON Lines questions file; blank lines are skipped, bad lines are errors."""
    questions: list[Question] = []
    name = set_name if set_name is not None else path.stem
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
            expected = tuple(
                Expected(path=str(e["path"]), symbol=str(e["symbol"])) for e in raw["expected"]
            )
            if not isinstance(raw["question"], str):
                raise ValueError("needs a question")
            # `expected: []` marks an off-topic question: the honest answer is "no
            # confident source" (shared/eval/offtopic); it is scored by confidence only.
            questions.append(
                Question(
                    id=str(raw.get("id", f"{name}-{lineno}")),
                    question=raw["question"],
                    expected=expected,
                    type=str(raw.get("type", "")),
                    lexical_overlap=str(raw.get("lexical_overlap", "")),
                    set_name=name,
                )
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise QuestionFileError(f"{path}:{lineno}: bad question line: {exc}") from exc
    return questions


def _last(symbol: str) -> str:
    return symbol.rsplit(".", 1)[-1]


def matches(item: Retrieved, expected: Expected) -> bool:
    """The README's rule: same path, and same symbol or same last dotted component."""
    if item.path != expected.path:
        return False
    return item.symbol == expected.symbol or _last(item.symbol) == _last(expected.symbol)


def collapse_parts(ranked: Iterable[Retrieved]) -> list[Retrieved]:
    """Keep the first piece of each split definition; later pieces take no rank."""
    seen: set[tuple[str, str]] = set()
    out: list[Retrieved] = []
    for item in ranked:
        if item.parts > 1:
            key = (item.path, item.symbol)
            if key in seen:
                continue
            seen.add(key)
        out.append(item)
    return out


def first_match_rank(ranked: Sequence[Retrieved], expected: Sequence[Expected]) -> int | None:
    """1-based rank of the first definition matching any expected entry, else None."""
    for rank, item in enumerate(collapse_parts(ranked), 1):
        if any(matches(item, e) for e in expected):
            return rank
    return None


def first_file_rank(ranked: Sequence[Retrieved], expected: Sequence[Expected]) -> int | None:
    paths = {e.path for e in expected}
    for rank, item in enumerate(collapse_parts(ranked), 1):
        if item.path in paths:
            return rank
    return None


@dataclass(frozen=True)
class QuestionResult:
    question: Question
    rank: int | None  # first matching definition
    file_rank: int | None  # first result from an expected file
    retrieved: tuple[Retrieved, ...] = ()

    @property
    def is_miss(self) -> bool:
        """Missed at the headline cut-off (hit@5)."""
        return self.rank is None or self.rank > 5


def score_question(question: Question, ranked: Sequence[Retrieved]) -> QuestionResult:
    return QuestionResult(
        question=question,
        rank=first_match_rank(ranked, question.expected),
        file_rank=first_file_rank(ranked, question.expected),
        retrieved=tuple(collapse_parts(ranked)[:10]),
    )


def question_metrics(rank: int | None, file_rank: int | None) -> dict[str, float]:
    def hit(r: int | None, k: int) -> float:
        return 1.0 if r is not None and r <= k else 0.0

    in10 = rank is not None and rank <= 10
    return {
        "hit@1": hit(rank, 1),
        "hit@5": hit(rank, 5),
        "hit@10": hit(rank, 10),
        "mrr@10": 1.0 / rank if in10 and rank else 0.0,
        "file_hit@5": hit(file_rank, 5),
        "ndcg@10": 1.0 / math.log2(rank + 1) if in10 and rank else 0.0,
    }


@dataclass
class Summary:
    """Mean metrics over a group of questions."""

    count: int = 0
    metrics: dict[str, float] = field(default_factory=lambda: dict.fromkeys(METRIC_NAMES, 0.0))

    def to_json(self) -> dict[str, Any]:
        return {"count": self.count, **{k: round(v, 4) for k, v in self.metrics.items()}}


def summarize(results: Sequence[QuestionResult]) -> Summary:
    summary = Summary(count=len(results))
    if not results:
        return summary
    for result in results:
        for name, value in question_metrics(result.rank, result.file_rank).items():
            summary.metrics[name] += value
    summary.metrics = {k: v / len(results) for k, v in summary.metrics.items()}
    return summary


def grouped(results: Sequence[QuestionResult]) -> dict[str, Summary]:
    """`all`, then per `lexical_overlap` (`low`/`high`), then per set when there are several."""
    groups: dict[str, list[QuestionResult]] = {"all": list(results)}
    for result in results:
        if result.question.lexical_overlap:
            groups.setdefault(f"overlap:{result.question.lexical_overlap}", []).append(result)
    sets = {r.question.set_name for r in results}
    if len(sets) > 1:
        for result in results:
            groups.setdefault(f"set:{result.question.set_name}", []).append(result)
    return {name: summarize(group) for name, group in groups.items()}


def miss_report(result: QuestionResult, limit: int = 5) -> dict[str, Any]:
    """A miss as a reader wants it: the question, what was expected, what came back."""
    return {
        "id": result.question.id,
        "question": result.question.question,
        "lexical_overlap": result.question.lexical_overlap,
        "expected": [f"{e.path}::{e.symbol}" for e in result.question.expected],
        "rank": result.rank,
        "got": [f"{r.path}::{r.symbol}" for r in result.retrieved[:limit]],
    }


def evaluate(
    questions: Sequence[Question], search: Callable[[str], Sequence[Retrieved]]
) -> list[QuestionResult]:
    """Run every question through `search` (one arm or the full pipeline) and score it.
    Off-topic questions (no expected entry) are not scored here: see `confidence_shares`."""
    return [score_question(q, search(q.question)) for q in questions if q.expected]


def confidence_shares(
    questions: Sequence[Question], confident: Callable[[Question], bool]
) -> dict[str, Any]:
    """Share of real questions answered confidently (want high) and of off-topic ones
    (want low: at most 10% in the issue's target), naming the confident off-topic ones."""
    real = [q for q in questions if q.expected]
    off = [q for q in questions if not q.expected]
    real_ok = sum(1 for q in real if confident(q))
    off_confident = [q for q in off if confident(q)]
    return {
        "real_confident": round(real_ok / len(real), 4) if real else None,
        "offtopic_confident": round(len(off_confident) / len(off), 4) if off else None,
        "offtopic_count": len(off),
        "offtopic_confident_questions": [q.question for q in off_confident],
    }


def report(results: Sequence[QuestionResult]) -> dict[str, Any]:
    """Self-describing JSON for one arm: metrics per group and every miss (hit@5)."""
    return {
        "groups": {name: s.to_json() for name, s in grouped(results).items()},
        "misses": [miss_report(r) for r in results if r.is_miss],
        "ranks": {r.question.id: r.rank for r in results},
    }
