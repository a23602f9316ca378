"""Issue 15 (High): an API key from the environment never follows a workspace's baseUrl.

The real server over stdio with `OPENAI_API_KEY` set, answering and embedding through the
real `openai` SDK against the loopback provider. A `baseUrl` / `embeddingBaseUrl` from
workspace-scoped settings (top-level `initializationOptions`, `workspace/configuration`)
gets no key of the user's; a remote one is refused outright; the same URL under
`initializationOptions.userSettings` (user scope, the launching client's word) gets the key.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.fakes.llm_server import FakeLLMServer, Reply
from tests.reliability.harness import served
from tests.server.rawclient import RawClient
from tests.server.workspace import make_workspace

ENV_KEY = "sk-proj-EnvOnly7Tx2Lp9Vb4Nc8Rz1Kd6Hs3Wf5Gj0Ya2Ue8Io4"
GUARD = 120.0  # seconds; only stops a hung test


@pytest.fixture(autouse=True)
def env_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


def _auth_headers(fake: FakeLLMServer, endpoint: str) -> list[str]:
    return [r.headers.get("authorization", "") for r in fake.requests_to(endpoint)]


async def test_workspace_endpoints_never_receive_the_env_key(
    tmp_path: Path, fake_llm: FakeLLMServer
) -> None:
    fake_llm.default_reply = Reply("Settings are loaded by load_settings [1].")
    root = make_workspace(tmp_path / "ws")
    options = {
        "embedder": "openai",
        "embeddingBaseUrl": fake_llm.openai_url,
        "minScore": -1.0,
        "provider": "openai",
        "model": "gpt-test",
        "baseUrl": fake_llm.openai_url,
    }
    async with served(tmp_path, root, options, log_level="debug", log_to_file=True) as server:
        answer = await server.command("codeqa.ask", {"question": "how are settings loaded?"})
        log = server.log()
    assert answer["provider"] == "openai", answer
    chat, embeddings = _auth_headers(fake_llm, "chat"), _auth_headers(fake_llm, "embeddings")
    assert chat and embeddings  # both endpoints were really used
    assert not any(ENV_KEY in h for h in chat + embeddings), chat + embeddings
    assert ENV_KEY not in log


async def test_user_scoped_endpoint_receives_the_env_key(
    tmp_path: Path, fake_llm: FakeLLMServer
) -> None:
    fake_llm.default_reply = Reply("Settings are loaded by load_settings [1].")
    root = make_workspace(tmp_path / "ws")
    options = {
        "embedder": "hash",
        "provider": "openai",
        "model": "gpt-test",
        "minScore": -1.0,
        "userSettings": {"baseUrl": fake_llm.openai_url},
    }
    async with served(tmp_path, root, options) as server:
        await server.command("codeqa.ask", {"question": "how are settings loaded?"})
    assert _auth_headers(fake_llm, "chat") == [f"Bearer {ENV_KEY}"] * len(
        fake_llm.requests_to("chat")
    )
    assert fake_llm.requests_to("chat")


async def test_remote_workspace_endpoint_is_refused(tmp_path: Path) -> None:
    """A repository's settings (pulled with workspace/configuration) point at a remote host."""
    root = make_workspace(tmp_path / "ws")
    client = await RawClient.start()
    client.config = {"provider": "openai", "baseUrl": "http://203.0.113.9:9/v1"}
    try:
        await asyncio.wait_for(
            client.initialize(
                root,
                {"embedder": "hash", "minScore": -1.0, "indexDir": str(tmp_path / "index")},
                capabilities={
                    "workspace": {"configuration": True},
                    "window": {"workDoneProgress": True},
                },
            ),
            GUARD,
        )
        await asyncio.wait_for(client.wait_for(lambda: bool(client.progress("end"))), GUARD)
        reply = await asyncio.wait_for(
            client.command("codeqa.ask", {"question": "how are settings loaded?"}), GUARD
        )
        result = reply["result"]
        assert result["provider"] == "extractive"
        assert "comes from workspace settings" in (result["error"] or "")
        assert "203.0.113.9" in result["error"]
    finally:
        await client.close()
