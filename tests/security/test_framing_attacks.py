"""Issue 15 (Medium): framing attacks against the real server over stdio.

Before the fix `Content-Length: 1000000000000000` made pygls allocate the body (MemoryError,
the server exited), a negative / non-numeric / missing length left it alive but deaf, and
JSON nested 100k deep got no response at all. Each attack below is followed by a normal
request that must still be answered: the server keeps reading.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from tests.server.rawclient import RawClient
from tests.server.workspace import HASH_OPTIONS, make_workspace

HANG_GUARD = 60.0  # seconds; only stops a hung test, never asserts speed


async def _ping(client: RawClient) -> dict:
    """A real request after the attack: the server must still be listening and in sync."""
    return await asyncio.wait_for(client.request("workspace/symbol", {"query": "cart"}), HANG_GUARD)


@pytest.fixture
async def client(tmp_path: Path):
    root = make_workspace(tmp_path / "ws")
    client = await RawClient.start(args=["--max-message-bytes", "100000"])
    await asyncio.wait_for(client.initialize(root, HASH_OPTIONS), HANG_GUARD)
    yield client
    await client.close()


def _raw(client: RawClient, data: bytes) -> None:
    assert client.proc.stdin is not None
    client.proc.stdin.write(data)


async def test_huge_content_length_is_refused_and_the_server_lives(client: RawClient) -> None:
    error = client.expect_null_id()
    _raw(client, b"Content-Length: 1000000000000000\r\n\r\n")
    reply = await asyncio.wait_for(error, HANG_GUARD)
    assert reply["error"]["code"] == -32600
    assert "exceeds the limit of 100000 bytes" in reply["error"]["message"]
    assert client.proc.returncode is None  # no MemoryError exit
    # The declared body is being skipped; closing stdin ends the server cleanly.


async def test_oversized_body_is_skipped_and_the_next_message_is_read(client: RawClient) -> None:
    error = client.expect_null_id()
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 999,
            "method": "workspace/symbol",
            "params": {"query": "x" * 200_000},
        }
    ).encode()
    client.send_bytes(body)
    reply = await asyncio.wait_for(error, HANG_GUARD)
    assert reply["error"]["code"] == -32600
    assert 999 not in client.responses
    assert "result" in await _ping(client)


@pytest.mark.parametrize(
    "header",
    [
        b"Content-Length: -5",
        b"Content-Length: abc",
        b"Content-Length: 1e3",
        b"Content-Type: application/json",
    ],
)
async def test_bad_or_missing_length_is_answered_and_the_reader_resynchronises(
    client: RawClient, header: bytes
) -> None:
    error = client.expect_null_id()
    _raw(client, header + b'\r\n\r\n{"jsonrpc":"2.0","id":5,"method":"shutdown"}')
    reply = await asyncio.wait_for(error, HANG_GUARD)
    assert reply["error"]["code"] == -32700
    assert "Content-Length" in reply["error"]["message"]
    assert "result" in await _ping(client)  # not deaf
    assert 5 not in client.responses  # the unframed shutdown was not obeyed


async def test_deeply_nested_json_gets_a_parse_error_without_traceback(client: RawClient) -> None:
    error = client.expect_null_id()
    client.send_bytes(b"[" * 45_000 + b"]" * 45_000)  # under the 100 kB test cap
    reply = await asyncio.wait_for(error, HANG_GUARD)
    assert reply["error"]["code"] == -32700
    assert "nested too deeply" in reply["error"]["message"]
    assert "Traceback" not in json.dumps(reply)
    assert "result" in await _ping(client)


async def test_endless_header_line_does_not_grow_memory(client: RawClient) -> None:
    # 4 MB without a newline: read in bounded pieces, then a normal message follows.
    _raw(client, b"X" * (4 * 1024 * 1024) + b"\r\n\r\n")
    error = client.expect_null_id()
    reply = await asyncio.wait_for(error, HANG_GUARD)
    assert reply["error"]["code"] == -32700
    assert "result" in await _ping(client)


async def test_internal_errors_carry_no_traceback(client: RawClient) -> None:
    reply = await asyncio.wait_for(
        client.request(
            "workspace/executeCommand", {"command": "codeqa.search", "arguments": [{"query": 5}]}
        ),
        HANG_GUARD,
    )
    assert "error" in reply
    assert "Traceback" not in json.dumps(reply)
    assert 'File "' not in json.dumps(reply)
