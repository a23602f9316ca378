"""The fake server must be indistinguishable from the real APIs to the real SDK clients."""

from __future__ import annotations

import anthropic
import httpx2
import openai
import pytest

from tests.fakes.llm_server import (
    CutStream,
    FakeLLMServer,
    Malformed,
    Reply,
    SlowLoris,
    Stall,
    Status,
    embed_text,
    unused_port_url,
)


def _openai(server: FakeLLMServer, **kw: object) -> openai.OpenAI:
    options: dict = {"max_retries": 0, "timeout": 5.0, "base_url": server.openai_url} | kw
    return openai.OpenAI(api_key="sk-test", **options)


def _anthropic(server: FakeLLMServer, **kw: object) -> anthropic.Anthropic:
    options: dict = {"max_retries": 0, "timeout": 5.0} | kw
    return anthropic.Anthropic(api_key="sk-ant-test", base_url=server.url, **options)


def test_openai_stream_with_usage_and_recorded_request(fake_llm: FakeLLMServer) -> None:
    fake_llm.script(
        "chat", Reply("Hello from the fake [1].", deltas=3, input_tokens=42, output_tokens=7)
    )
    client = _openai(fake_llm)
    stream = client.chat.completions.create(
        model="gpt-test",
        messages=[{"role": "system", "content": "SYS"}, {"role": "user", "content": "Q?"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    text, usage, finish = "", None, None
    for chunk in stream:
        if chunk.choices:
            text += chunk.choices[0].delta.content or ""
            finish = chunk.choices[0].finish_reason or finish
        if chunk.usage:
            usage = chunk.usage
    assert text == "Hello from the fake [1]."
    assert finish == "stop"
    assert usage is not None and (usage.prompt_tokens, usage.completion_tokens) == (42, 7)
    (request,) = fake_llm.requests_to("chat")
    assert request.path == "/v1/chat/completions"
    assert request.body["model"] == "gpt-test"
    assert request.body["messages"][0] == {"role": "system", "content": "SYS"}
    assert request.headers["authorization"] == "Bearer sk-test"


def test_openai_non_stream_and_bare_base_url(fake_llm: FakeLLMServer) -> None:
    fake_llm.script("chat", Reply("plain"))
    client = _openai(fake_llm, base_url=fake_llm.url)  # no /v1: still served
    result = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
    assert result.choices[0].message.content == "plain"
    assert result.usage is not None and result.usage.completion_tokens == 1
    assert fake_llm.requests[0].path == "/chat/completions"


def test_anthropic_stream_event_sequence(fake_llm: FakeLLMServer) -> None:
    fake_llm.script(
        "messages", Reply("Claude-shaped answer.", deltas=5, input_tokens=11, output_tokens=4)
    )
    client = _anthropic(fake_llm)
    with client.messages.stream(
        model="claude-test",
        max_tokens=100,
        system="SYS",
        messages=[{"role": "user", "content": "Q"}],
    ) as stream:
        pieces = list(stream.text_stream)
        final = stream.get_final_message()
    assert "".join(pieces) == "Claude-shaped answer." and len(pieces) == 5
    assert final.stop_reason == "end_turn"
    assert (final.usage.input_tokens, final.usage.output_tokens) == (11, 4)
    (request,) = fake_llm.requests_to("messages")
    assert request.body["system"] == "SYS" and request.body["stream"] is True
    auth = request.headers.get("x-api-key") or request.headers.get("authorization", "")
    assert auth.endswith("sk-ant-test") and "anthropic-version" in request.headers


def test_anthropic_non_stream(fake_llm: FakeLLMServer) -> None:
    client = _anthropic(fake_llm)
    message = client.messages.create(
        model="c", max_tokens=10, messages=[{"role": "user", "content": "Q"}]
    )
    assert message.content[0].type == "text"
    assert message.content[0].text == fake_llm.default_reply.text


def test_embeddings_deterministic_base64_and_float(fake_llm: FakeLLMServer) -> None:
    client = _openai(fake_llm)
    first = client.embeddings.create(
        model="e", input=["parse the config", "open a socket"], dimensions=64
    )
    again = client.embeddings.create(
        model="e", input="parse the config", dimensions=64, encoding_format="float"
    )
    assert [len(d.embedding) for d in first.data] == [64, 64]
    assert first.data[0].embedding == pytest.approx(again.data[0].embedding, abs=1e-6)
    assert again.data[0].embedding == pytest.approx(embed_text("parse the config", 64), abs=1e-6)
    assert first.usage.prompt_tokens == 6
    assert fake_llm.requests[0].body["encoding_format"] == "base64"  # the SDK's default
    default = client.embeddings.create(model="e", input="x")
    assert len(default.data[0].embedding) == fake_llm.embedding_dim


@pytest.mark.parametrize(
    "code, error",
    [
        (401, openai.AuthenticationError),
        (403, openai.PermissionDeniedError),
        (429, openai.RateLimitError),
        (500, openai.InternalServerError),
        (503, openai.InternalServerError),
    ],
)
def test_openai_status_errors(fake_llm: FakeLLMServer, code: int, error: type[Exception]) -> None:
    fake_llm.script("chat", Status(code, "nope"))
    with pytest.raises(error, match="nope"):
        _openai(fake_llm).chat.completions.create(
            model="m", messages=[{"role": "user", "content": "x"}]
        )


def test_anthropic_429_then_success_honours_retry_after(fake_llm: FakeLLMServer) -> None:
    fake_llm.script("messages", Status(429, headers={"retry-after": "0.2"}), Reply("after retry"))
    client = _anthropic(fake_llm, max_retries=2)
    message = client.messages.create(
        model="c", max_tokens=10, messages=[{"role": "user", "content": "Q"}]
    )
    assert message.content[0].type == "text" and message.content[0].text == "after retry"
    assert len(fake_llm.requests_to("messages")) == 2 and fake_llm.pending() == 0


def test_cut_stream_is_a_transport_error(fake_llm: FakeLLMServer) -> None:
    fake_llm.script("chat", CutStream("one two three four five six", after_deltas=2))
    stream = _openai(fake_llm).chat.completions.create(
        model="m", messages=[{"role": "user", "content": "x"}], stream=True
    )
    received = []
    with pytest.raises(openai.APIConnectionError):
        for chunk in stream:
            if chunk.choices:
                received.append(chunk.choices[0].delta.content or "")
    assert 0 < len("".join(received)) < len("one two three four five six")


def test_anthropic_cut_stream(fake_llm: FakeLLMServer) -> None:
    fake_llm.script("messages", CutStream("alpha beta gamma delta epsilon", after_deltas=2))
    client = _anthropic(fake_llm)
    pieces: list[str] = []
    # This SDK version lets the transport error through unwrapped during iteration.
    with (
        pytest.raises((anthropic.APIConnectionError, httpx2.TransportError)),
        client.messages.stream(
            model="c", max_tokens=10, messages=[{"role": "user", "content": "Q"}]
        ) as stream,
    ):
        pieces.extend(stream.text_stream)
    assert len(pieces) == 2


def test_slow_loris_hits_the_read_timeout(fake_llm: FakeLLMServer) -> None:
    fake_llm.script("chat", SlowLoris())
    client = _openai(fake_llm, timeout=httpx2.Timeout(0.3))
    with pytest.raises(openai.APITimeoutError):
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])


def test_malformed_json_and_connection_refused(fake_llm: FakeLLMServer) -> None:
    fake_llm.script("chat", Malformed())
    with pytest.raises(ValueError):  # the SDK surfaces the raw JSONDecodeError
        _openai(fake_llm).chat.completions.create(
            model="m", messages=[{"role": "user", "content": "x"}]
        )
    refused = openai.OpenAI(api_key="k", base_url=unused_port_url(), max_retries=0)
    with pytest.raises(openai.APIConnectionError):
        refused.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])


def test_stop_releases_a_client_stuck_in_slow_loris() -> None:
    """Stopping the server must not wait for a slow-loris handler to time out."""
    server = FakeLLMServer().start()
    server.script("*", SlowLoris(seconds=600))
    import threading

    errors: list[BaseException] = []

    def call() -> None:
        try:
            _openai(server, timeout=600.0).chat.completions.create(
                model="m", messages=[{"role": "user", "content": "x"}]
            )
        except BaseException as exc:
            errors.append(exc)

    thread = threading.Thread(target=call)
    thread.start()
    while not server.requests:
        thread.join(0.01)
    server.stop()
    thread.join()
    assert errors and isinstance(errors[0], openai.APIConnectionError | openai.APIError)


def test_stall_sees_the_client_hang_up(fake_llm: FakeLLMServer) -> None:
    fake_llm.script("chat", Stall("first second third", after_deltas=1))
    stream = _openai(fake_llm, timeout=600.0).chat.completions.create(
        model="m", messages=[{"role": "user", "content": "x"}], stream=True
    )
    pieces = []
    for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            pieces.append(chunk.choices[0].delta.content)
            break
    stream.close()
    assert fake_llm.disconnected.wait(30), "the server never saw the client close the stream"
    assert pieces == ["first "]


def test_embeddings_faults(fake_llm: FakeLLMServer) -> None:
    fake_llm.script("embeddings", CutStream(), Status(503, "busy"))
    client = _openai(fake_llm)
    with pytest.raises(openai.APIConnectionError):
        client.embeddings.create(model="e", input="x")
    with pytest.raises(openai.InternalServerError, match="busy"):
        client.embeddings.create(model="e", input="x")
    assert len(client.embeddings.create(model="e", input="x").data) == 1
