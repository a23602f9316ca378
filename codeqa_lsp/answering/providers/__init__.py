"""Answer generators. `make_provider` picks one from settings; None means extractive.

Defaults: `anthropic` → `claude-sonnet-5-5`, `openai` → `gpt-5.5` (set `model` for a
local server). Keys come from `apiKey` or the SDK's own variable; base URLs from `baseUrl`
or the SDK's own `ANTHROPIC_BASE_URL` / `OPENAI_BASE_URL`.
"""

from __future__ import annotations

import threading

from codeqa_lsp.answering.providers.base import (
    DEFAULT_MAX_TOKENS,
    DEFAULT_MODELS,
    Provider,
    ProviderError,
)
from codeqa_lsp.config import Settings

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "DEFAULT_MODELS",
    "Provider",
    "ProviderError",
    "make_provider",
    "prewarm",
    "provider_identity",
]


def make_provider(settings: Settings) -> Provider | None:
    """The configured provider; None for extractive (chosen, or forced by `allowRemote`).

    Raises `ProviderError` when the provider cannot even be set up (no key), so the caller
    shows that one-line reason next to the extractive answer.
    """
    if settings.provider == "extractive" or not settings.allow_remote:
        return None
    if settings.provider == "anthropic":
        from codeqa_lsp.answering.providers.anthropic_provider import AnthropicProvider

        return AnthropicProvider(settings)
    if settings.provider == "openai":
        from codeqa_lsp.answering.providers.openai_provider import OpenAIProvider

        return OpenAIProvider(settings)
    raise ProviderError(f"unknown provider {settings.provider!r}")


def provider_identity(settings: Settings) -> tuple[str, str] | None:
    """(provider, model) that `make_provider` would use, without building a client."""
    if settings.provider == "extractive" or not settings.allow_remote:
        return None
    return settings.provider, settings.model or DEFAULT_MODELS[settings.provider]


def prewarm(settings: Settings) -> None:
    """Import the configured provider's SDK in the background.

    The SDKs take from one to several seconds to import; doing it while the workspace
    indexes keeps that delay out of the user's first question.
    """
    identity = provider_identity(settings)
    if identity is None:
        return
    module = {"anthropic": "anthropic_provider", "openai": "openai_provider"}[identity[0]]

    def load() -> None:
        import importlib

        importlib.import_module(f"codeqa_lsp.answering.providers.{module}")

    threading.Thread(target=load, name="codeqa-provider-import", daemon=True).start()
