"""Issue 9, LSP protocol: >= 1,000 generated bad messages against the real server over stdio.

Every bad request gets exactly the error it deserves (parse error, invalid request, method
not found, invalid params, not initialized, shutting down) or a proper empty result, and the
valid request sent after each batch still succeeds. Generation is seeded: a failure
reproduces.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.server.rawclient import RawClient
from tests.server.workspace import FIXTURE_FILES, HASH_OPTIONS, make_workspace

PARSE, INVALID_REQUEST, NOT_FOUND, INVALID_PARAMS, NOT_INITIALIZED = (
    -32700,
    -32600,
    -32601,
    -32602,
    -32002,
)
RESULT = 0  # pseudo-code: a successful response
NO_RESPONSE = None  # notifications
HANG_GUARD = 60.0  # seconds; only stops a hung test, never asserts speed


@dataclass
class Case:
    label: str
    body: bytes
    msg_id: Any  # the id the response must carry (None: an error with id null)
    expect: set[int] | None  # accepted codes; RESULT for a result; None: no response


def _req(method: str, params: Any, msg_id: Any, *, with_params: bool = True) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
    if with_params:
        message["params"] = params
    return json.dumps(message).encode()


def _wrong(rng: random.Random, expected: str) -> Any:
    """A JSON value that is definitely not of the `expected` LSP type."""
    choices: dict[str, list[Any]] = {
        "str": [None, 4, 4.5, True, [], {}, ["a"], {"a": 1}],
        "uint": [-1, -(2**40), 2**40, None, "abc", [], {}, [1]],
        "obj": [None, 3, "x", [], [1, 2], True],
    }
    return rng.choice(choices[expected])


class Generator:
    def __init__(self, rng: random.Random, root: Path, ids: Callable[[], int]) -> None:
        self.rng, self.root, self.ids = rng, root, ids
        self.file_uri = (root / "app" / "config.py").as_uri()

    def hover_params(self) -> dict[str, Any]:
        return {"textDocument": {"uri": self.file_uri}, "position": {"line": 0, "character": 4}}

    def parse_error(self) -> Case:
        rng = self.rng
        kind = rng.randrange(4)
        if kind == 0:
            body = b"{" + bytes(rng.randrange(256) for _ in range(rng.randrange(1, 60)))
        elif kind == 1:
            full = _req("textDocument/hover", self.hover_params(), 1)
            body = full[: rng.randrange(1, len(full) - 1)]
        elif kind == 2:
            body = b'{"jsonrpc": "2.0", "id": 1, "method": "x\xff\xfe"}'
        else:
            body = b'{"jsonrpc": "2.0", "id": 1, "method": "shutdown",}'
        try:
            json.loads(body)
        except ValueError:
            return Case("parse", body, None, {PARSE})
        return self.invalid_envelope()

    def invalid_envelope(self) -> Case:
        rng = self.rng
        msg_id = self.ids()
        variants: list[tuple[Any, Any, set[int]]] = [
            ([], None, {INVALID_REQUEST}),
            ([{"jsonrpc": "2.0", "id": msg_id, "method": "shutdown"}], None, {INVALID_REQUEST}),
            (rng.choice([42, "text", None, True, 3.5]), None, {INVALID_REQUEST}),
            (
                {"id": msg_id, "method": "textDocument/hover", "params": self.hover_params()},
                msg_id,
                {INVALID_REQUEST},
            ),
            (
                {
                    "jsonrpc": "1.0",
                    "id": msg_id,
                    "method": "workspace/symbol",
                    "params": {"query": "x"},
                },
                msg_id,
                {INVALID_REQUEST},
            ),
            (
                {
                    "jsonrpc": "2.0",
                    "id": rng.choice([1.5, True, {"a": 1}, [1]]),
                    "method": "shutdown",
                },
                None,
                {INVALID_REQUEST},
            ),
            (
                {"jsonrpc": "2.0", "id": msg_id, "method": rng.choice([7, None, [], {}])},
                msg_id,
                {INVALID_REQUEST},
            ),
            ({"jsonrpc": "2.0", "id": msg_id}, msg_id, {INVALID_REQUEST}),
            (
                {
                    "jsonrpc": "2.0",
                    "id": None,
                    "method": "workspace/symbol",
                    "params": {"query": "x"},
                },
                None,
                {INVALID_REQUEST},
            ),
        ]
        message, reply_id, codes = rng.choice(variants)
        return Case("envelope", json.dumps(message).encode(), reply_id, codes)

    def unknown_method(self) -> Case:
        msg_id = self.ids()
        name = self.rng.choice(
            ["textDocument/definition", "foo/bar", "$/custom", "codeqa/ask", "", "x" * 300]
        )
        params = self.rng.choice([None, {}, [1, 2], "p"])
        return Case("unknown", _req(name, params, msg_id), msg_id, {NOT_FOUND})

    def bad_params(self) -> Case:
        rng, msg_id = self.rng, self.ids()
        uri = self.file_uri
        method, params = rng.choice(
            [
                ("textDocument/hover", rng.choice([None, 3, {}, "x", [1]])),
                (
                    "textDocument/hover",
                    {
                        "textDocument": {"uri": _wrong(rng, "str")},
                        "position": {"line": 0, "character": 0},
                    },
                ),
                (
                    "textDocument/hover",
                    {"textDocument": {"uri": uri}, "position": _wrong(rng, "obj")},
                ),
                (
                    "textDocument/hover",
                    {
                        "textDocument": {"uri": uri},
                        "position": {"line": _wrong(rng, "uint"), "character": 0},
                    },
                ),
                (
                    "workspace/symbol",
                    rng.choice(["a string", None, 5, {"query": _wrong(rng, "str")}]),
                ),
                (
                    "textDocument/codeLens",
                    rng.choice(
                        [{"textDocument": 4}, {"textDocument": {"uri": _wrong(rng, "str")}}, None]
                    ),
                ),
                ("codeLens/resolve", rng.choice([None, 3, {"range": "x"}])),
                (
                    "workspace/executeCommand",
                    rng.choice(
                        [None, {"command": 5}, {"command": "codeqa.status", "arguments": "x"}]
                    ),
                ),
            ]
        )
        return Case("params", _req(method, params, msg_id), msg_id, {INVALID_PARAMS})

    def bad_command(self) -> Case:
        rng, msg_id = self.rng, self.ids()
        command, arguments = rng.choice(
            [
                ("codeqa.nope", []),
                ("codeqa.ask", []),
                ("codeqa.ask", [{"question": rng.choice([5, None, "", [], "   "])}]),
                ("codeqa.ask", [rng.choice([1, "question", [], None])]),
                ("codeqa.ask", [{"question": "ok"}, {"extra": 1}]),
                ("codeqa.ask", [{"question": "ok", "path": 3}]),
                (
                    "codeqa.search",
                    [{"query": "x", "topK": rng.choice(["3", 0, -1, 10_000, 2.5, True])}],
                ),
                ("codeqa.search", [{}]),
                (
                    "codeqa.explain",
                    [
                        {
                            "uri": self.file_uri,
                            "position": rng.choice([None, {"line": -1}, {"line": "a"}, 4]),
                        }
                    ],
                ),
                ("codeqa.explain", [{"position": {"line": 0, "character": 0}}]),
                ("codeqa.showAnswer", [{"uri": 5, "position": {"line": 0, "character": 0}}]),
                ("codeqa.status", [5]),
                ("codeqa.reindex", [{"force": "yes"}]),
            ]
        )
        body = _req(
            "workspace/executeCommand", {"command": command, "arguments": arguments}, msg_id
        )
        return Case("command", body, msg_id, {INVALID_PARAMS})

    def empty_result(self) -> Case:
        """Valid shapes pointing at nothing: unopened / missing / out-of-range documents."""
        rng, msg_id = self.rng, self.ids()
        missing = (self.root / "does" / "not" / "exist.py").as_uri()
        line, character = rng.choice([(0, 0), (10**6, 0), (0, 10**6), (2**31 - 1, 2**31 - 1)])
        method, params = rng.choice(
            [
                (
                    "textDocument/hover",
                    {
                        "textDocument": {
                            "uri": rng.choice([missing, self.file_uri, "untitled:x", "file:///"])
                        },
                        "position": {"line": line, "character": character},
                    },
                ),
                (
                    "textDocument/codeLens",
                    {"textDocument": {"uri": rng.choice([missing, "untitled:1", "not a uri"])}},
                ),
                (
                    "workspace/symbol",
                    {
                        "query": rng.choice(
                            ["", "zzzz_no_such_symbol", "(", '"', "*", "a OR", "NEAR(x"]
                        )
                    },
                ),
                (
                    "codeLens/resolve",
                    {
                        "range": {
                            "start": {"line": 0, "character": 0},
                            "end": {"line": 0, "character": 0},
                        },
                        "data": rng.choice([None, {"uri": 3}, "x"]),
                    },
                ),
            ]
        )
        return Case("empty", _req(method, params, msg_id), msg_id, {RESULT})

    def out_of_range_command(self) -> Case:
        msg_id = self.ids()
        missing = (self.root / "nope.py").as_uri()
        uri, line = self.rng.choice([(self.file_uri, 10**6), (missing, 0), ("untitled:x", 0)])
        body = _req(
            "workspace/executeCommand",
            {
                "command": "codeqa.explain",
                "arguments": [{"uri": uri, "position": {"line": line, "character": 0}}],
            },
            msg_id,
        )
        return Case("explain-range", body, msg_id, {INVALID_PARAMS, -32803})

    def huge(self) -> Case:
        msg_id = self.ids()
        blob = "x" * self.rng.choice([1 << 20, 4 << 20])
        method, params, codes = self.rng.choice(
            [
                ("codeqa/huge", {"blob": blob}, {NOT_FOUND}),
                (
                    "textDocument/hover",
                    {
                        "textDocument": {"uri": 7},
                        "position": {"line": 0, "character": 0},
                        "pad": blob,
                    },
                    {INVALID_PARAMS},
                ),
                (
                    "textDocument/hover",
                    {
                        "textDocument": {"uri": "file:///" + blob},
                        "position": {"line": 0, "character": 0},
                    },
                    {RESULT},
                ),
            ]
        )
        return Case("huge", _req(method, params, msg_id), msg_id, codes)

    def bad_notification(self) -> Case:
        rng = self.rng
        method, params = rng.choice(
            [
                ("textDocument/didOpen", rng.choice([None, 3, {"textDocument": {"uri": 4}}])),
                (
                    "textDocument/didChange",
                    {
                        "textDocument": {"uri": (self.root / "ghost.py").as_uri(), "version": 2},
                        "contentChanges": [{"text": "x" * rng.randrange(10, 1000)}],
                    },
                ),
                (
                    "textDocument/didSave",
                    {"textDocument": {"uri": (self.root / "blob.bin").as_uri()}},
                ),
                (
                    "textDocument/didClose",
                    {"textDocument": {"uri": (self.root / "never-opened.py").as_uri()}},
                ),
                (
                    "$/cancelRequest",
                    rng.choice([{"id": 999_999}, {"id": None}, {"id": [1]}, None, "x"]),
                ),
                ("$/unknownNotification", {"a": 1}),
                (
                    "workspace/didChangeWatchedFiles",
                    rng.choice([{"changes": "x"}, {"changes": [{"uri": 3, "type": 1}]}]),
                ),
                (
                    "workspace/didChangeConfiguration",
                    rng.choice([{"settings": 3}, {"settings": {"codeqa": "x"}}, None]),
                ),
            ]
        )
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        return Case("notification", json.dumps(message).encode(), None, NO_RESPONSE)

    def case(self) -> Case:
        makers = [
            (self.parse_error, 12),
            (self.invalid_envelope, 12),
            (self.unknown_method, 10),
            (self.bad_params, 22),
            (self.bad_command, 16),
            (self.empty_result, 14),
            (self.out_of_range_command, 4),
            (self.bad_notification, 8),
            (self.huge, 2),
        ]
        maker = self.rng.choices([m for m, _ in makers], weights=[w for _, w in makers])[0]
        return maker()


async def _check(client: RawClient, case: Case) -> None:
    if case.expect is NO_RESPONSE:
        client.send_bytes(case.body)
        return
    future = client.expect_null_id() if case.msg_id is None else client.expect(case.msg_id)
    client.send_bytes(case.body)
    response = await asyncio.wait_for(future, HANG_GUARD)
    if "error" in response:
        code = response["error"]["code"]
        assert code in case.expect, f"{case.label}: {case.body[:200]!r} -> {response}"
        assert response["error"]["message"], response
    else:
        assert RESULT in case.expect, f"{case.label}: {case.body[:200]!r} -> {response}"


async def _assert_alive(client: RawClient) -> None:
    response = await asyncio.wait_for(client.command("codeqa.status"), HANG_GUARD)
    assert "result" in response, response
    assert response["result"]["folders"], response


async def test_a_thousand_bad_messages_each_get_an_answer(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws")
    (root / "blob.bin").write_bytes(bytes(range(256)) * 8)
    client = await RawClient.start()
    try:
        init = await client.initialize(root, {**HASH_OPTIONS, "indexDir": str(tmp_path / "index")})
        assert "result" in init
        ids = iter(range(10_000, 10**9))
        generator = Generator(random.Random(20261121), root, lambda: next(ids))
        counts: dict[str, int] = {}
        for n in range(1_100):
            case = generator.case()
            counts[case.label] = counts.get(case.label, 0) + 1
            await _check(client, case)
            if n % 10 == 9:
                await _assert_alive(client)
        assert sum(counts.values()) >= 1_000
        assert all(
            counts.get(label, 0) > 0
            for label in (
                "parse",
                "envelope",
                "unknown",
                "params",
                "command",
                "empty",
                "notification",
            )
        )
        # The index still works after the storm: a real search answers with real hits.
        search = await client.command("codeqa.search", {"query": "load settings"})
        assert any(hit["symbol"].endswith("load_settings") for hit in search["result"]), search
    finally:
        assert await client.close() == 0


async def test_requests_before_initialize_and_after_shutdown(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws")
    client = await RawClient.start()
    early = await client.request(
        "textDocument/hover",
        {"textDocument": {"uri": "file:///x"}, "position": {"line": 0, "character": 0}},
    )
    assert early["error"]["code"] == NOT_INITIALIZED
    status_early = await client.command("codeqa.status")
    assert status_early["error"]["code"] == NOT_INITIALIZED
    client.notify(
        "textDocument/didSave", {"textDocument": {"uri": "file:///x"}}
    )  # dropped, no reply

    init = await client.initialize(root, {**HASH_OPTIONS, "indexDir": str(tmp_path / "index")})
    assert "capabilities" in init["result"]
    again = await client.request(
        "initialize", {"processId": None, "rootUri": None, "capabilities": {}}
    )
    assert again["error"]["code"] == INVALID_REQUEST
    await _assert_alive(client)

    assert (await client.request("shutdown"))["result"] is None
    for method, params in [
        (
            "textDocument/hover",
            {"textDocument": {"uri": "file:///x"}, "position": {"line": 0, "character": 0}},
        ),
        ("workspace/executeCommand", {"command": "codeqa.status", "arguments": []}),
        ("shutdown", None),
        ("foo/bar", {}),
    ]:
        late = await client.request(method, params)
        assert late["error"]["code"] == INVALID_REQUEST, late
    client.notify("exit")
    assert await asyncio.wait_for(client.proc.wait(), HANG_GUARD) == 0


@pytest.mark.parametrize(
    "options",
    [
        {"embedder": "hash", "topK": "eight", "minScore": 7, "include": [1], "madeUp": True},
        "not an object",
    ],
)
async def test_bad_settings_are_reported_and_defaults_used(tmp_path: Path, options: Any) -> None:
    """Bad values warn (window/showMessage) and fall back; pulled configuration still applies."""
    root = make_workspace(tmp_path / "ws")
    client = await RawClient.start()
    client.config = {"indexDir": str(tmp_path / "index"), "embedder": "hash", "maxRetries": 99}
    try:
        await client.initialize(
            root,
            options,
            capabilities={
                "workspace": {"configuration": True},
                "window": {"workDoneProgress": True},
            },
        )
        await client.wait_for(lambda: len(client.progress("end")) == 1)
        shown = [
            n["params"]["message"]
            for n in client.notifications
            if n["method"] == "window/showMessage"
        ]
        assert all(
            n["params"]["type"] == 2
            for n in client.notifications
            if n["method"] == "window/showMessage"
        )
        text = " ".join(shown)
        if isinstance(options, dict):
            for key in ("topK", "minScore", "include", "madeUp"):
                assert key in text
        else:
            assert "initializationOptions must be an object" in text
        assert "maxRetries" in text  # from the pulled configuration
        status = await client.command("codeqa.status")
        assert status["result"]["embedder"] == "hash"
        assert status["result"]["files"] == len(FIXTURE_FILES)
    finally:
        assert await client.close() == 0
