"""Issue 9 at the answering level: provider faults, seeded secrets, bounded time.

Every fault ends in the extractive answer with a one-line reason in `Answer.error`; retries
are bounded by `maxRetries`; nothing waits past `requestTimeout` (small here).
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

import pytest

from codeqa_lsp.answering.model import Answer
from codeqa_lsp.engine import CodeBase
from tests.answering.conftest import SEEDED_SECRET_VALUES, MakeWorkspace, write_repo
from tests.fakes.llm_server import (
    Behaviour,
    CutStream,
    FakeLLMServer,
    Malformed,
    Reply,
    SlowLoris,
    Status,
    unused_port_url,
)

QUESTION = "how is the coupon discount computed at checkout?"
TIMEOUT = 1.5
MAX_RETRIES = 1


def ask(workspace: CodeBase, question: str = QUESTION) -> tuple[list[str], Answer]:
    items = list(workspace.ask_stream(question))
    final = items[-1]
    assert isinstance(final, Answer)
    return [i for i in items[:-1] if isinstance(i, str)], final


FAULTS: list[tuple[str, list[Behaviour], str, int]] = [
    # id, script, reason fragment, requests expected
    ("401", [Status(401, "invalid x-api-key")], "authentication failed (401)", 1),
    ("403", [Status(403, "region not allowed")], "permission denied (403): region not allowed", 1),
    (
        "429-retry-after",
        [Status(429, "slow", headers={"retry-after": "0.2"})] * 3,
        "rate limited (429)",
        2,
    ),
    (
        "429-no-retry-after",
        [Status(429, "quota exceeded")] * 3,
        "rate limited (429): quota exceeded",
        2,
    ),
    ("500", [Status(500, "internal")] * 3, "server error (500)", 2),
    ("503", [Status(503, "overloaded")] * 3, "server error (503)", 2),
    ("slow-loris", [SlowLoris(seconds=120)] * 3, f"timed out after {TIMEOUT:g}s", 1),
    ("malformed", [Malformed()], "malformed response", 1),
    (
        "cut",
        [CutStream("Half an answer that never", after_deltas=2)],
        "lost before the answer was complete",
        1,
    ),
]


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
@pytest.mark.parametrize("fault", FAULTS, ids=[f[0] for f in FAULTS])
def test_provider_fault_falls_back_with_a_clear_reason(
    make_workspace: MakeWorkspace,
    fake_llm: FakeLLMServer,
    provider: str,
    fault: tuple[str, list[Behaviour], str, int],
) -> None:
    _, script, reason, expected_requests = fault
    fake_llm.script("messages" if provider == "anthropic" else "chat", *script)
    workspace = make_workspace(
        provider=provider,
        base_url=fake_llm.url,
        api_key="k-123456789",
        request_timeout=TIMEOUT,
        max_retries=MAX_RETRIES,
        model="m",
    )
    started = time.monotonic()
    deltas, answer = ask(workspace)
    elapsed = time.monotonic() - started
    assert answer.error is not None and reason in answer.error
    assert answer.error.startswith(f"{provider} (m): ") and "\n" not in answer.error
    assert answer.provider == "extractive" and answer.text.startswith(
        "**The language model could not answer:"
    )
    assert any(c.symbol == "compute_discount" for c in answer.citations)
    assert len(fake_llm.requests) == expected_requests  # bounded retries
    assert answer.text in "".join(deltas)  # the fallback was streamed too
    # Bounded by the timeout (plus slack for a loaded machine), never by the server's 120 s.
    assert elapsed < TIMEOUT + 8


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_connection_refused_falls_back(make_workspace: MakeWorkspace, provider: str) -> None:
    workspace = make_workspace(
        provider=provider,
        base_url=unused_port_url(),
        api_key="k-123456789",
        request_timeout=TIMEOUT,
        max_retries=MAX_RETRIES,
    )
    _, answer = ask(workspace)
    assert answer.error and "could not connect to http://127.0.0.1:" in answer.error
    assert answer.provider == "extractive" and answer.citations


def test_missing_key_is_a_one_line_reason(
    make_workspace: MakeWorkspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    _, answer = ask(make_workspace(provider="anthropic"))
    assert answer.error == "no API key for anthropic: set ANTHROPIC_API_KEY or the `apiKey` setting"
    assert answer.provider == "extractive" and answer.citations


def test_recovers_after_a_fault(make_workspace: MakeWorkspace, fake_llm: FakeLLMServer) -> None:
    fake_llm.script("chat", Status(401), Reply("Works now [1]."))
    workspace = make_workspace(provider="openai", base_url=fake_llm.url, max_retries=0)
    assert ask(workspace)[1].error
    assert ask(workspace)[1].text == "Works now [1]."  # a failure is not cached


def test_seeded_secrets_never_reach_a_request_body_or_log(
    tmp_path: Path,
    make_workspace: MakeWorkspace,
    fake_llm: FakeLLMServer,
    caplog: pytest.LogCaptureFixture,
) -> None:
    root = write_repo(tmp_path / "secret-repo", with_secrets=True)
    caplog.set_level(logging.DEBUG)
    workspace = make_workspace(
        root,
        provider="openai",
        base_url=fake_llm.url,
        model="m",
        index_dir=str(tmp_path / "secret-index"),
    )
    questions = [
        QUESTION,
        "how are invoices uploaded to cloud storage with the AWS access key?",
        "what is the OpenAI API key in the env file?",
        "show the deploy private key id_rsa",
        "what GitHub token and Anthropic key does the cloud module use?",
    ]
    for question in questions:
        ask(workspace, question)
    assert fake_llm.requests, "at least one question must have reached the provider"
    bodies = fake_llm.all_bodies_text()
    for secret in SEEDED_SECRET_VALUES:
        assert secret not in bodies
        assert secret not in caplog.text


def test_explaining_a_secret_file_sends_nothing(
    make_workspace: MakeWorkspace, fake_llm: FakeLLMServer
) -> None:
    workspace = make_workspace(provider="openai", base_url=fake_llm.url, model="m")
    key_in_code = (
        'TOKEN = "ghp_Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv1Wx2Yz"\n\n\ndef token():\n    return TOKEN\n'
    )
    for path, text in ((".env", "API_KEY=whatever\n"), ("shop/creds.py", key_in_code)):
        (answer,) = list(workspace.explain_stream(path, 1, text=text))
        assert isinstance(answer, Answer) and "looks like it holds secrets" in answer.text
    assert fake_llm.requests == []


def test_answer_cache_respects_its_size_limit(tmp_path: Path) -> None:
    from codeqa_lsp.answering.cache import AnswerStore

    limit = 256 * 1024
    store = AnswerStore(tmp_path, limit, log_questions=False)
    for i in range(300):  # ~2.4 MB of answers into a 256 KB cache
        store.put(f"key-{i}", {"text": f"answer {i} " * 800, "chunk_ids": [], "usage": None})
    cache = store._open()
    assert cache is not None and cache.volume() <= limit * 1.25
    assert store.get("key-299") is not None and store.get("key-0") is None  # oldest evicted
    store.close()


def test_a_key_echoed_by_the_server_is_redacted_from_the_error(
    make_workspace: MakeWorkspace, fake_llm: FakeLLMServer, caplog: pytest.LogCaptureFixture
) -> None:
    from tests.answering.conftest import API_KEY

    caplog.set_level(logging.DEBUG)
    fake_llm.script("messages", Status(403, f"key {API_KEY} may not use this model"))
    workspace = make_workspace(
        provider="anthropic", base_url=fake_llm.url, api_key=API_KEY, max_retries=0
    )
    _, answer = ask(workspace)
    assert (
        answer.error
        and "permission denied (403): key [REDACTED] may not use this model" in answer.error
    )
    assert API_KEY not in answer.error and API_KEY not in answer.text and API_KEY not in caplog.text
