"""Nothing leaves the machine unless the command line says so; a repository cannot opt in.

The loopback fake stands in for a provider. Without flags the server must never contact
it, even with provider keys and `OPENAI_BASE_URL` in the environment and a workspace file
asking for a remote provider; with `--provider openai --base-url` it must, with the
configured key and secret-shaped text redacted from what is sent.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.fakes.llm_server import FakeLLMServer
from tests.mcp.conftest import call, serve, wait_until_indexed

QUESTION = "how do we retry a failed upload?"


def _workspace_asks_for_remote(root: Path, url: str) -> None:
    (root / ".vscode").mkdir()
    (root / ".vscode" / "settings.json").write_text(
        json.dumps(
            {"codeqa.provider": "openai", "codeqa.baseUrl": url, "codeqa.embedder": "openai"}
        )
    )
    (root / ".codeqa.json").write_text(json.dumps({"provider": "openai", "baseUrl": url}))


async def test_no_flags_means_no_request_leaves_the_machine(
    project: Path, fake_llm: FakeLLMServer
) -> None:
    _workspace_asks_for_remote(project, fake_llm.openai_url)
    env = {
        "OPENAI_API_KEY": "sk-env-key-for-the-test",
        "OPENAI_BASE_URL": fake_llm.openai_url,
        "ANTHROPIC_API_KEY": "sk-ant-env-key-for-the-test",
    }
    async with serve(project, env=env) as client:  # default flags: hash embedder only
        await wait_until_indexed(client)
        asked = await call(client, "ask", question=QUESTION)
        explained = await call(client, "explain", symbol="retry_failed_upload")
        status = await call(client, "status")
    assert fake_llm.requests == []
    assert asked["provider"] == explained["provider"] == "extractive"
    assert status["answers"] == "extractive"


async def test_a_provider_on_the_command_line_is_used_with_redaction(
    project: Path, fake_llm: FakeLLMServer
) -> None:
    key = "sk-cmdline-key-0123456789abcdef"
    (project / "src" / "config.py").write_text(
        f'def upload_settings():\n    """Upload retry settings."""\n    return {{\'token\': '
        f"'{key}', 'retries': 3}}\n"
    )
    args = (
        "--embedder",
        "hash",
        "--provider",
        "openai",
        "--base-url",
        fake_llm.openai_url,
        "--model",
        "fake-model",
    )
    async with serve(project, *args, env={"OPENAI_API_KEY": key}) as client:
        await wait_until_indexed(client)
        asked = await call(client, "ask", question="what are the upload retry settings?")
        status = await call(client, "status")
    chats = fake_llm.requests_to("chat")
    assert chats, "the configured provider was never called"
    assert asked["provider"] == "openai"
    assert status["answers"].startswith("openai (fake-model at http://127.0.0.1")
    sent = json.dumps([request.body for request in chats])
    assert "upload_settings" in sent and key not in sent
    assert key not in json.dumps(asked)
