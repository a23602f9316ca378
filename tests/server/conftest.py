"""Server tests: the real server over stdio."""

from tests.fakes import fake_llm  # noqa: F401
