"""`codeqa index/search/list/stats` in-process: output shapes and exit codes."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from codeqa_lsp.cli import main


def _json_lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


@pytest.fixture
def indexed(make_workspace: Callable[..., Path], tmp_path: Path) -> tuple[Path, list[str]]:
    root = make_workspace()
    common = ["--embedder", "hash", "--index-dir", str(tmp_path / "idx")]
    return root, common


def test_index_then_warm_index(
    indexed: tuple[Path, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    root, common = indexed
    assert main(["index", str(root), *common, "--json"]) == 0
    report = _json_lines(capsys.readouterr().out)[0]
    assert report["files_changed"] == 6 and report["embedded"] == report["chunks_total"] > 0
    assert report["status"]["embedder"] == "hash" and report["kinds"]["function"] == 24
    assert main(["index", str(root), *common]) == 0
    human = capsys.readouterr().out
    assert human.startswith("Indexed 30 functions and 6 classes") and "embedded: 0 new" in human


def test_index_takes_root_as_the_other_commands_spell_it(
    indexed: tuple[Path, list[str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`codeqa index --root DIR` is `codeqa index DIR`; both at once must agree."""
    root, common = indexed
    assert main(["index", "--root", str(root), *common, "--json"]) == 0
    report = _json_lines(capsys.readouterr().out)[0]
    assert report["status"]["root"] == str(root.resolve()) and report["files_changed"] == 6
    assert main(["index", str(root), "--root", str(root / "pkg" / ".."), *common]) == 0
    assert "embedded: 0 new" in capsys.readouterr().out
    assert main(["index", str(root), "--root", str(tmp_path), *common]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("codeqa: ROOT (") and "differ" in err[0]


def test_search_single_and_batch(
    indexed: tuple[Path, list[str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root, common = indexed
    assert (
        main(
            ["search", "compute_total_2_3", "--root", str(root), *common, "--json", "--top-k", "3"]
        )
        == 0
    )
    result = _json_lines(capsys.readouterr().out)[0]
    top = result["results"][0]
    assert top["symbol"] == "compute_total_2_3" and top["path"] == "pkg/mod2.py"
    assert {
        "path",
        "symbol",
        "kind",
        "start_line",
        "end_line",
        "score",
        "bm25_rank",
        "dense_rank",
    } <= set(top)
    queries = tmp_path / "q.jsonl"
    queries.write_text(
        json.dumps({"question": "send request session 4", "id": "a"})
        + "\n\n"
        + json.dumps({"question": "compute_total_1_0"})
        + "\n"
    )
    assert (
        main(
            ["search", "--root", str(root), *common, "--queries", str(queries), "--lang", "python"]
        )
        == 0
    )
    lines = _json_lines(capsys.readouterr().out)
    assert [line["question"] for line in lines] == ["send request session 4", "compute_total_1_0"]
    assert lines[0]["id"] == "a" and lines[1]["results"][0]["symbol"] == "compute_total_1_0"
    assert (
        main(
            [
                "search",
                "session",
                "--root",
                str(root),
                *common,
                "--show-scores",
                "--path",
                "pkg/mod3.py",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "pkg/mod3.py" in out and "pkg/mod2.py" not in out and "bm25=" in out


def test_list_and_stats(
    indexed: tuple[Path, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    root, common = indexed
    assert main(["list", "--root", str(root), *common, "--file", "pkg/mod0.py", "--json"]) == 0
    rows = _json_lines(capsys.readouterr().out)
    assert rows and {r["path"] for r in rows} == {"pkg/mod0.py"}
    assert "Session0.send_request_0" in {r["symbol"] for r in rows}
    assert main(["stats", "--root", str(root), *common, "--json"]) == 0
    stats = _json_lines(capsys.readouterr().out)[0]
    assert stats["files"] == 6 and stats["languages"] == {"python": stats["chunks"]}
    assert stats["coverage"] == 1.0 and stats["size_bytes"] > 0 and stats["last_updated"]
    assert main(["stats", "--root", str(root), *common]) == 0
    assert "embedder:      hash" in capsys.readouterr().out


def test_usage_and_runtime_errors_are_one_line(
    indexed: tuple[Path, list[str]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    root, common = indexed
    assert main(["search", "--root", str(root), *common]) == 2
    assert main(["search", "x", "--root", str(tmp_path / "nope"), *common]) == 2
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": 1}\n')
    assert main(["search", "--root", str(root), *common, "--queries", str(bad)]) == 2
    assert main(["search", "x", "--root", str(root), *common, "--top-k", "0"]) == 2
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert (
        main(["index", str(root), "--embedder", "openai", "--index-dir", str(tmp_path / "o")]) == 1
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("codeqa: error:") and "API key" in err[-1]
    assert all(line.startswith("codeqa:") for line in err)


def test_without_root_the_project_around_the_current_directory_is_used(
    indexed: tuple[Path, list[str]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Run from a subdirectory, every command finds the root marked by `.git` (an index is
    keyed by its root: a second index of the subdirectory would be a silent surprise)."""
    root, common = indexed
    (root / ".git").mkdir()
    monkeypatch.chdir(root / "pkg")
    assert main(["index", *common, "--json"]) == 0
    report = _json_lines(capsys.readouterr().out)[0]
    assert report["status"]["root"] == str(root.resolve()) and report["files_changed"] == 6
    assert main(["search", "compute_total_2_3", *common, "--json", "--top-k", "1"]) == 0
    results = _json_lines(capsys.readouterr().out)[0]["results"]
    assert len(results) == 1 and results[0]["path"] == "pkg/mod2.py"
    assert main(["search", "compute_total_2_3", *common, "--json", "-k", "2"]) == 0
    assert len(_json_lines(capsys.readouterr().out)[0]["results"]) == 2
    assert main(["stats", *common, "--json"]) == 0
    assert _json_lines(capsys.readouterr().out)[0]["root"] == str(root.resolve())
    # Without a marker anywhere above, the current directory is the root.
    bare = tmp_path / "bare" / "sub"
    bare.mkdir(parents=True)
    monkeypatch.chdir(bare)
    assert main(["stats", "--embedder", "hash", "--index-dir", str(tmp_path / "b"), "--json"]) == 0
    assert _json_lines(capsys.readouterr().out)[0]["root"] == str(bare.resolve())
