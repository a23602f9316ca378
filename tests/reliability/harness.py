"""Starting the real language server over stdio with its stderr (and log file) kept.

`tests.server.rawclient.RawClient` drives the protocol; its own `start` discards the
server's stderr, and these tests need it: "no traceback on stderr" and "no key in any log"
are assertions about what the server wrote there. So the process is started here, with
stderr going to a file, and handed to `RawClient` as is.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.server.rawclient import SERVER_CMD, RawClient

GUARD = 300.0  # seconds: only stops a hung test (the machine may be loaded), never asserts speed


@dataclass
class Served:
    """One running server session: the client, where its output goes, and the index dir."""

    client: RawClient
    root: Path
    index_dir: Path
    stderr_path: Path
    log_path: Path | None

    def stderr(self) -> str:
        return self.stderr_path.read_text("utf-8", "replace")

    def log(self) -> str:
        return self.log_path.read_text("utf-8", "replace") if self.log_path else ""

    async def result(self, method: str, params: Any = None) -> Any:
        """The `result` of a request; fails the test with the whole response on an error."""
        response = await guarded(self.client.request(method, params))
        assert "result" in response, response
        return response["result"]

    async def command(self, name: str, *arguments: Any) -> Any:
        return await self.result(
            "workspace/executeCommand", {"command": name, "arguments": list(arguments)}
        )

    async def status(self) -> dict[str, Any]:
        status: dict[str, Any] = await self.command("codeqa.status")
        return status

    async def settled(self) -> dict[str, Any]:
        """Status once every received save / watched-file change has reached the index."""
        while True:
            status = await self.status()
            if not status["pendingUpdates"] and not status["indexing"]:
                return status
            await asyncio.sleep(0.05)

    async def index_runs_ended(self, count: int) -> None:
        await guarded(self.client.wait_for(lambda: len(self.client.progress("end")) >= count))


async def guarded(awaitable: Any) -> Any:
    return await asyncio.wait_for(awaitable, GUARD)


async def start_server(
    stderr_path: Path, log_path: Path | None, log_level: str, prefix: Sequence[str] = ()
) -> RawClient:
    """`prefix` runs the server through another command (e.g. `setpriv` dropping capabilities)."""
    args = ["--log-level", log_level] + (["--log-file", str(log_path)] if log_path else [])
    with stderr_path.open("wb") as stderr:  # the child keeps its own descriptor
        proc = await asyncio.create_subprocess_exec(
            *prefix,
            *SERVER_CMD,
            *args,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=stderr,
            env=dict(os.environ),
            limit=64 * 1024 * 1024,
        )
    return RawClient(proc)


@asynccontextmanager
async def served(
    tmp_path: Path,
    root: Path,
    options: dict[str, Any],
    *,
    log_level: str = "info",
    log_to_file: bool = False,
    wait_for_index: bool = True,
    prefix: Sequence[str] = (),
) -> AsyncIterator[Served]:
    """Start, initialize with `options` (plus a tmp `indexDir`) and wait for the first index.

    On exit the session is shut down properly and must exit with code 0: a server that
    crashed or hung during the test fails it here even if every assertion passed.
    """
    index_dir = tmp_path / "index"
    log_path = tmp_path / "server.log" if log_to_file else None
    client = await start_server(tmp_path / "server.stderr", log_path, log_level, prefix)
    session = Served(client, root.resolve(), index_dir, tmp_path / "server.stderr", log_path)
    try:
        response = await guarded(client.initialize(root, {"indexDir": str(index_dir), **options}))
        assert "result" in response, response
        if wait_for_index:
            await session.index_runs_ended(1)
        yield session
    finally:
        code = await client.close()
    assert code == 0, f"server exited with {code}; stderr:\n{session.stderr()[-4000:]}"


def index_sqlite_rows_containing(index_dir: Path, needle: str) -> list[tuple[str, str]]:
    """(table, column) of every text cell of the index database that contains `needle`.

    Queried directly (not through the server): what matters is what sits on disk.
    """
    found: list[tuple[str, str]] = []
    with sqlite3.connect(f"file:{index_dir / 'index.sqlite'}?mode=ro", uri=True) as db:
        tables = [
            row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        ]
        for table in tables:
            columns = [row[1] for row in db.execute(f'PRAGMA table_info("{table}")')]
            for column in columns:
                hits = db.execute(
                    f'SELECT count(*) FROM "{table}" WHERE instr(CAST("{column}" AS TEXT), ?) > 0',
                    (needle,),
                ).fetchone()[0]
                if hits:
                    found.append((table, column))
    return found


def files_containing(directory: Path, needles: Iterable[str]) -> dict[str, list[str]]:
    """needle → files under `directory` whose raw bytes contain it (WAL, vectors, caches...)."""
    wanted = {needle: needle.encode() for needle in needles}
    out: dict[str, list[str]] = {}
    for path in sorted(p for p in directory.rglob("*") if p.is_file()):
        data = path.read_bytes()
        for needle, raw in wanted.items():
            if raw in data:
                out.setdefault(needle, []).append(str(path.relative_to(directory)))
    return out


def notifications(client: RawClient, method: str) -> list[dict[str, Any]]:
    """The params of every `method` notification the server has sent so far."""
    return [n["params"] for n in client.notifications if n["method"] == method]
