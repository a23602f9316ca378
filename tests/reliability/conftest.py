"""Cross-layer reliability tests: the real server over stdio against the loopback LLM."""

from tests.fakes import fake_llm  # noqa: F401
