"""Conversation commands through the real server over stdio: a thread, a follow-up that
needs the first turn's subject, list/get/clear, and the history surviving a restart."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from tests.server.rawclient import RawClient
from tests.server.workspace import make_workspace

GUARD = 300.0  # seconds: only stops a hung test, never asserts speed


async def started(root: Path, index: Path) -> RawClient:
    client = await RawClient.start()
    await client.initialize(root, {"embedder": "hash", "indexDir": str(index)})
    await asyncio.wait_for(client.wait_for(lambda: bool(client.progress("end"))), GUARD)
    return client


def result(response: dict[str, Any]) -> Any:
    assert "result" in response, response
    return response["result"]


async def test_threads_follow_ups_and_history_across_a_restart(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws")
    index = tmp_path / "index"
    client = await started(root, index)
    try:
        first = result(
            await client.command(
                "codeqa.conversation.continue",
                {"question": "how are settings loaded from the config file?"},
            )
        )
        thread_id = first["threadId"]
        assert any(c["symbol"].endswith("load_settings") for c in first["citations"])

        # Alone, the follow-up retrieves nothing about settings; in the thread it does.
        alone = result(
            await client.command("codeqa.ask", {"question": "and where is it called from?"})
        )
        follow = result(
            await client.command(
                "codeqa.conversation.continue",
                {"question": "and where is it called from?", "threadId": thread_id},
            )
        )
        assert follow["threadId"] == thread_id
        cited = {c["path"] for c in follow["citations"]}
        assert "app/session.py" in cited or any(
            c["symbol"].endswith("load_settings") for c in follow["citations"]
        )
        assert {c["path"] for c in alone["citations"]} != cited

        # Without a threadId the client's latest thread continues.
        third = result(
            await client.command(
                "codeqa.conversation.continue", {"question": "what about the tests?"}
            )
        )
        assert third["threadId"] == thread_id

        listed = result(await client.command("codeqa.conversation.list"))
        assert [(t["id"], t["turns"]) for t in listed] == [(thread_id, 3)]
        assert listed[0]["title"] == "how are settings loaded from the config file?"
        other = result(
            await client.command(
                "codeqa.conversation.continue",
                {"question": "how does the session retry?", "newThread": True},
            )
        )
        assert other["threadId"] != thread_id
        assert result(
            await client.command("codeqa.conversation.clear", {"threadId": other["threadId"]})
        ) == {"cleared": 1}
        fresh = result(await client.command("codeqa.conversation.new", {"title": "scratch"}))
        assert fresh["turns"] == 0 and fresh["root"] == str(root)

        bad = await client.command("codeqa.conversation.get", {"threadId": "nope"})
        assert "error" in bad and "no conversation" in bad["error"]["message"]
        bad = await client.command("codeqa.conversation.continue", {"threadId": thread_id})
        assert bad["error"]["code"] == -32602  # invalid params: no question
    finally:
        assert await client.close() == 0

    # A new server (an editor restart) sees the same threads with their turns and citations.
    client = await started(root, index)
    try:
        listed = result(await client.command("codeqa.conversation.list"))
        assert {t["id"] for t in listed} == {thread_id, fresh["id"]}
        thread = result(await client.command("codeqa.conversation.get", {"threadId": thread_id}))
        assert [t["question"] for t in thread["turns"]] == [
            "how are settings loaded from the config file?",
            "and where is it called from?",
            "what about the tests?",
        ]
        assert thread["turns"][0]["citations"] and thread["turns"][0]["answer"]
        assert result(
            await client.command("codeqa.conversation.clear", {"threadId": fresh["id"]})
        ) == {"cleared": 1}
        assert result(await client.command("codeqa.conversation.clear")) == {"cleared": 1}
        assert result(await client.command("codeqa.conversation.list")) == []
    finally:
        assert await client.close() == 0
