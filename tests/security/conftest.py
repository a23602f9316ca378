"""Security suite (issue 15): each attack as a test."""

from tests.fakes import fake_llm  # noqa: F401
