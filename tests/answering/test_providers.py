"""Providers through the real `openai` / `anthropic` SDKs against the loopback server.

Issue 4 and 9: streaming with usage, every fault (401, 403, 429 with and without
`retry-after`, 500, 503, connection refused, slow-loris, cut stream, malformed JSON) →
bounded retries, a one-line reason, never a hang past the configured timeout.
"""

from __future__ import annotations

import time

import pytest

from codeqa_lsp.answering.model import Usage
from codeqa_lsp.answering.providers import ProviderError, make_provider, provider_identity
from codeqa_lsp.answering.providers.anthropic_provider import DEFAULT_MODEL as ANTHROPIC_DEFAULT
from codeqa_lsp.answering.providers.anthropic_provider import AnthropicProvider
from codeqa_lsp.answering.providers.base import Provider
from codeqa_lsp.answering.providers.openai_provider import OpenAIProvider
from codeqa_lsp.config import Settings
from tests.fakes.llm_server import (
    CutStream,
    FakeLLMServer,
    Malformed,
    Reply,
    SlowLoris,
    Status,
    unused_port_url,
)

ENDPOINT = {"anthropic": "messages", "openai": "chat"}
PROVIDERS = ("anthropic", "openai")


def provider_for(server_url: str, name: str, **overrides: object) -> Provider:
    options: dict = {
        "provider": name,
        "base_url": server_url,
        "api_key": "test-key-123456",
        "model": f"{name}-test-model",
        "request_timeout": 10.0,
        "max_retries": 2,
    }
    options.update(overrides)
    provider = make_provider(Settings(**options))
    assert provider is not None
    return provider


def collect(provider: Provider) -> tuple[str, Usage | None]:
    text, usage = "", None
    for item in provider.stream("SYSTEM RULES", "USER QUESTION", max_tokens=50):
        if isinstance(item, Usage):
            usage = item
        else:
            text += item
    return text, usage


@pytest.mark.parametrize("name", PROVIDERS)
def test_streams_text_and_usage(fake_llm: FakeLLMServer, name: str) -> None:
    fake_llm.script(
        ENDPOINT[name], Reply("Streamed answer [1].", deltas=4, input_tokens=120, output_tokens=9)
    )
    items = list(provider_for(fake_llm.url, name).stream("SYSTEM RULES", "USER QUESTION"))
    pieces = [i for i in items if isinstance(i, str)]
    assert "".join(pieces) == "Streamed answer [1]." and len(pieces) == 4
    assert items[-1] == Usage(120, 9)  # usage comes last, exactly once
    assert sum(isinstance(i, Usage) for i in items) == 1


@pytest.mark.parametrize("name", PROVIDERS)
def test_request_shape(fake_llm: FakeLLMServer, name: str) -> None:
    collect(provider_for(fake_llm.url, name))
    (request,) = fake_llm.requests
    assert request.stream and request.body["model"] == f"{name}-test-model"
    if name == "anthropic":
        assert request.body["system"] == "SYSTEM RULES"
        assert request.body["messages"] == [{"role": "user", "content": "USER QUESTION"}]
        assert request.body["max_tokens"] == 50
    else:
        assert request.body["messages"][0] == {"role": "system", "content": "SYSTEM RULES"}
        assert request.body["stream_options"] == {"include_usage": True}
        assert request.body["max_tokens"] == 50  # a compatible server: the classic parameter


@pytest.mark.parametrize("name", PROVIDERS)
def test_429_then_success_honours_retry_after(fake_llm: FakeLLMServer, name: str) -> None:
    fake_llm.script(
        ENDPOINT[name], Status(429, "slow down", headers={"retry-after": "0.3"}), Reply("ok")
    )
    started = time.monotonic()
    assert collect(provider_for(fake_llm.url, name))[0] == "ok"
    assert time.monotonic() - started >= 0.3  # it waited as told before retrying
    assert len(fake_llm.requests) == 2


@pytest.mark.parametrize("name", PROVIDERS)
@pytest.mark.parametrize(
    "behaviour, message",
    [
        (Status(401, "bad key"), "authentication failed (401)"),
        (Status(403, "not allowed here"), "permission denied (403): not allowed here"),
        (Status(400, "bad request body"), "request rejected (400): bad request body"),
        (Malformed(), "malformed response"),
        (
            CutStream("one two three four five six seven", after_deltas=2),
            "lost before the answer was complete",
        ),
    ],
)
def test_non_retryable_faults_fail_once_with_a_clear_reason(
    fake_llm: FakeLLMServer, name: str, behaviour: object, message: str
) -> None:
    fake_llm.script(ENDPOINT[name], behaviour)  # type: ignore[arg-type]
    with pytest.raises(ProviderError) as raised:
        collect(provider_for(fake_llm.url, name))
    assert message in str(raised.value)
    assert "\n" not in str(raised.value) and "test-key-123456" not in str(raised.value)
    assert len(fake_llm.requests) == 1  # no retry: the same request would fail the same way


@pytest.mark.parametrize("name", PROVIDERS)
@pytest.mark.parametrize(
    "behaviour, message",
    [
        (Status(500, "boom"), "server error (500): boom"),
        (Status(503, "overloaded"), "server error (503): overloaded"),
        (Status(429, "quota"), "rate limited (429): quota"),  # no retry-after: exponential backoff
    ],
)
def test_retryable_faults_are_retried_a_bounded_number_of_times(
    fake_llm: FakeLLMServer, name: str, behaviour: Status, message: str
) -> None:
    fake_llm.script(ENDPOINT[name], behaviour, behaviour, behaviour, behaviour)
    with pytest.raises(ProviderError) as raised:
        collect(provider_for(fake_llm.url, name, max_retries=1))
    assert message in str(raised.value) and "gave up after 2 attempts" in str(raised.value)
    assert len(fake_llm.requests) == 2 and fake_llm.pending() == 2


@pytest.mark.parametrize("name", PROVIDERS)
def test_retry_after_longer_than_the_timeout_gives_up_at_once(
    fake_llm: FakeLLMServer, name: str
) -> None:
    fake_llm.script(
        ENDPOINT[name], Status(429, "quota", headers={"retry-after": "120"}), Reply("late")
    )
    started = time.monotonic()
    with pytest.raises(ProviderError, match=r"retry after 120s .*within the 5s timeout"):
        collect(provider_for(fake_llm.url, name, request_timeout=5.0))
    assert time.monotonic() - started < 5.0  # did not sleep into a wait it could not finish
    assert len(fake_llm.requests) == 1


@pytest.mark.parametrize("name", PROVIDERS)
def test_slow_loris_never_hangs_past_the_timeout(fake_llm: FakeLLMServer, name: str) -> None:
    fake_llm.script(ENDPOINT[name], *[SlowLoris(seconds=120)] * 5)
    started = time.monotonic()
    with pytest.raises(ProviderError, match=r"timed out after 0\.5s"):
        collect(provider_for(fake_llm.url, name, request_timeout=0.5, max_retries=3))
    # The deadline covers all attempts; generous slack for a loaded machine, far below 120 s.
    assert time.monotonic() - started < 10


@pytest.mark.parametrize("name", PROVIDERS)
def test_connection_refused(name: str) -> None:
    with pytest.raises(ProviderError, match=r"could not connect to http://127\.0\.0\.1"):
        collect(provider_for(unused_port_url(), name, max_retries=1))


def test_missing_keys_and_local_openai_without_key(
    monkeypatch: pytest.MonkeyPatch, fake_llm: FakeLLMServer
) -> None:
    for var in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(ProviderError, match="ANTHROPIC_API_KEY"):
        make_provider(Settings(provider="anthropic"))
    with pytest.raises(ProviderError, match="OPENAI_API_KEY"):
        make_provider(Settings(provider="openai"))
    local = make_provider(Settings(provider="openai", base_url=fake_llm.url, model="llama"))
    assert isinstance(local, OpenAIProvider)
    assert collect(local)[0] == fake_llm.default_reply.text
    assert fake_llm.requests[0].headers["authorization"] == "Bearer not-needed"


def test_sdk_environment_variables_are_honoured(
    monkeypatch: pytest.MonkeyPatch, fake_llm: FakeLLMServer
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "env-anthropic-key-1")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_llm.url)
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.openai_url)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    anthropic_provider = make_provider(Settings(provider="anthropic"))
    assert isinstance(anthropic_provider, AnthropicProvider)
    assert anthropic_provider.model == ANTHROPIC_DEFAULT
    collect(anthropic_provider)
    openai_provider = make_provider(Settings(provider="openai", model="local-model"))
    assert openai_provider is not None
    collect(openai_provider)
    assert [r.path for r in fake_llm.requests] == ["/v1/messages", "/v1/chat/completions"]
    auth = (
        fake_llm.requests[0].headers.get("x-api-key")
        or fake_llm.requests[0].headers["authorization"]
    )
    assert auth.endswith("env-anthropic-key-1")


def test_allow_remote_false_and_extractive_mean_no_provider() -> None:
    assert (
        make_provider(Settings(provider="anthropic", api_key="k" * 10, allow_remote=False)) is None
    )
    assert make_provider(Settings()) is None
    assert provider_identity(Settings(provider="openai", model="m")) == ("openai", "m")
    assert provider_identity(Settings(provider="openai", allow_remote=False)) is None


@pytest.mark.parametrize("name", PROVIDERS)
def test_closing_the_stream_releases_the_connection(fake_llm: FakeLLMServer, name: str) -> None:
    from tests.fakes.llm_server import Stall

    fake_llm.script(ENDPOINT[name], Stall("alpha beta gamma delta", after_deltas=1))
    stream = provider_for(fake_llm.url, name, request_timeout=600.0).stream("S", "U")
    first = next(stream)
    assert isinstance(first, str) and first
    stream.close()
    assert fake_llm.disconnected.wait(30), "closing the generator did not close the HTTP response"


@pytest.mark.parametrize("name", PROVIDERS)
def test_cancel_event_interrupts_a_blocked_read(fake_llm: FakeLLMServer, name: str) -> None:
    import threading

    from codeqa_lsp.answering.providers.base import Cancelled
    from tests.fakes.llm_server import Stall

    fake_llm.script(ENDPOINT[name], Stall("alpha beta gamma delta", after_deltas=1))
    cancel = threading.Event()
    stream = provider_for(fake_llm.url, name, request_timeout=600.0).stream("S", "U", cancel=cancel)
    assert isinstance(next(stream), str)
    threading.Timer(0.2, cancel.set).start()  # from another thread, while next() is blocked
    with pytest.raises(Cancelled):
        next(stream)
    assert fake_llm.disconnected.wait(30)


@pytest.mark.parametrize("name", PROVIDERS)
def test_deadline_is_exact_even_mid_stream(fake_llm: FakeLLMServer, name: str) -> None:
    from tests.fakes.llm_server import Stall

    fake_llm.script(ENDPOINT[name], Stall("alpha beta gamma delta", after_deltas=1, seconds=120))
    stream = provider_for(fake_llm.url, name, request_timeout=1.0).stream("S", "U")
    started = time.monotonic()
    assert isinstance(next(stream), str)
    with pytest.raises(ProviderError, match=r"timed out after 1s"):
        next(stream)
    assert time.monotonic() - started < 8  # not the server's 120 s


@pytest.mark.parametrize("name", PROVIDERS)
def test_an_answer_cut_by_the_length_limit_says_so(fake_llm: FakeLLMServer, name: str) -> None:
    from codeqa_lsp.answering.providers.base import LENGTH_LIMIT_NOTE

    fake_llm.script(ENDPOINT[name], Reply("A long answer that", hit_limit=True), Reply("Short."))
    assert collect(provider_for(fake_llm.url, name))[0] == "A long answer that" + LENGTH_LIMIT_NOTE
    assert collect(provider_for(fake_llm.url, name))[0] == "Short."
