"""A minimal raw JSON-RPC client over the server's stdio, for malformed traffic.

pytest-lsp's client only sends well-formed, typed messages; the robustness tests need to
send bytes that are not JSON, envelopes that are not JSON-RPC and params of the wrong type,
and to see exactly what comes back. Server-to-client requests (progress creation,
configuration, registration, message requests) are answered automatically so the server
never blocks on us.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

GUARD = 300.0  # seconds: only stops a hung test, never asserts speed


async def guarded(awaitable: Any) -> Any:
    """Await with GUARD as a hang stop (a timeout here is a hang, not a slow run)."""
    return await asyncio.wait_for(awaitable, GUARD)


SERVER_CMD = [sys.executable, "-m", "codeqa_lsp", "--stdio", "--log-level", "warning"]


class RawClient:
    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.responses: dict[Any, dict[str, Any]] = {}
        self.null_id_errors: list[dict[str, Any]] = []
        self.notifications: list[dict[str, Any]] = []
        self.server_requests: list[dict[str, Any]] = []
        self.config: dict[str, Any] | None = None
        self._waiters: dict[Any, asyncio.Future[dict[str, Any]]] = {}
        self._null_waiters: list[asyncio.Future[dict[str, Any]]] = []
        self._next_id = 0
        self._reader = asyncio.get_running_loop().create_task(self._read_loop())
        self.on_server_request: Callable[[dict[str, Any]], Any] | None = None

    @classmethod
    async def start(
        cls,
        env: dict[str, str] | None = None,
        cwd: Path | None = None,
        args: list[str] | None = None,
    ) -> RawClient:
        proc = await asyncio.create_subprocess_exec(
            *SERVER_CMD,
            *(args or []),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            env={**os.environ, **(env or {})},
            cwd=cwd,
            limit=64 * 1024 * 1024,
        )
        return cls(proc)

    # -- sending ----------------------------------------------------------------------------
    def send_bytes(self, body: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def send(self, message: Any) -> None:
        self.send_bytes(json.dumps(message).encode("utf-8"))

    def new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    async def request(self, method: str, params: Any = None, msg_id: Any = None) -> dict[str, Any]:
        """Send a request and wait for its response (the whole message, result or error)."""
        msg_id = self.new_id() if msg_id is None else msg_id
        future = self.expect(msg_id)
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return await future

    def expect(self, msg_id: Any) -> asyncio.Future[dict[str, Any]]:
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        if msg_id in self.responses:
            future.set_result(self.responses.pop(msg_id))
        else:
            self._waiters[msg_id] = future
        return future

    def expect_null_id(self) -> asyncio.Future[dict[str, Any]]:
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._null_waiters.append(future)
        return future

    def notify(self, method: str, params: Any = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)

    async def command(self, name: str, *arguments: Any) -> dict[str, Any]:
        return await self.request(
            "workspace/executeCommand", {"command": name, "arguments": list(arguments)}
        )

    async def initialize(
        self,
        root: Path,
        options: Any,
        capabilities: dict[str, Any] | None = None,
        extra_roots: tuple[Path, ...] = (),
    ) -> dict[str, Any]:
        response = await self.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": root.as_uri(),
                "workspaceFolders": [
                    {"uri": r.as_uri(), "name": r.name} for r in (root, *extra_roots)
                ],
                "capabilities": capabilities or {"window": {"workDoneProgress": True}},
                "initializationOptions": options,
            },
        )
        self.notify("initialized", {})
        return response

    # -- receiving ----------------------------------------------------------------------------
    async def _read_loop(self) -> None:
        stdout = self.proc.stdout
        assert stdout is not None
        while True:
            length = None
            while True:
                line = await stdout.readline()
                if not line:
                    return
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":", 1)[1])
                elif line in (b"\r\n", b"\n") and length is not None:
                    break
            body = await stdout.readexactly(length)
            self._dispatch(json.loads(body))

    def _dispatch(self, message: dict[str, Any]) -> None:
        if "method" in message and "id" in message:
            self.server_requests.append(message)
            result = self.on_server_request(message) if self.on_server_request else None
            if message["method"] == "workspace/configuration":
                result = [self.config for _ in message["params"]["items"]]
            self.send({"jsonrpc": "2.0", "id": message["id"], "result": result})
        elif "method" in message:
            self.notifications.append(message)
        elif message.get("id") is None:
            self.null_id_errors.append(message)
            if self._null_waiters:
                self._null_waiters.pop(0).set_result(message)
        else:
            waiter = self._waiters.pop(message["id"], None)
            if waiter is not None and not waiter.done():
                waiter.set_result(message)
            else:
                self.responses[message["id"]] = message

    def progress(self, kind: str) -> list[dict[str, Any]]:
        return [
            n["params"]
            for n in self.notifications
            if n["method"] == "$/progress" and n["params"]["value"].get("kind") == kind
        ]

    async def wait_for(self, predicate: Callable[[], bool], interval: float = 0.05) -> None:
        """Poll until `predicate()` holds (the caller wraps this in its own bound)."""
        while not predicate():
            await asyncio.sleep(interval)

    async def close(self) -> int:
        with contextlib.suppress(Exception):
            if self.proc.returncode is None:
                await asyncio.wait_for(self.request("shutdown"), 30)
                self.notify("exit")
        try:
            code = await asyncio.wait_for(self.proc.wait(), 30)
        except asyncio.TimeoutError:
            self.proc.kill()
            code = await self.proc.wait()
        self._reader.cancel()
        return code
