"""Provider faults through the real server: every one ends in a result, never an error.

One server session per provider SDK walks a fault, then a healthy request, five times:
401, 429 without `retry-after`, 503, a stream cut mid-answer, and slow-loris (headers then
silence) with a small `requestTimeout`. Each fault must come back as an AnswerResult with
a one-line `error` and the extractive answer with citations; the request after it must be
answered by the model again; and the server's stderr (where its log goes here) must hold
no traceback. The answering layer's own tests cover the full fault matrix in-process;
this is the same contract seen from an editor.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.llm_server import Behaviour, CutStream, FakeLLMServer, Reply, SlowLoris, Status
from tests.reliability.harness import notifications, served
from tests.server.workspace import make_workspace

TIMEOUT = 1.0
MAX_RETRIES = 1
# (id, behaviour, fragment of the one-line reason)
FAULTS: list[tuple[str, Behaviour, str]] = [
    ("401", Status(401, "invalid api key"), "authentication failed (401)"),
    ("429", Status(429, "quota exceeded"), "rate limited (429)"),
    ("503", Status(503, "overloaded"), "server error (503)"),
    (
        "cut",
        CutStream("Settings come from load_settings, which opens the", after_deltas=2),
        "lost before the answer was complete",
    ),
    ("slow-loris", SlowLoris(seconds=120), f"timed out after {TIMEOUT:g}s"),
]
# Distinct questions (a healthy answer is cached), each confidently retrieved with the hash
# embedder (a low-confidence question never reaches the model).
QUESTIONS = [
    (
        "how are settings loaded from the config file?",
        "which port is used when the config names none?",
    ),
    ("how does Session send retry a payload?", "how does the LRU cache evict old entries?"),
    ("how does LRUCache get mark a key as recently used?", "what does Session __init__ load?"),
    ("how does load_settings parse the JSON config file?", "how does LRUCache put insert a value?"),
    ("how does Session _try decide success?", "what does default_port return?"),
]


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_each_fault_falls_back_and_the_next_request_succeeds(
    tmp_path: Path, fake_llm: FakeLLMServer, provider: str
) -> None:
    root = make_workspace(tmp_path / "ws")
    endpoint = "chat" if provider == "openai" else "messages"
    fake_llm.default_reply = Reply("Settings are loaded by load_settings [1].")
    options = {
        "embedder": "hash",
        "provider": provider,
        "model": "m-test",
        "apiKey": "cq-test-key-faults-0001",
        "baseUrl": fake_llm.openai_url if provider == "openai" else fake_llm.url,
        "requestTimeout": TIMEOUT,
        "maxRetries": MAX_RETRIES,
    }
    async with served(tmp_path, root, options, log_level="info") as server:
        for (name, behaviour, reason), (faulty, healthy) in zip(FAULTS, QUESTIONS, strict=True):
            fake_llm.script(endpoint, *[behaviour] * (MAX_RETRIES + 1))
            failed = await server.command(
                "codeqa.ask", {"question": faulty, "requestId": f"{name}-fault"}
            )
            assert fake_llm.requests_to(endpoint), name
            fake_llm.clear()  # unused retries' scripts too: the next request is healthy

            error = failed["error"]
            assert isinstance(error, str) and reason in error and "\n" not in error, (name, error)
            assert error.startswith(f"{provider} (m-test): "), error
            assert failed["provider"] == "extractive", failed
            assert failed["answer"].startswith("**The language model could not answer:"), failed[
                "answer"
            ]
            assert failed["citations"], failed
            first = failed["citations"][0]
            assert f"[{first['number']}]({first['uri']}#L{first['startLine']}" in failed["answer"]
            deltas = "".join(
                d["text"]
                for d in notifications(server.client, "codeqa/answerDelta")
                if d["requestId"] == failed["requestId"]
            )
            if name == "cut":  # what was streamed before the cut is marked as interrupted
                assert deltas.startswith("Settings come from") and "[interrupted: " in deltas, (
                    deltas
                )

            ok = await server.command(
                "codeqa.ask", {"question": healthy, "requestId": f"{name}-ok"}
            )
            assert ok["error"] is None and ok["provider"] == provider, (name, ok)
            assert ok["answer"].startswith("Settings are loaded by load_settings [1]("), ok[
                "answer"
            ]
            assert len(fake_llm.requests_to(endpoint)) == 1, name
            fake_llm.clear()

    stderr = server.stderr()
    assert stderr.count("answer fell back to extractive") == len(FAULTS), stderr[
        -3000:
    ]  # the log is here
    assert "Traceback" not in stderr, stderr[-6000:]
