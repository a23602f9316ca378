"""A settings change re-opens every folder's index. Questions asked in that window must wait
for the re-opened index, not fail with "no workspace folder is open"."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.server.rawclient import RawClient
from tests.server.workspace import make_workspace

GUARD = 300.0  # seconds: only stops a hung test, never asserts speed


async def test_questions_during_a_settings_reopen_wait_for_the_index(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws")
    client = await RawClient.start()
    try:
        settings = {"embedder": "hash", "indexDir": str(tmp_path / "index")}
        await client.initialize(root, settings)
        await asyncio.wait_for(client.wait_for(lambda: bool(client.progress("end"))), GUARD)
        for top_k in (3, 4, 5):
            client.notify(
                "workspace/didChangeConfiguration",
                {"settings": {"codeqa": {**settings, "topK": top_k}}},
            )
            asks = [
                client.command(
                    "codeqa.ask", {"question": "how are settings loaded from the config file?"}
                )
                for _ in range(3)
            ]
            replies = await asyncio.wait_for(asyncio.gather(*asks), GUARD)
            for reply in replies:
                assert "error" not in reply, reply
                assert any(
                    c["symbol"].endswith("load_settings") for c in reply["result"]["citations"]
                )
            status = await client.command("codeqa.status")
            assert "error" not in status, status
    finally:
        assert await client.close() == 0
