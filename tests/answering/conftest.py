"""Shared fixtures: the loopback fake LLM server."""

from tests.fakes import fake_llm  # noqa: F401
