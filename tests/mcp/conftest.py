"""Fixtures for the MCP server tests: a small project on disk and a real server over stdio.

The server runs as a subprocess (`python -m codeqa_lsp.cli mcp --root ...`) driven by the
official `mcp` SDK's own client, exactly as Claude Code or Cursor would start it.
"""

from __future__ import annotations

import json
import os
import sys
import textwrap
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

import codeqa_lsp
from tests.fakes import fake_llm  # noqa: F401

SOURCE_ROOT = Path(codeqa_lsp.__file__).resolve().parent.parent

UPLOADS = textwrap.dedent('''\
    """Upload helpers for the storage client."""
    import time


    def retry_failed_upload(client, path, attempts=3):
        """Retry a failed upload with exponential backoff between attempts."""
        for attempt in range(attempts):
            try:
                return client.put(path)
            except ConnectionError:
                time.sleep(2 ** attempt)
        raise RuntimeError(f"upload of {path} failed after {attempts} attempts")


    class UploadQueue:
        """Uploads waiting for a connection."""

        def push(self, item):
            self.items.append(item)
    ''')

SESSIONS = textwrap.dedent('''\
    def refresh_session_cookie(request, store):
        """Refresh the session cookie when it is about to expire."""
        cookie = request.cookies.get("session")
        if store.expires_soon(cookie):
            return store.renew(cookie)
        return cookie
    ''')

# Secret material: never indexed, never returned. Built so the literal key shapes do not
# sit in this source file (scanners of this repository would flag it).
DOTENV = "DATABASE_PASSWORD=hunter2hunter2\nSTRIPE_WEBHOOK=whsec_cafebabe\n"
KEY_FILE = (
    "def load_deploy_key():\n"
    "    return '''\n-----BEGIN RSA " + "PRIVATE KEY-----\nMIIEowIBAAKCAQEAdeploykeymaterial\n"
    "-----END RSA " + "PRIVATE KEY-----\n'''\n"
)


def lines_of(text: str, first: str, last: str) -> tuple[int, int]:
    """1-based line numbers of the first line starting with `first` and the next one
    containing `last`: the exact range a result must report."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines, 1) if line.startswith(first))
    end = next(i for i, line in enumerate(lines, 1) if i >= start and last in line)
    return start, end


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "deploy").mkdir()
    (root / "src" / "uploads.py").write_text(UPLOADS)
    (root / "src" / "sessions.py").write_text(SESSIONS)
    (root / "README.md").write_text("# Storage client\n\nUploads files and retries failures.\n")
    (root / ".env").write_text(DOTENV)
    (root / "deploy" / "keys.py").write_text(KEY_FILE)
    (tmp_path / "outside.py").write_text("def outside_the_root():\n    return 1\n")
    return root


def server_params(
    root: Path, *extra: str, env: dict[str, str] | None = None
) -> StdioServerParameters:
    cache = root.parent / "cache"
    return StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "codeqa_lsp.cli",
            "mcp",
            "--root",
            str(root),
            "--index-dir",
            str(cache / "index"),
            *extra,
        ],
        env={
            "PYTHONPATH": os.pathsep.join([str(SOURCE_ROOT), os.environ.get("PYTHONPATH", "")]),
            "XDG_CACHE_HOME": str(cache),
            **(env or {}),
        },
        cwd=str(root.parent),
    )


@asynccontextmanager
async def serve(
    root: Path, *extra: str, env: dict[str, str] | None = None
) -> AsyncIterator[Client]:
    args = extra or ("--embedder", "hash")
    async with Client(server_params(root, *args, env=env), read_timeout_seconds=120) as client:
        yield client


async def call(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    """A successful call's structured result (and its text twin, which must agree)."""
    result = await client.call_tool(tool, arguments)
    text = result.content[0].text if result.content else ""  # type: ignore[union-attr]
    assert not result.is_error, f"{tool} failed: {text}"
    assert result.structured_content is not None
    assert json.loads(text) == result.structured_content
    return result.structured_content


async def refused(client: Client, tool: str, **arguments: Any) -> str:
    """A call that must fail with a readable tool error; returns its message."""
    result = await client.call_tool(tool, arguments)
    text = " ".join(getattr(block, "text", "") for block in result.content)
    assert result.is_error, f"{tool}({arguments}) was not refused: {text[:300]}"
    return text


async def wait_until_indexed(
    client: Client, *, phase: str | None = None, attempts: int = 600
) -> dict[str, Any]:
    """Poll `status` until the background index is done (or reaches `phase`).

    A bounded poll, not a timing assertion: on a loaded machine it simply takes more polls."""
    status: dict[str, Any] = {}
    for _ in range(attempts):
        status = await call(client, "status")
        state = status["index"]
        if (phase is None and not state["indexing"]) or (
            phase is not None and state["phase"] == phase
        ):
            return status
        await anyio.sleep(0.1)
    raise AssertionError(f"index never reached {phase or 'idle'}: {status}")
