"""Test doubles shared by the whole suite.

`FakeLLMServer` is a loopback HTTP server speaking the OpenAI (chat, embeddings) and
Anthropic (messages) wire formats; see `tests/fakes/llm_server.py` for scripting.

In your test package's ``conftest.py`` (importing the fixture into a test module itself
trips ruff's F811 on every test that uses it)::

    from tests.fakes import fake_llm  # noqa: F401

and in the test module::

    from tests.fakes.llm_server import FakeLLMServer, Reply, Status

    def test_something(fake_llm: FakeLLMServer) -> None:
        fake_llm.script("chat", Status(429, headers={"retry-after": "0.1"}), Reply("ok [1]"))
        ...  # point a client at fake_llm.url

Or without pytest: ``with FakeLLMServer() as server: ...``.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.llm_server import (
    CutStream,
    FakeLLMServer,
    Malformed,
    RecordedRequest,
    Reply,
    SlowLoris,
    Stall,
    Status,
    unused_port_url,
)

__all__ = [
    "CutStream",
    "FakeLLMServer",
    "Malformed",
    "RecordedRequest",
    "Reply",
    "SlowLoris",
    "Stall",
    "Status",
    "fake_llm",
    "unused_port_url",
]


@pytest.fixture
def fake_llm() -> Iterator[FakeLLMServer]:
    """A started `FakeLLMServer`, stopped (and every connection dropped) after the test."""
    with FakeLLMServer() as server:
        yield server
