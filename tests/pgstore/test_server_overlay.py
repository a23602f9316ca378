"""Publish → query → overlay through the real language server over stdio (pytest-lsp),
and the database-down fallback as the editor sees it (one warning, answers still work)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from codeqa_lsp.config import Settings
from codeqa_lsp.index.embedders.hashing import HashEmbedder
from codeqa_lsp.index.pg.publish import Publisher
from tests.pgstore.conftest import make_repo
from tests.pgstore.trees import AUTH_PY, TREE

SERVER = [sys.executable, "-m", "codeqa_lsp", "--stdio", "--log-level", "warning"]
GUARD = 120.0  # seconds: only stops a hung test, never asserts speed


def _as_dict(value: Any) -> Any:
    if hasattr(value, "_asdict"):
        return {k: _as_dict(v) for k, v in value._asdict().items()}
    if isinstance(value, list):
        return [_as_dict(v) for v in value]
    return value


async def _command(client: LanguageClient, name: str, argument: dict[str, Any]) -> Any:
    result = await asyncio.wait_for(
        client.workspace_execute_command_async(
            types.ExecuteCommandParams(command=name, arguments=[argument])
        ),
        GUARD,
    )
    return _as_dict(result)


async def _indexed(client: LanguageClient) -> None:
    async def poll() -> None:
        while not any(
            isinstance(v, types.WorkDoneProgressEnd)
            for r in client.progress_reports.values()
            for v in r
        ):
            await asyncio.sleep(0.05)

    await asyncio.wait_for(poll(), GUARD)


@pytest_lsp.fixture(params=["up", "down"], config=ClientServerConfig(server_command=SERVER))
async def client(request: pytest.FixtureRequest, lsp_client: LanguageClient, tmp_path: Path) -> Any:
    root = tmp_path / "repo"
    make_repo(root, TREE)
    if request.param == "up":
        url = request.getfixturevalue("pg_url")
        Publisher(url, root, Settings(embedder="hash"), embedder=HashEmbedder()).publish("main")
    else:
        url = "postgresql://postgres@/codeqa?host=" + str(tmp_path / "no-server")
    (root / "app/auth.py").write_text(AUTH_PY.replace("partition", "xylophone_partition"))
    lsp_client.mode = request.param  # type: ignore[attr-defined]

    @lsp_client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def on_register(params: types.RegistrationParams) -> None:
        return None

    @lsp_client.feature("codeqa/answerDelta")
    def on_delta(params: Any) -> None:
        return None

    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            root_uri=root.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name="repo")],
            initialization_options={
                "embedder": "hash",
                "indexDir": str(tmp_path / "index"),
                "userSettings": {"store": url},
            },
        )
    )
    yield
    await lsp_client.shutdown_session()


async def test_overlay_through_the_language_server(client: LanguageClient) -> None:
    await _indexed(client)
    warnings = [m.message for m in client.messages if "shared index unavailable" in m.message]
    if client.mode == "up":  # type: ignore[attr-defined]
        assert warnings == []
    else:
        assert len(warnings) == 1 and "\n" not in warnings[0]
    status = await _command(client, "codeqa.status", {})
    assert status["files"] == 4 and status["coverage"] == 1.0

    hits = await _command(client, "codeqa.search", {"query": "xylophone partition", "topK": 3})
    assert hits[0]["path"] == "app/auth.py"  # the working-tree version, from the local overlay
    hits = await _command(client, "codeqa.search", {"query": "retry with backoff", "topK": 3})
    assert hits[0]["path"] == "net/retry.go"  # from the shared snapshot when it is up

    answer = await _command(client, "codeqa.ask", {"question": "how does RetryWithBackoff retry?"})
    cited = [c for c in answer["citations"] if c["path"] == "net/retry.go"]
    assert cited and cited[0]["startLine"] == 3 and not cited[0]["stale"]


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER))
async def doomed_client(lsp_client: LanguageClient, tmp_path: Path) -> Any:
    """A client on a workspace published to a database server of its own, which the test
    kills while the session runs."""
    import shutil
    import tempfile

    import pgserver

    data = (
        Path(tempfile.mkdtemp(prefix="codeqa-pg-")) / "pgdata"
    )  # where the server's user can reach
    server = pgserver.get_server(data, cleanup_mode="delete")
    socket_dir = server.get_uri().split("host=", 1)[1].split("&", 1)[0]
    server.psql("CREATE EXTENSION IF NOT EXISTS vector;")
    url = f"postgresql://postgres@/postgres?host={socket_dir}"
    root = tmp_path / "repo"
    make_repo(root, TREE)
    Publisher(url, root, Settings(embedder="hash"), embedder=HashEmbedder()).publish("main")
    (root / "app/auth.py").write_text(AUTH_PY.replace("partition", "xylophone_partition"))
    lsp_client.pg = server  # type: ignore[attr-defined]

    @lsp_client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def on_register(params: types.RegistrationParams) -> None:
        return None

    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            root_uri=root.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name="repo")],
            initialization_options={
                "embedder": "hash",
                "indexDir": str(tmp_path / "index"),
                "userSettings": {"store": url},
            },
        )
    )
    yield
    await lsp_client.shutdown_session()
    server._cleanup()
    shutil.rmtree(data.parent, ignore_errors=True)


async def test_database_killed_mid_session_is_said_once_at_query_time(
    doomed_client: LanguageClient,
) -> None:
    client = doomed_client
    await _indexed(client)
    hits = await _command(client, "codeqa.search", {"query": "retry with backoff", "topK": 3})
    assert hits[0]["path"] == "net/retry.go"  # from the shared snapshot

    def warnings() -> list[str]:
        return [m.message for m in client.messages if "shared index unavailable" in m.message]

    assert warnings() == []
    client.pg._cleanup()  # type: ignore[attr-defined]  # the database server goes away
    hits = await _command(client, "codeqa.search", {"query": "xylophone partition", "topK": 3})
    assert hits and hits[0]["path"] == "app/auth.py"  # answered from the local index

    async def warned() -> None:
        while not warnings():
            await asyncio.sleep(0.05)

    await asyncio.wait_for(warned(), GUARD)  # no index run in between: the query said it
    [message] = warnings()
    assert message.startswith("codeqa: ") and "\n" not in message

    def finished_runs() -> int:
        return sum(
            isinstance(v, types.WorkDoneProgressEnd)
            for r in client.progress_reports.values()
            for v in r
        )

    async def reindexed() -> None:  # the local take-over is an ordinary run, with progress
        while finished_runs() < 2:
            await asyncio.sleep(0.05)

    await asyncio.wait_for(reindexed(), GUARD)
    for query in ("retry with backoff", "session store"):
        await _command(client, "codeqa.search", {"query": query, "topK": 3})
    status = await _command(client, "codeqa.status", {})
    assert status["files"] == 4
    assert len(warnings()) == 1  # once
