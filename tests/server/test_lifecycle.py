"""Lifecycle under load: responsiveness during a large index, saves queued during it,
progress cancellation, `$/cancelRequest` for an ask in flight, multi-root folders, bad
input from an editor, and API keys kept out of debug logs."""

from __future__ import annotations

import asyncio
import shutil
import sys
from pathlib import Path
from typing import Any

from tests.fakes.llm_server import FakeLLMServer, Reply, SlowLoris
from tests.server.rawclient import RawClient, guarded
from tests.server.workspace import FIXTURE_FILES, make_workspace

STDLIB = Path(sys.base_prefix) / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}"


def copy_stdlib(dst: Path, count: int) -> int:
    files = sorted(
        p
        for p in STDLIB.rglob("*.py")
        if not {"test", "tests", "site-packages", "idlelib"}.intersection(
            p.relative_to(STDLIB).parts
        )
    )[:count]
    for src in files:
        target = dst / "lib" / src.relative_to(STDLIB)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, target)
    return len(files)


def hover_params(path: Path, line: int, character: int) -> dict[str, Any]:
    return {
        "textDocument": {"uri": path.as_uri()},
        "position": {"line": line, "character": character},
    }


async def test_responsive_during_a_large_index_and_saves_are_queued(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws")
    copied = copy_stdlib(root, 160)
    client = await RawClient.start()
    try:
        await client.initialize(root, {"embedder": "hash", "indexDir": str(tmp_path / "index")})
        await guarded(client.wait_for(lambda: bool(client.progress("report"))))

        # Hovers and searches answer while the index runs (ordering on the wire proves "while").
        session = root / "app" / "session.py"
        hovers = 0
        live: list[dict[str, Any]] = []

        def counted_phase_seen() -> bool:
            return any(
                s["indexing"] and s["progress"] and s["progress"]["phase"] in {"chunk", "embed"}
                for s in live
            )

        # At least 200 hovers, and on until the status has shown a counted phase: on an idle
        # machine 200 hovers can all land in the scan phase (the loop ends with the index anyway).
        while not client.progress("end") and (hovers < 200 or not counted_phase_seen()):
            response = await guarded(
                client.request("textDocument/hover", hover_params(session, 9, 26))
            )
            assert "result" in response, response
            hovers += 1
            if not client.progress("end"):
                live.append((await client.command("codeqa.status"))["result"])
            if hovers == 3:
                # A save in the middle of the full index: queued, applied after it, not lost.
                cache = root / "app" / "cache.py"
                cache.write_text(
                    FIXTURE_FILES["app/cache.py"].replace("def put(", "def store_pelican(")
                )
                client.notify("textDocument/didSave", {"textDocument": {"uri": cache.as_uri()}})
        answered_during_index = hovers if not client.progress("end") else hovers - 1
        assert answered_during_index >= 3
        # The status command shows the running phase with its counts (what the statusline reads).
        phases = [s["progress"] for s in live if s["indexing"] and s["progress"]]
        assert phases and all(
            p["phase"] in {"scan", "chunk", "embed", "save"}
            and p["message"]
            and 0 <= p["percentage"] <= 100
            for p in phases
        ), live
        assert any(
            p["phase"] in {"chunk", "embed"} and f"{p['done']}/{p['total']}" in p["message"]
            for p in phases
        ), [p["message"] for p in phases]

        await guarded(client.wait_for(lambda: bool(client.progress("end"))))

        async def saved_and_searchable() -> bool:
            status = (await client.command("codeqa.status"))["result"]
            if status["pendingUpdates"]:
                return False
            hits = (await client.command("codeqa.search", {"query": "store_pelican"}))["result"]
            return any(h["symbol"] == "LRUCache.store_pelican" for h in hits)

        while not await guarded(saved_and_searchable()):
            await asyncio.sleep(0.1)
        status = (await client.command("codeqa.status"))["result"]
        assert status["files"] == copied + len(FIXTURE_FILES)

        # A forced re-index rebuilds the same index.
        assert (await client.command("codeqa.reindex", {"force": True}))["result"] == {
            "started": True
        }
        await guarded(client.wait_for(lambda: len(client.progress("end")) == 2))
        rebuilt = (await client.command("codeqa.status"))["result"]
        assert (rebuilt["files"], rebuilt["chunks"]) == (status["files"], status["chunks"])
    finally:
        assert await client.close() == 0


async def test_cancelling_index_progress_keeps_what_was_indexed(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws")
    copied = copy_stdlib(root, 160)
    client = await RawClient.start()
    try:
        await client.initialize(root, {"embedder": "hash", "indexDir": str(tmp_path / "index")})
        await guarded(
            client.wait_for(
                lambda: any(r["value"].get("percentage", 0) >= 5 for r in client.progress("report"))
            )
        )
        client.notify(
            "window/workDoneProgress/cancel", {"token": client.progress("begin")[0]["token"]}
        )
        await guarded(client.wait_for(lambda: bool(client.progress("end"))))
        assert client.progress("end")[0]["value"]["message"].endswith("(cancelled)")
        partial = (await client.command("codeqa.status"))["result"]
        assert 0 < partial["files"] < copied
        # A plain re-index (warm start) completes what the cancelled run left.
        await client.command("codeqa.reindex")
        await guarded(client.wait_for(lambda: len(client.progress("end")) == 2))
        assert not client.progress("end")[1]["value"]["message"].endswith("(cancelled)")
        final = (await client.command("codeqa.status"))["result"]
        assert final["files"] == copied + len(FIXTURE_FILES)
    finally:
        assert await client.close() == 0


async def test_cancel_request_for_an_ask_in_flight(tmp_path: Path, fake_llm: FakeLLMServer) -> None:
    root = make_workspace(tmp_path / "ws")
    fake_llm.script("chat", SlowLoris(seconds=60))
    client = await RawClient.start()
    try:
        await client.initialize(
            root,
            {
                "embedder": "hash",
                "indexDir": str(tmp_path / "index"),
                "provider": "openai",
                "baseUrl": fake_llm.openai_url,
                "apiKey": "sk-test-cancel-000000000000",
                "requestTimeout": 5,
                "maxRetries": 0,
            },
        )
        await guarded(client.wait_for(lambda: bool(client.progress("end"))))
        msg_id = client.new_id()
        pending = client.expect(msg_id)
        client.send(
            {
                "jsonrpc": "2.0",
                "id": msg_id,
                "method": "workspace/executeCommand",
                "params": {
                    "command": "codeqa.ask",
                    "arguments": [{"question": "how are settings loaded from the config file?"}],
                },
            }
        )
        await guarded(client.wait_for(lambda: bool(fake_llm.requests_to("chat"))))
        client.notify("$/cancelRequest", {"id": msg_id})
        response = await guarded(pending)
        assert response["error"]["code"] == -32800, response
        status = await client.command("codeqa.status")
        assert status["result"]["files"] == len(FIXTURE_FILES)
        hits = await client.command("codeqa.search", {"query": "load_settings"})
        assert hits["result"]
    finally:
        assert await client.close() == 0


async def test_multi_root_folders_are_added_and_removed(tmp_path: Path) -> None:
    first = make_workspace(tmp_path / "one")
    second = tmp_path / "two"
    (second / "pkg").mkdir(parents=True)
    (second / "pkg" / "billing.py").write_text(
        'def compute_invoice_total(lines):\n    """Sum invoice lines."""\n    return sum(lines)\n'
    )
    third = tmp_path / "three"
    third.mkdir()
    (third / "geo.py").write_text("def haversine_distance(a, b):\n    return 0.0\n")
    client = await RawClient.start()
    try:
        await client.initialize(
            first, {"embedder": "hash", "indexDir": str(tmp_path / "index")}, extra_roots=(second,)
        )
        await guarded(client.wait_for(lambda: len(client.progress("end")) == 2))
        status = (await client.command("codeqa.status"))["result"]
        assert sorted(status["folders"]) == sorted([str(first), str(second.resolve())])
        assert status["files"] == len(FIXTURE_FILES) + 1, status
        hits = (await client.command("codeqa.search", {"query": "compute_invoice_total"}))["result"]
        assert hits[0]["uri"] == (second / "pkg" / "billing.py").resolve().as_uri()

        client.notify(
            "workspace/didChangeWorkspaceFolders",
            {
                "event": {
                    "added": [{"uri": third.as_uri(), "name": "three"}],
                    "removed": [{"uri": second.as_uri(), "name": "two"}],
                }
            },
        )
        await guarded(client.wait_for(lambda: len(client.progress("end")) == 3))
        status = (await client.command("codeqa.status"))["result"]
        assert sorted(status["folders"]) == sorted([str(first), str(third.resolve())])
        hits = (
            await client.command(
                "codeqa.search", {"query": "compute_invoice_total haversine_distance"}
            )
        )["result"]
        assert {h["path"] for h in hits} >= {"geo.py"}
        assert not any(h["path"] == "pkg/billing.py" for h in hits)
        symbols = (await client.request("workspace/symbol", {"query": "haversine"}))["result"]
        assert symbols[0]["location"]["uri"] == (third / "geo.py").resolve().as_uri()

        # A directory created / deleted as a whole (one watched-file event for the directory).
        sub = third / "vendored"
        sub.mkdir()
        for i in range(3):
            (sub / f"mod{i}.py").write_text(f"def vendored_capybara_{i}():\n    return {i}\n")

        async def files_now() -> int:
            status = (await client.command("codeqa.status"))["result"]
            return -1 if status["pendingUpdates"] else status["files"]

        before = await files_now()
        client.notify(
            "workspace/didChangeWatchedFiles", {"changes": [{"uri": sub.as_uri(), "type": 1}]}
        )
        while await guarded(files_now()) != before + 3:
            await asyncio.sleep(0.05)
        shutil.rmtree(sub)
        client.notify(
            "workspace/didChangeWatchedFiles", {"changes": [{"uri": sub.as_uri(), "type": 3}]}
        )
        while await guarded(files_now()) != before:
            await asyncio.sleep(0.05)
        hits = (await client.command("codeqa.search", {"query": "vendored_capybara_1"}))["result"]
        assert not any(h["path"].startswith("vendored/") for h in hits)
    finally:
        assert await client.close() == 0


async def test_bad_editor_input_gets_errors_or_empty_results(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws")
    (root / "empty.py").write_text("")
    (root / "image.bin").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00" + bytes(range(256)) * 4)
    client = await RawClient.start()
    try:
        await client.initialize(root, {"embedder": "hash", "indexDir": str(tmp_path / "index")})
        await guarded(client.wait_for(lambda: bool(client.progress("end"))))
        empty = (root / "empty.py").as_uri()
        client.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": empty, "languageId": "python", "version": 1, "text": ""}},
        )
        assert (await client.request("textDocument/hover", hover_params(root / "empty.py", 0, 0)))[
            "result"
        ] is None
        assert (await client.request("textDocument/codeLens", {"textDocument": {"uri": empty}}))[
            "result"
        ] == []
        client.notify(
            "textDocument/didSave", {"textDocument": {"uri": (root / "image.bin").as_uri()}}
        )
        past_end = hover_params(root / "app" / "config.py", 500, 3)
        assert (await client.request("textDocument/hover", past_end))["result"] is None
        explain = await client.command(
            "codeqa.explain",
            {
                "uri": (root / "app" / "config.py").as_uri(),
                "position": {"line": 500, "character": 0},
            },
        )
        assert explain["error"]["code"] == -32602 and "past the end" in explain["error"]["message"]
        unknown = await client.command("codeqa.summarize", {})
        assert unknown["error"]["code"] == -32602 and "codeqa.ask" in unknown["error"]["message"]
        wrong = await client.command("codeqa.search", {"query": ["not", "a", "string"]})
        assert wrong["error"]["code"] == -32602 and "query" in wrong["error"]["message"]

        async def settled() -> bool:
            return (await client.command("codeqa.status"))["result"]["pendingUpdates"] == 0

        while not await guarded(settled()):
            await asyncio.sleep(0.05)
        status = (await client.command("codeqa.status"))["result"]
        assert "image.bin" not in str(
            (await client.command("codeqa.search", {"query": "PNG"}))["result"]
        )
        assert status["files"] >= len(FIXTURE_FILES)
        explained = await client.command(
            "codeqa.explain",
            {"uri": (root / "app" / "config.py").as_uri(), "position": {"line": 7, "character": 0}},
        )
        assert explained["result"]["citations"][0]["symbol"] == "load_settings"
    finally:
        assert await client.close() == 0


async def test_api_keys_never_reach_the_debug_log(tmp_path: Path, fake_llm: FakeLLMServer) -> None:
    root = make_workspace(tmp_path / "ws")
    log = tmp_path / "server.log"
    secret = "sk-ant-api03-SECRETSECRETSECRET-0123456789abcdef"
    client = await RawClient.start(args=["--log-level", "debug", "--log-file", str(log)])
    try:
        await client.initialize(
            root,
            {
                "embedder": "hash",
                "indexDir": str(tmp_path / "index"),
                "provider": "anthropic",
                "baseUrl": fake_llm.url,
                "apiKey": secret,
                "model": "claude-test",
            },
        )
        await guarded(client.wait_for(lambda: bool(client.progress("end"))))
        result = (
            await client.command(
                "codeqa.ask", {"question": "how are settings loaded from the config file?"}
            )
        )["result"]
        assert result["provider"] == "anthropic"
        # The key really was in use (sent to the provider) during the logged session.
        assert any(secret in " ".join(r.headers.values()) for r in fake_llm.requests_to("messages"))
    finally:
        await client.close()
    text = log.read_text()
    assert "initialize" in text and "apiKey" in text  # debug logging really captured the params
    assert secret not in text
    assert "SECRETSECRET" not in text


async def test_hover_starts_an_explanation_in_the_background_and_shows_it_next_time(
    tmp_path: Path, fake_llm: FakeLLMServer
) -> None:
    root = make_workspace(tmp_path / "ws")
    fake_llm.default_reply = Reply("It parses the JSON file and fills in default retries [1].")
    client = await RawClient.start()
    try:
        await client.initialize(
            root,
            {
                "embedder": "hash",
                "indexDir": str(tmp_path / "index"),
                "provider": "openai",
                "baseUrl": fake_llm.openai_url,
                "apiKey": "sk-test-hover-0000000000000",
                "model": "gpt-test",
                "hoverExplanations": True,
            },
        )
        await guarded(client.wait_for(lambda: bool(client.progress("end"))))
        session = root / "app" / "session.py"
        first = (await client.request("textDocument/hover", hover_params(session, 9, 26)))["result"]
        assert "app/config.py:7" in first["contents"]["value"]
        assert "Explanation" not in first["contents"]["value"]  # never waits on the model

        async def explained() -> bool:
            hover = (await client.request("textDocument/hover", hover_params(session, 9, 26)))[
                "result"
            ]
            return "It parses the JSON file" in hover["contents"]["value"]

        while not await guarded(explained()):
            await asyncio.sleep(0.05)
        assert len(fake_llm.requests_to("chat")) == 1  # one background explanation, then cached
    finally:
        assert await client.close() == 0
