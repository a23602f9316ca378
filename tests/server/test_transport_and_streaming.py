"""The server's other faces under real clients: the TCP transport speaks the same protocol
as stdio, our editor plugins' streaming progress and answer notifications, and a storm of
saves ending with the index a clean run would build. (Split from test_lifecycle.py.)"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

from tests.fakes.llm_server import FakeLLMServer, Reply
from tests.server.rawclient import RawClient, guarded
from tests.server.workspace import make_workspace


async def test_tcp_transport_serves_the_same_protocol(tmp_path: Path) -> None:
    import json
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    script = str(Path(sys.executable).with_name("codeqa-lsp"))
    token = "launching-client-token-0123456789"  # passed by the launching client (issue 15)
    proc = await asyncio.create_subprocess_exec(
        script,
        "--tcp",
        f"127.0.0.1:{port}",
        "--log-level",
        "warning",
        env={**os.environ, "CODEQA_LSP_TOKEN": token},
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    try:
        while True:
            try:
                reader, writer = await guarded(asyncio.open_connection("127.0.0.1", port))
                break
            except OSError:
                await asyncio.sleep(0.1)

        async def call(msg_id: int, method: str, params: Any) -> dict[str, Any]:
            body = json.dumps(
                {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}
            ).encode()
            writer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            await writer.drain()
            while True:
                length = 0
                while (line := await guarded(reader.readline())) not in (b"\r\n", b""):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                message = json.loads(await reader.readexactly(length))
                if message.get("id") == msg_id and "method" not in message:
                    return message

        init = await call(
            1,
            "initialize",
            {
                "processId": None,
                "rootUri": None,
                "capabilities": {},
                "initializationOptions": {"authToken": token},
            },
        )
        assert init["result"]["serverInfo"]["name"] == "codeqa-lsp"
        assert "codeqa.ask" in init["result"]["capabilities"]["executeCommandProvider"]["commands"]
        bad = await call(2, "textDocument/hover", None)
        assert bad["error"]["code"] == -32602
        writer.close()
    finally:
        proc.kill()
        await proc.wait()


async def test_streaming_progress_and_answer_notification_for_our_plugins(
    tmp_path: Path, fake_llm: FakeLLMServer
) -> None:
    """Work-done progress carries the partial text; `codeqa/answer` replaces the popup."""
    root = make_workspace(tmp_path / "ws")
    text = "It reads the JSON file at path [1] and defaults retries to three."
    fake_llm.default_reply = Reply(text, deltas=6)
    client = await RawClient.start()
    try:
        await client.initialize(
            root,
            {
                "embedder": "hash",
                "indexDir": str(tmp_path / "index"),
                "provider": "openai",
                "baseUrl": fake_llm.openai_url,
                "apiKey": "sk-test-stream-00000000000",
                "model": "gpt-test",
                "clientFeatures": {"answerNotification": True},
            },
        )
        await guarded(client.wait_for(lambda: bool(client.progress("end"))))
        config_uri = (root / "app" / "config.py").as_uri()
        response = await client.request(
            "workspace/executeCommand",
            {
                "command": "codeqa.explain",
                "workDoneToken": "explain-1",
                "arguments": [
                    {"uri": config_uri, "position": {"line": 8, "character": 4}, "requestId": "e1"}
                ],
            },
        )
        result = response["result"]
        assert result["requestId"] == "e1" and result["provider"] == "openai"
        assert result["citations"][0]["symbol"] == "load_settings"
        ours = [
            n["params"]["value"]
            for n in client.notifications
            if n["method"] == "$/progress" and n["params"]["token"] == "explain-1"
        ]
        assert [v["kind"] for v in (ours[0], ours[-1])] == ["begin", "end"]
        partials = [v["message"] for v in ours if v["kind"] == "report"]
        assert partials and all(text.startswith(p) for p in partials)
        deltas = [
            n["params"]["text"]
            for n in client.notifications
            if n["method"] == "codeqa/answerDelta" and n["params"]["requestId"] == "e1"
        ]
        assert "".join(deltas) == text

        shown = await client.command(
            "codeqa.showAnswer", {"uri": config_uri, "position": {"line": 8, "character": 0}}
        )
        await guarded(
            client.wait_for(
                lambda: any(n["method"] == "codeqa/answer" for n in client.notifications)
            )
        )
        notified = next(n["params"] for n in client.notifications if n["method"] == "codeqa/answer")
        assert notified["citations"] == shown["result"]["citations"]
        assert not any(r["method"] == "window/showMessageRequest" for r in client.server_requests)
    finally:
        assert await client.close() == 0


async def test_save_storm_ends_with_the_index_a_clean_run_would_build(tmp_path: Path) -> None:
    """100 saves across 20 files while queries run: nothing lost, nothing stale, no deadlock."""
    from codeqa_lsp.config import Settings
    from codeqa_lsp.engine import CodeBase

    root = make_workspace(tmp_path / "ws")
    files = [root / "pkg" / f"mod{i}.py" for i in range(20)]
    files[0].parent.mkdir()
    for i, path in enumerate(files):
        path.write_text(f"def start_{i}():\n    return {i}\n")
    client = await RawClient.start()
    try:
        await client.initialize(root, {"embedder": "hash", "indexDir": str(tmp_path / "index")})
        await guarded(client.wait_for(lambda: bool(client.progress("end"))))
        last: dict[int, int] = {}
        for k in range(100):
            i = (k * 7) % 20
            files[i].write_text(
                f"def storm_{i}_v{k}(x):\n    '''Version {k}.'''\n    return x + {k}\n"
            )
            last[i] = k
            client.notify("textDocument/didSave", {"textDocument": {"uri": files[i].as_uri()}})
            if k % 5 == 0:
                hits = await client.command("codeqa.search", {"query": f"storm_{i}", "topK": 3})
                assert "result" in hits
            await asyncio.sleep(0.1)

        async def settled() -> bool:
            return (await client.command("codeqa.status"))["result"]["pendingUpdates"] == 0

        while not await guarded(settled()):
            await asyncio.sleep(0.05)
        for i, k in last.items():
            hits = (await client.command("codeqa.search", {"query": f"storm_{i}_v{k}", "topK": 3}))[
                "result"
            ]
            assert hits[0]["symbol"] == f"storm_{i}_v{k}", hits
    finally:
        assert await client.close() == 0

    def snapshot(index_dir: Path, reindex: bool) -> set[tuple[str, str, int, int, str]]:
        workspace = CodeBase(root, Settings(embedder="hash", index_dir=str(index_dir)))
        try:
            if reindex:
                workspace.index()
            return {
                (c.path, c.symbol, c.start_line, c.end_line, c.text) for c in workspace.chunks()
            }
        finally:
            workspace.close()

    served = snapshot(tmp_path / "index", reindex=False)
    clean = snapshot(tmp_path / "clean-index", reindex=True)
    assert served == clean
