"""OpenAI Chat Completions, streamed, through the official `openai` SDK.

Any OpenAI-compatible server works through `baseUrl` (Ollama, llama.cpp server, vLLM,
LM Studio). Such servers usually need no key, so a placeholder is sent when none is set;
only the official endpoint insists on a real one up front.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Generator
from typing import Any

import httpx2
import openai

from codeqa_lsp.answering.model import Usage
from codeqa_lsp.answering.providers.base import (
    DEFAULT_MAX_TOKENS,
    DEFAULT_MODELS,
    Deadline,
    ProviderError,
    stream_with_retries,
)
from codeqa_lsp.config import Settings, redact_url

DEFAULT_MODEL = DEFAULT_MODELS["openai"]
OFFICIAL_HOST = "api.openai.com"
PLACEHOLDER_KEY = "not-needed"  # local servers ignore it; the SDK insists on some key


class _ChatReader:
    """Chat-completion chunks; a `finish_reason` means the answer is complete.

    The usage chunk (sent after it when `stream_options.include_usage` is honoured) is
    optional: many local servers never send one.
    """

    def __init__(self) -> None:
        self.finished = False
        self.hit_limit = False
        self.usage: Usage | None = None

    def handle(self, chunk: Any) -> str | None:
        if getattr(chunk, "usage", None) is not None:
            self.usage = Usage(chunk.usage.prompt_tokens, chunk.usage.completion_tokens)
        text: str | None = None
        for choice in chunk.choices or ():
            if choice.delta is not None and choice.delta.content:
                text = (text or "") + choice.delta.content
            if choice.finish_reason:
                self.finished = True
                self.hit_limit = choice.finish_reason == "length"
        return text

    def finish(self) -> Usage | None:
        return (self.usage or Usage()) if self.finished else None


class OpenAIProvider:
    """Key from settings or `OPENAI_API_KEY`; base URL from settings or `OPENAI_BASE_URL`."""

    name = "openai"

    def __init__(self, settings: Settings) -> None:
        base_url = settings.base_url or os.environ.get("OPENAI_BASE_URL") or None
        self.official = base_url is None or OFFICIAL_HOST in base_url
        refused = settings.refused_endpoint("base_url")
        if refused:
            raise ProviderError(refused)
        key = settings.key_for_endpoint("base_url", os.environ.get("OPENAI_API_KEY"))
        if not key and self.official:
            raise ProviderError(
                "no API key for openai: set OPENAI_API_KEY or the `apiKey` setting "
                "(or `baseUrl` for a local OpenAI-compatible server)"
            )
        self.settings = settings
        self.model = settings.model or DEFAULT_MODEL
        self.client = openai.OpenAI(
            api_key=key or PLACEHOLDER_KEY,
            base_url=base_url,
            max_retries=0,
            timeout=httpx2.Timeout(settings.request_timeout),
        )
        self.endpoint = redact_url(
            str(self.client.base_url).rstrip("/") + "/chat/completions"
        )  # no userinfo key in logs

    def stream(
        self,
        system: str,
        user: str,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        cancel: threading.Event | None = None,
    ) -> Generator[str | Usage, None, None]:
        # The official API's current models only accept `max_completion_tokens`; most
        # compatible servers only know the older `max_tokens`.

        def open_stream(timeout: httpx2.Timeout) -> Any:
            return self.client.chat.completions.create(
                model=self.model,
                messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
                stream=True,
                stream_options={"include_usage": True},
                timeout=timeout,
                max_completion_tokens=max_tokens if self.official else openai.omit,
                max_tokens=openai.omit if self.official else max_tokens,
            )

        return stream_with_retries(
            open_stream,
            _ChatReader,
            deadline=Deadline(self.settings.request_timeout),
            max_retries=self.settings.max_retries,
            endpoint=self.endpoint,
            cancel=cancel,
        )
