"""The real MCP server over stdio, driven by the official `mcp` SDK client.

Covers issue 18's list: the tool list and schemas, every tool called, a search returning a
fixture function with its exact lines, paths outside the root refused, secret files never
returned, a call answered while indexing is still running, and edits seen by the next call.
"""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path

from codeqa_lsp.answering.redact import Redactor
from codeqa_lsp.mcp.results import snippet
from tests.chunks import chunk_of
from tests.fakes.llm_server import FakeLLMServer, SlowLoris
from tests.mcp.conftest import (
    SESSIONS,
    UPLOADS,
    call,
    lines_of,
    refused,
    serve,
    wait_until_indexed,
)

TOOLS = {"search", "ask", "explain", "outline", "status"}
RETRY = lines_of(UPLOADS, "def retry_failed_upload", "raise RuntimeError")
QUEUE = lines_of(UPLOADS, "class UploadQueue", "self.items.append")


async def test_tools_are_listed_with_typed_described_schemas(project: Path) -> None:
    async with serve(project) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert tool.description and len(tool.description) > 80, tool.name
        assert tool.output_schema is not None and tool.output_schema["type"] == "object", tool.name
        for name, prop in tool.input_schema.get("properties", {}).items():
            assert prop.get("description"), f"{tool.name}.{name} has no description"
    search = tools["search"].input_schema
    assert search["required"] == ["query"]
    assert search["properties"]["top_k"]["type"] == "integer"
    assert (search["properties"]["top_k"]["minimum"], search["properties"]["top_k"]["maximum"]) == (
        1,
        20,
    )
    kind_types = search["properties"]["kind"]["anyOf"]
    assert {
        "enum": ["function", "method", "class", "module", "section"],
        "type": "string",
    } in kind_types
    assert tools["outline"].input_schema["required"] == ["path"]
    assert "required" not in tools["status"].input_schema
    hit_schema = json.dumps(tools["search"].output_schema)
    for field in ("path", "symbol", "kind", "start_line", "end_line", "score", "snippet"):
        assert f'"{field}"' in hit_schema
    assert tools["search"].annotations is not None and tools["search"].annotations.read_only_hint


async def test_search_returns_the_fixture_function_with_its_exact_lines(project: Path) -> None:
    async with serve(project) as client:
        await wait_until_indexed(client)
        found = await call(client, "search", query="where do we retry failed uploads", top_k=3)
        by_symbol = await call(client, "search", query="retry_failed_upload")
        classes = await call(
            client, "search", query="upload queue", kind="class", path="src/", language="python"
        )
        elsewhere = await call(client, "search", query="retry failed upload", path="deploy/")
        aliased = await call(client, "search", query="retry upload", language="py", top_k=1)
        bad_language = await refused(client, "search", query="x", language="cobol")
        bad_kind = await refused(client, "search", query="x", kind="lambda")
        too_many = await refused(client, "search", query="x", top_k=500)
    top = found["results"][0]
    assert (top["path"], top["symbol"], top["kind"]) == (
        "src/uploads.py",
        "retry_failed_upload",
        "function",
    )
    assert (top["start_line"], top["end_line"]) == RETRY
    assert top["snippet"].startswith("def retry_failed_upload(client, path, attempts=3):")
    assert len(found["results"]) <= 3 and found["confident"]
    assert found["index"] == {
        **found["index"],
        "indexing": False,
        "search_mode": "hybrid",
        "coverage": 1.0,
    }
    assert (by_symbol["results"][0]["start_line"], by_symbol["results"][0]["end_line"]) == RETRY
    assert [(r["symbol"], r["start_line"], r["end_line"]) for r in classes["results"]] == [
        ("UploadQueue", *QUEUE)
    ]
    assert all(r["path"].startswith("deploy/") for r in elsewhere["results"])
    assert aliased["results"][0]["language"] == "python"
    assert "indexed languages: markdown, python" in bad_language
    assert "kind" in bad_kind and "top_k" in too_many


async def test_every_tool_answers_with_exact_locations(project: Path) -> None:
    async with serve(project) as client:
        await wait_until_indexed(client)
        asked = await call(client, "ask", question="how do we retry a failed upload?")
        by_line = await call(client, "explain", path="src/uploads.py", line=RETRY[0] + 3)
        by_symbol = await call(client, "explain", symbol="UploadQueue.push")
        # As an agent writes it in Rust, C++, Ruby or PHP.
        by_scoped = await call(client, "explain", symbol="UploadQueue::push")
        outline = await call(client, "outline", path="src/uploads.py")
        status = await call(client, "status")
        neither = await refused(client, "explain")
    assert asked["provider"] == "extractive" and asked["citations"]
    cited = {(c["path"], c["start_line"], c["end_line"]) for c in asked["citations"]}
    assert ("src/uploads.py", *RETRY) in cited
    assert "[1]" in asked["answer"] and "No language model is configured" not in asked["answer"]
    assert by_line["path"] == "src/uploads.py"
    assert by_line["target"]["symbol"] == "retry_failed_upload"
    assert (by_line["target"]["start_line"], by_line["target"]["end_line"]) == RETRY
    push = lines_of(UPLOADS, "    def push", "self.items.append")
    assert by_symbol["target"]["symbol"] == "UploadQueue.push"
    assert (by_symbol["target"]["start_line"], by_symbol["target"]["end_line"]) == push
    assert by_scoped["target"] == by_symbol["target"]
    assert outline["source"] == "index" and outline["language"] == "python"
    defs = [
        (d["symbol"], d["kind"], d["start_line"], d["end_line"]) for d in outline["definitions"]
    ]
    assert ("retry_failed_upload", "function", *RETRY) in defs
    assert ("UploadQueue", "class", *QUEUE) in defs
    assert ("UploadQueue.push", "method", *push) in defs
    assert status["files"] == 3 and status["chunks"] >= 4  # uploads, sessions, README
    assert status["embedded"] == status["chunks"] and status["embedder"].startswith("hash")
    assert status["answers"] == "extractive" and not status["index"]["indexing"]
    assert (
        status["skipped"].get("secret-name") == 1 and status["skipped"].get("secret-content") == 1
    )
    assert "path and line" in neither


async def test_paths_outside_the_root_are_refused(project: Path) -> None:
    outside = project.parent / "outside.py"
    (project / "src" / "link.py").symlink_to(outside)
    async with serve(project) as client:
        await wait_until_indexed(client)
        messages = [
            await refused(client, "outline", path="../outside.py"),
            await refused(client, "outline", path=str(outside)),
            await refused(client, "outline", path="src/../../outside.py"),
            await refused(client, "outline", path="src/link.py"),
            await refused(client, "explain", path="../outside.py", line=1),
            await refused(client, "search", query="outside", path="../"),
            await refused(client, "search", query="outside", path=str(project.parent) + "/*.py"),
            await refused(client, "ask", question="what is outside?", path="/etc"),
        ]
        found = await call(client, "search", query="outside_the_root")
        inside_absolute = await call(client, "outline", path=str(project / "src" / "sessions.py"))
    for message in messages:
        assert "outside the workspace root" in message or "leaves the workspace root" in message, (
            message
        )
    assert all(r["symbol"] != "outside_the_root" for r in found["results"])
    assert inside_absolute["path"] == "src/sessions.py"
    assert [d["symbol"] for d in inside_absolute["definitions"]] == ["refresh_session_cookie"]


async def test_secret_files_are_never_returned(project: Path) -> None:
    async with serve(project) as client:
        await wait_until_indexed(client)
        results = [
            await call(client, "search", query="DATABASE_PASSWORD hunter2hunter2", top_k=20),
            await call(client, "search", query="load_deploy_key private key", top_k=20),
            await call(client, "search", query="deploy key", path="deploy/"),
            await call(client, "ask", question="where is the deploy key loaded?"),
        ]
        messages = [
            await refused(client, "outline", path=".env"),
            await refused(client, "outline", path="deploy/keys.py"),
            await refused(client, "explain", path="deploy/keys.py", line=1),
            await refused(client, "explain", symbol="load_deploy_key"),
        ]
    dump = json.dumps(results)
    for secret in (
        "hunter2hunter2",
        "whsec_",
        "PRIVATE KEY",
        "deploykeymaterial",
        ".env",
        "deploy/keys.py",
    ):
        assert secret not in dump, secret
    assert "secrets file" in messages[0]
    assert "secret-shaped content" in messages[1] and "secret-shaped content" in messages[2]
    assert "no definition named 'load_deploy_key'" in messages[3]
    for message in messages:
        assert "hunter2" not in message and "PRIVATE KEY" not in message


async def test_calls_are_answered_while_indexing_is_still_running(
    project: Path, fake_llm: FakeLLMServer
) -> None:
    # Embedding goes to the loopback fake, which holds the first request open: the index is
    # stuck in its embedding phase, deterministically, until the fake stops.
    fake_llm.script("embeddings", *[SlowLoris(seconds=600)] * 5)
    args = ("--embedder", "openai", "--embedding-base-url", fake_llm.openai_url)
    async with serve(project, *args, env={"OPENAI_API_KEY": "sk-test-not-a-real-key"}) as client:
        first = await call(client, "search", query="first call right after start")  # never waits
        during = await wait_until_indexed(client, phase="embed")
        found = await call(client, "search", query="where do we retry failed uploads")
        asked = await call(client, "ask", question="how do we retry a failed upload?")
        outline = await call(client, "outline", path="src/uploads.py")
        still = await call(client, "status")
        fake_llm.stop()  # the held request fails: indexing ends with keyword search only
        after = await wait_until_indexed(client)
        again = await call(client, "search", query="retry_failed_upload")
    assert first["index"]["indexing"] and first["index"]["search_mode"] == "keyword"
    # Until the embedder has answered once, no call embeds its query (it would wait with it).
    sent = json.dumps([r.body for r in fake_llm.requests_to("embeddings")])
    for query in (
        "first call right after start",
        "where do we retry failed uploads",
        "how do we retry",
    ):
        assert query not in sent
    assert during["index"]["indexing"] and during["embedded"] == 0 and during["chunks"] >= 4
    assert still["index"]["indexing"] and still["index"]["phase"] == "embed"
    state = found["index"]
    assert (
        state["indexing"]
        and state["search_mode"] == "keyword"
        and "still being computed" in state["note"]
    )
    top = found["results"][0]
    assert (top["path"], top["symbol"], top["start_line"], top["end_line"]) == (
        "src/uploads.py",
        "retry_failed_upload",
        *RETRY,
    )
    assert ("src/uploads.py", *RETRY) in {
        (c["path"], c["start_line"], c["end_line"]) for c in asked["citations"]
    }
    assert any(d["symbol"] == "retry_failed_upload" for d in outline["definitions"])
    assert not after["index"]["indexing"] and "embeddings failed" in (after["last_error"] or "")
    assert again["results"][0]["symbol"] == "retry_failed_upload"
    assert again["index"]["search_mode"] == "keyword"


async def test_edits_deletions_and_new_secrets_are_seen_by_the_next_call(project: Path) -> None:
    async with serve(project) as client:
        await wait_until_indexed(client)
        extra = (
            UPLOADS + "\n\ndef resume_partial_upload(client, path, offset):\n"
            "    return client.put(path, offset=offset)\n"
        )
        (project / "src" / "uploads.py").write_text(extra)
        os.utime(
            project / "src" / "uploads.py", (1, 2_000_000_000)
        )  # a distinct mtime, even on coarse clocks
        (project / "src" / "sessions.py").unlink()
        (project / "src" / "leak.py").write_text(
            "TOKEN = 'x'\n" + "-----BEGIN OPENSSH " + "PRIVATE KEY-----\nabc\n"
        )
        (project / "lib").mkdir()
        (project / "lib" / "checksums.py").write_text(
            "def crc_of_upload(data):\n    return sum(data) % 65521\n"
        )
        added = await call(client, "search", query="resume_partial_upload")
        new_file = await call(client, "search", query="crc_of_upload")
        gone = await call(client, "search", query="refresh_session_cookie")
        leak = await call(client, "search", query="TOKEN", top_k=20)
        status = await call(client, "status")
    start = lines_of(extra, "def resume_partial_upload", "offset=offset")
    top = added["results"][0]
    assert (top["symbol"], top["start_line"], top["end_line"]) == ("resume_partial_upload", *start)
    assert all(r["path"] != "src/sessions.py" for r in gone["results"])
    assert all(r["path"] != "src/leak.py" for r in leak["results"])
    assert [(r["path"], r["start_line"], r["end_line"]) for r in new_file["results"][:1]] == [
        ("lib/checksums.py", 1, 2)
    ]
    assert status["files"] == 3 and not status["index"]["indexing"]


def test_sessions_fixture_is_what_the_outline_test_expects() -> None:
    assert lines_of(SESSIONS, "def refresh_session_cookie", "return cookie") == (1, 6)


async def test_a_warm_start_never_waits_for_the_query_embedder(
    project: Path, fake_llm: FakeLLMServer
) -> None:
    # First run: the fake embeds normally and the index is complete.
    args = ("--embedder", "openai", "--embedding-base-url", fake_llm.openai_url)
    env = {"OPENAI_API_KEY": "sk-test-not-a-real-key"}
    async with serve(project, *args, env=env) as client:
        assert (await wait_until_indexed(client))["embedded"] >= 4
    # Second run on the same index: nothing to embed, but the query embedder now hangs.
    fake_llm.clear()
    fake_llm.script("embeddings", *[SlowLoris(seconds=600)] * 5)
    async with serve(project, *args, env=env) as client:
        found = await call(client, "search", query="where do we retry failed uploads")
        asked = await call(client, "ask", question="how do we retry a failed upload?")
        fake_llm.stop()
    sent = json.dumps([r.body for r in fake_llm.requests_to("embeddings")])
    assert "where do we retry failed uploads" not in sent and "how do we retry" not in sent
    assert found["results"][0]["symbol"] == "retry_failed_upload"
    assert found["index"]["search_mode"] == "keyword"
    assert ("src/uploads.py", *RETRY) in {
        (c["path"], c["start_line"], c["end_line"]) for c in asked["citations"]
    }


def test_the_snippet_of_a_use_shows_the_call() -> None:
    body = [f"    step_{n}()" for n in range(30)]
    text = "\n".join(["def caller():", *body[:20], "    rebuild_auth(request)", *body[20:]])
    chunk = chunk_of(text, path="src/caller.py", symbol="caller", start_line=100)
    redactor = Redactor(environ={})
    opening, _ = snippet(chunk, redactor)
    assert "rebuild_auth" not in opening
    around, cut = snippet(chunk, redactor, focus=121)  # the call's line in the file
    lines = around.splitlines()
    assert lines[:2] == ["def caller():", "…"] and lines[2] == "    step_17()"
    assert "    rebuild_auth(request)" in lines and cut
    assert snippet(chunk, redactor, focus=103) == (opening, True)  # already in the opening
    # A definition that opens with a doc comment shows its signature, not `/**`.
    documented = replace(chunk, text="/**\n" + text, signature="function caller()")
    assert snippet(documented, redactor, focus=122)[0].splitlines()[:2] == [
        "function caller()",
        "…",
    ]
