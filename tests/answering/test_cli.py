"""`codeqa ask` / `codeqa explain` through the real CLI entry point."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from codeqa_lsp.cli import main
from tests.fakes.llm_server import FakeLLMServer, Reply, Status


def cli(repo: Path, tmp_path: Path, *args: str) -> list[str]:
    return [
        *args,
        "--root",
        str(repo),
        "--embedder",
        "hash",
        "--index-dir",
        str(tmp_path / "cli-index"),
    ]


def test_ask_extractive_prints_answer_then_citations(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(cli(repo, tmp_path, "ask", "how is the coupon discount computed?")) == 0
    out = capsys.readouterr().out
    assert "No language model is configured" in out
    citations = out.split("\nCitations:\n", 1)[1].splitlines()
    line = next(c for c in citations if c.endswith("  compute_discount"))
    match = re.fullmatch(r"\[\d+\] shop/pricing\.py:(\d+)-(\d+)  compute_discount", line)
    assert match is not None
    source = (repo / "shop/pricing.py").read_text().splitlines()
    assert source[int(match[1]) - 1].startswith("def compute_discount")


def test_ask_json_and_show_context(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        main(cli(repo, tmp_path, "ask", "where is reserve_stock", "--json", "--show-context")) == 0
    )
    context, answer = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert context["context"][0]["symbol"] == "reserve_stock" and context["context"][0]["score"] > 0
    assert answer["citations"][0]["symbol"] == "reserve_stock"
    assert answer["provider"] == "extractive" and answer["chunks"][0]["path"] == "shop/inventory.py"


def test_ask_streams_from_a_provider(
    repo: Path,
    tmp_path: Path,
    fake_llm: FakeLLMServer,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    fake_llm.script("chat", Reply("It multiplies by 0.1 [1] [42].", deltas=3))
    args = cli(
        repo,
        tmp_path,
        "ask",
        "how is the coupon discount computed?",
        "--provider",
        "openai",
        "--model",
        "local-llm",
        "--base-url",
        fake_llm.openai_url,
        "--no-cache",
    )
    assert main(args) == 0
    out = capsys.readouterr().out
    assert out.startswith("It multiplies by 0.1 [1] [42].")  # streamed as it came
    assert "removed 1 citation marker(s)" in out
    assert re.search(r"\n\[1\] shop/\w+\.py:\d+-\d+  \S+", out)
    assert fake_llm.requests[0].body["model"] == "local-llm"


def test_ask_reports_provider_failure_on_stderr(
    repo: Path,
    tmp_path: Path,
    fake_llm: FakeLLMServer,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake_llm.script("messages", Status(401, "invalid key"))
    args = cli(
        repo,
        tmp_path,
        "ask",
        "how is the coupon discount computed?",
        "--provider",
        "anthropic",
        "--base-url",
        fake_llm.url,
    )
    monkeypatch.setenv("ANTHROPIC_API_KEY", "dummy-key-for-test")
    assert main(args) == 0
    captured = capsys.readouterr()
    assert (
        "codeqa: provider error: anthropic" in captured.err
        and "authentication failed (401)" in captured.err
    )
    assert "Citations:" in captured.out


def test_explain_path_line(repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = next(
        i
        for i, text in enumerate((repo / "shop/pricing.py").read_text().splitlines(), 1)
        if "total = sum(self.items)" in text
    )
    assert main(cli(repo, tmp_path, "explain", f"shop/pricing.py:{line}", "--json")) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["citations"][0]["symbol"] == "Cart.checkout"
    assert {c["symbol"] for c in answer["citations"][1:]} == {"apply_tax", "compute_discount"}


def test_explain_takes_a_path_from_the_current_directory_or_the_root(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    line = next(
        i
        for i, text in enumerate((repo / "shop/pricing.py").read_text().splitlines(), 1)
        if "total = sum(self.items)" in text
    )
    monkeypatch.chdir(repo.parent)  # a shell beside the workspace: completion writes repo/...
    assert main(cli(repo, tmp_path, "explain", f"{repo.name}/shop/pricing.py:{line}")) == 0
    assert "Cart.checkout" in capsys.readouterr().out
    monkeypatch.chdir(repo / "shop")  # inside it: `pricing.py`, or the root-relative path
    for location in (f"pricing.py:{line}", f"shop/pricing.py:{line}"):
        assert main(cli(repo, tmp_path, "explain", location, "--json")) == 0
        assert json.loads(capsys.readouterr().out)["citations"][0]["symbol"] == "Cart.checkout"


@pytest.mark.parametrize(
    "location, message",
    [
        ("shop/pricing.py", "expected PATH:LINE"),
        ("shop/pricing.py:0", "expected PATH:LINE"),
        ("shop/missing.py:3", "no such file"),
    ],
)
def test_explain_bad_location_is_a_usage_error(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], location: str, message: str
) -> None:
    assert main(cli(repo, tmp_path, "explain", location)) == 2
    assert message in capsys.readouterr().err
