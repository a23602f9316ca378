"""Settings arrive from editors as untrusted JSON: every bad value must be reported and
replaced by its default, never crash the server or silently change behaviour."""

from __future__ import annotations

import pytest

from codeqa_lsp.config import Settings


def test_defaults_are_offline() -> None:
    settings, problems = Settings.from_wire({})
    assert problems == []
    assert settings.provider == "extractive"
    assert settings.embedder == "auto"
    assert settings.allow_remote is True


def test_camel_case_keys_map_to_fields() -> None:
    settings, problems = Settings.from_wire(
        {
            "topK": 3,
            "minScore": 0.4,
            "baseUrl": "http://127.0.0.1:1/v1",
            "include": ["src/**"],
            "hoverExplanations": True,
            "indexDir": "/tmp/x",
            "provider": "openai",
        }
    )
    assert problems == []
    assert settings.top_k == 3
    assert settings.min_score == 0.4
    assert settings.base_url == "http://127.0.0.1:1/v1"
    assert settings.include == ("src/**",)
    assert settings.hover_explanations is True
    assert settings.index_dir == "/tmp/x"
    assert settings.provider == "openai"


@pytest.mark.parametrize(
    ("raw", "field", "default"),
    [
        ({"topK": "five"}, "top_k", 8),
        ({"topK": 0}, "top_k", 8),
        ({"topK": True}, "top_k", 8),
        ({"embedder": "gpt"}, "embedder", "auto"),
        ({"provider": 3}, "provider", "extractive"),
        ({"minScore": 2.5}, "min_score", None),
        ({"include": [1, 2]}, "include", ()),
        ({"allowRemote": "no"}, "allow_remote", True),
        ({"requestTimeout": -1}, "request_timeout", 60.0),
        ({"maxRetries": 99}, "max_retries", 3),
    ],
)
def test_invalid_values_fall_back_to_defaults_with_a_message(raw, field, default) -> None:
    settings, problems = Settings.from_wire(raw)
    assert getattr(settings, field) == default
    assert len(problems) == 1
    key = next(iter(raw))
    assert key in problems[0] and "default" in problems[0]


def test_unknown_keys_and_non_objects_are_reported() -> None:
    settings, problems = Settings.from_wire({"topk": 3})
    assert settings.top_k == 8
    assert problems == ["unknown setting 'topk' ignored"]
    settings, problems = Settings.from_wire(["not", "an", "object"])  # type: ignore[arg-type]
    assert settings == Settings()
    assert "must be an object" in problems[0]


def test_api_key_never_shown() -> None:
    settings, _ = Settings.from_wire({"apiKey": "sk-secret-value-123"})
    assert "sk-secret" not in repr(settings)
    assert settings.to_wire()["apiKey"] == "***"
    assert settings.resolved_api_key() == "sk-secret-value-123"


def test_single_string_glob_is_accepted_as_a_list() -> None:
    settings, problems = Settings.from_wire({"exclude": "vendor/**"})
    assert problems == []
    assert settings.exclude == ("vendor/**",)
