"""`codeqa eval` end to end: a real index of a small repo, scored per arm."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codeqa_lsp.cli import main
from tests.retrieval.test_search import _write_repo

QUESTIONS = [
    {
        "id": "t-1",
        "question": "retry a failing network call with exponential backoff",
        "expected": [{"path": "app/session.py", "symbol": "retry_with_backoff"}],
        "lexical_overlap": "high",
    },
    {
        "id": "t-2",
        "question": "which transport is chosen for a url prefix",
        "expected": [{"path": "app/session.py", "symbol": "Session.get_adapter"}],
        "lexical_overlap": "low",
    },
    {
        "id": "t-3",
        "question": "chocolate cake recipe",
        "expected": [{"path": "nowhere.py", "symbol": "cake"}],
        "lexical_overlap": "low",
    },
]


@pytest.fixture
def questions(tmp_path: Path) -> Path:
    path = tmp_path / "q.jsonl"
    path.write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS))
    return path


def test_eval_json_reports_every_arm_and_the_misses(
    tmp_path: Path, questions: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _write_repo(tmp_path / "repo")
    code = main(
        [
            "eval",
            str(questions),
            "--root",
            str(root),
            "--embedder",
            "hash",
            "--index-dir",
            str(tmp_path / "idx"),
            "--json",
        ]
    )
    assert code == 0
    doc = json.loads(capsys.readouterr().out)
    assert set(doc["arms"]) == {"bm25", "dense", "hybrid"}
    hybrid = doc["arms"]["hybrid"]
    assert hybrid["groups"]["all"]["count"] == 3
    assert hybrid["ranks"]["t-1"] == 1
    missed = {m["id"]: m for m in hybrid["misses"]}
    assert "t-3" in missed and "t-1" not in missed
    assert missed["t-3"]["expected"] == ["nowhere.py::cake"] and missed["t-3"]["rank"] is None
    assert len(missed["t-3"]["got"]) > 0
    assert hybrid["groups"]["overlap:low"]["count"] == 2


def test_eval_text_and_usage_errors(
    tmp_path: Path, questions: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _write_repo(tmp_path / "repo")
    args = ["--root", str(root), "--embedder", "hash", "--index-dir", str(tmp_path / "idx")]
    assert main(["eval", str(questions), *args, "--arms", "bm25"]) == 0
    out = capsys.readouterr().out
    assert "bm25     all" in out and "missed at hit@5" in out and "nowhere.py::cake" in out
    assert main(["eval", str(questions), *args, "--arms", "sparse"]) == 2
    assert main(["eval", str(tmp_path / "missing.jsonl"), *args]) == 2
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "no expected"}\n')
    assert main(["eval", str(bad), *args]) == 1
    assert "bad.jsonl:1" in capsys.readouterr().err
