"""`codeqa ask --continue / --thread` and `codeqa chat` share the conversation threads."""

from __future__ import annotations

import io
import re
import subprocess
import sys
from pathlib import Path

import pytest

from codeqa_lsp.answering.conversation import ConversationStore
from codeqa_lsp.cli import main


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


def cited(out: str) -> set[str]:
    return set(re.findall(r"^\[\d+\] \S+  (\S+)", out, re.MULTILINE))


def test_ask_continue_follows_up_in_the_same_thread(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(cli(repo, tmp_path, "ask", "and where is it called from?")) == 0
    alone = capsys.readouterr()
    assert main(cli(repo, tmp_path, "ask", "how is the coupon discount computed?")) == 0
    first = capsys.readouterr()
    thread_id = re.search(r"conversation (\w+):", first.err)[1]  # type: ignore[index]
    assert main(cli(repo, tmp_path, "ask", "--continue", "and where is it called from?")) == 0
    follow = capsys.readouterr()
    assert f"conversation {thread_id}:" in follow.err
    assert "compute_discount" in cited(follow.out) and "compute_discount" not in cited(alone.out)
    assert main(cli(repo, tmp_path, "ask", "--thread", thread_id, "what about tax?")) == 0
    capsys.readouterr()
    thread = ConversationStore(tmp_path / "cli-index").get(thread_id)
    assert thread is not None and len(thread.turns) == 3 and thread.client == "cli"
    assert main(cli(repo, tmp_path, "ask", "--thread", "nope", "x")) == 2
    assert "no conversation 'nope'" in capsys.readouterr().err


def test_chat_loop_streams_answers_and_keeps_the_thread(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(
        sys,
        "stdin",
        io.StringIO(
            "how is the coupon discount computed?\nand where is it called "
            "from?\n/threads\n/new\n/quit\n"
        ),
    )
    assert main(cli(repo, tmp_path, "chat")) == 0
    out = capsys.readouterr().out
    assert out.count("Citations:") == 2 and "? and where is it called from?" in out
    listed = re.search(r"^\* (\w+)\s+2 turns", out, re.MULTILINE)
    assert listed is not None
    # The same thread from `codeqa ask --continue` (a separate process, as a user would run it).
    run = subprocess.run(
        [
            sys.executable,
            "-c",
            "from codeqa_lsp.cli import main; raise SystemExit(main())",
            *cli(repo, tmp_path, "ask", "--continue", "what about tax?"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert run.returncode == 0 and f"conversation {listed[1]}:" in run.stderr
