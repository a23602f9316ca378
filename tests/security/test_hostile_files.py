"""Issue 15 (Medium / Low): hostile files at answer time, and files the scanner mishandled.

- a cited file replaced by a FIFO used to hang `codeqa.ask` and `shutdown` forever; by a
  symlink to `/dev/zero`, the server grew to 2 GB in 2 s: answer-time reads now follow the
  scanner's rules (regular file, size cap, inside the root);
- hover / code lens for a URI outside the workspace read that file;
- `explain` of a file in `.git/` or an excluded folder sent it to the provider;
- a file name with a backslash was counted as "vanished"; UTF-16 files with a BOM were
  skipped as binary.
All against the real server over stdio (and the real `openai` SDK on the loopback provider).
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from codeqa_lsp.chunking.scanner import read_at_answer_time, read_source
from codeqa_lsp.config import Settings
from codeqa_lsp.engine import CodeBase
from tests.fakes.llm_server import FakeLLMServer, Reply
from tests.reliability.harness import served
from tests.server.workspace import make_workspace

HANG_GUARD = 60.0  # seconds; only stops a hung test, never asserts speed


def _in_thread(fn: Callable[..., Any], *args: Any) -> Any:
    """Run `fn` in a daemon thread; fail (instead of hanging the suite) if it never returns."""
    out: list[object] = []
    thread = threading.Thread(target=lambda: out.append(fn(*args)), daemon=True)
    thread.start()
    thread.join(HANG_GUARD)
    assert not thread.is_alive(), f"{fn.__name__} hung"
    return out[0]


def test_fifo_and_device_swaps_are_refused(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws")
    os.remove(root / "app" / "config.py")
    os.mkfifo(root / "app" / "config.py")
    (root / "app" / "session.py").unlink()
    (root / "app" / "session.py").symlink_to("/dev/zero")
    settings = Settings()
    assert _in_thread(read_at_answer_time, root, "app/config.py", settings) is None
    assert _in_thread(read_at_answer_time, root, "app/session.py", settings) is None
    assert _in_thread(read_source, root, "app/config.py", settings).reason == "unsupported"


def test_reads_outside_the_root_are_refused(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws")
    (tmp_path / "outside.py").write_text("SECRET_OUTSIDE = 1\n")
    (root / "link.py").symlink_to(tmp_path / "outside.py")
    assert read_at_answer_time(root, "link.py", Settings()) is None
    assert read_at_answer_time(root, "../outside.py", Settings()) is None
    assert read_at_answer_time(root, "app/config.py", Settings()) is not None


async def test_ask_and_shutdown_survive_fifo_and_dev_zero_swaps(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws")
    async with served(tmp_path, root, {"embedder": "hash"}) as server:
        first = await server.command(
            "codeqa.ask", {"question": "how are settings loaded by load_settings?"}
        )
        cited = {c["path"] for c in first["citations"]}
        assert "app/config.py" in cited
        os.remove(root / "app" / "config.py")
        os.mkfifo(root / "app" / "config.py")
        fifo = await server.command(
            "codeqa.ask", {"question": "how are settings loaded by load_settings?"}
        )
        assert "app/config.py" not in {c["path"] for c in fifo["citations"]}  # gone, not hung
        os.remove(root / "app" / "config.py")
        (root / "app" / "config.py").symlink_to("/dev/zero")
        zero = await asyncio.wait_for(
            server.client.command(
                "codeqa.explain",
                {
                    "uri": (root / "app" / "config.py").as_uri(),
                    "position": {"line": 8, "character": 4},
                },
            ),
            HANG_GUARD,
        )
        assert "outside" in str(zero) or "not a file in an open workspace" in str(
            zero
        )  # refused, answered
        again = await server.command(
            "codeqa.ask", {"question": "how are settings loaded by load_settings?"}
        )
        assert "app/config.py" not in {c["path"] for c in again["citations"]}
    # `served` asserts the server shut down and exited 0: shutdown did not hang on the FIFO.


async def test_hover_and_lens_outside_the_workspace_read_nothing(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws")
    outside = tmp_path / "private" / "notes.py"
    outside.parent.mkdir()
    outside.write_text('def private_marker_function():\n    return "PRIVATE-CONTENT-42"\n')
    async with served(tmp_path, root, {"embedder": "hash"}) as server:
        hover = await server.result(
            "textDocument/hover",
            {"textDocument": {"uri": outside.as_uri()}, "position": {"line": 0, "character": 6}},
        )
        lenses = await server.result(
            "textDocument/codeLens", {"textDocument": {"uri": outside.as_uri()}}
        )
        etc = await server.result(
            "textDocument/hover",
            {
                "textDocument": {"uri": "file:///etc/passwd"},
                "position": {"line": 0, "character": 1},
            },
        )
    assert hover is None or "private_marker_function" not in str(hover)
    assert lenses == [] or lenses is None
    assert etc is None or "root:" not in str(etc)


@pytest.mark.parametrize("rel", [".git/hooks/post-checkout.py", "vendor/lib.py"])
async def test_explain_refuses_what_the_scanner_would_not_index(
    tmp_path: Path, fake_llm: FakeLLMServer, rel: str
) -> None:
    root = make_workspace(tmp_path / "ws")
    target = root / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(
        'def hidden_hook():\n    """Runs after checkout."""\n    return "HOOK-BODY-77"\n'
    )
    fake_llm.default_reply = Reply("It runs a hook [1].")
    options = {
        "embedder": "hash",
        "provider": "openai",
        "model": "gpt-test",
        "exclude": ["vendor/**"],
        "baseUrl": fake_llm.openai_url,
        "apiKey": "sk-test-explain-refuse-0000",
    }
    async with served(tmp_path, root, options) as server:
        refused = await server.command(
            "codeqa.explain", {"uri": target.as_uri(), "position": {"line": 1, "character": 4}}
        )
    assert "not part of the indexed workspace" in refused["answer"], refused
    assert "HOOK-BODY-77" not in fake_llm.all_bodies_text()
    assert not fake_llm.requests_to("chat")


def test_backslash_names_and_utf16_files_are_indexed(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws")
    (root / "odd\\name.py").write_text("def backslash_named_helper():\n    return 1\n")
    (root / "win.py").write_bytes(
        "\ufeffdef utf_sixteen_helper():\n    return 'é'\n".encode("utf-16")
    )
    workspace = CodeBase(root, Settings(embedder="hash", index_dir=str(tmp_path / "idx")))
    try:
        report = workspace.index()
        assert "vanished" not in report.skipped and "binary" not in report.skipped, report.skipped
        found = {h.chunk.path for h in workspace.search("backslash_named_helper").hits}
        assert "odd\\name.py" in found
        utf16 = [
            h.chunk for h in workspace.search("utf_sixteen_helper").hits if h.chunk.path == "win.py"
        ]
        assert utf16 and "def utf_sixteen_helper" in utf16[0].text
    finally:
        workspace.close()
