"""Anthropic Messages API, streamed, through the official `anthropic` SDK."""

from __future__ import annotations

import os
import threading
from collections.abc import Generator
from typing import Any

import anthropic
import httpx2

from codeqa_lsp.answering.model import Usage
from codeqa_lsp.answering.providers.base import (
    DEFAULT_MAX_TOKENS,
    DEFAULT_MODELS,
    Deadline,
    ProviderError,
    stream_with_retries,
)
from codeqa_lsp.config import Settings, redact_url

DEFAULT_MODEL = DEFAULT_MODELS["anthropic"]


class _MessagesReader:
    """Follows the Messages SSE sequence; only `message_stop` means the answer is complete."""

    def __init__(self) -> None:
        self.input_tokens: int | None = None
        self.output_tokens: int | None = None
        self.stopped = False
        self.hit_limit = False

    def handle(self, event: Any) -> str | None:
        kind = getattr(event, "type", None)
        if kind == "message_start":
            self.input_tokens = event.message.usage.input_tokens
        elif kind == "content_block_delta" and getattr(event.delta, "type", None) == "text_delta":
            return str(event.delta.text)
        elif kind == "message_delta":
            if event.usage is not None:
                self.output_tokens = event.usage.output_tokens
            self.hit_limit = getattr(event.delta, "stop_reason", None) == "max_tokens"
        elif kind == "message_stop":
            self.stopped = True
        return None

    def finish(self) -> Usage | None:
        return Usage(self.input_tokens, self.output_tokens) if self.stopped else None


class AnthropicProvider:
    """Key from settings or `ANTHROPIC_API_KEY`; base URL from settings or `ANTHROPIC_BASE_URL`."""

    name = "anthropic"

    def __init__(self, settings: Settings) -> None:
        refused = settings.refused_endpoint("base_url")
        if refused:
            raise ProviderError(refused)
        key = settings.key_for_endpoint("base_url", os.environ.get("ANTHROPIC_API_KEY"))
        if not key:
            raise ProviderError(
                "no API key for anthropic: set ANTHROPIC_API_KEY or the `apiKey` setting"
                + (
                    " (your own key is never sent to a baseUrl from workspace settings)"
                    if "base_url" in settings.workspace_scoped and settings.base_url
                    else ""
                )
            )
        self.settings = settings
        self.model = settings.model or DEFAULT_MODEL
        # base_url=None lets the SDK apply ANTHROPIC_BASE_URL itself (proxies, gateways).
        self.client = anthropic.Anthropic(
            api_key=key,
            base_url=settings.base_url,
            max_retries=0,
            timeout=httpx2.Timeout(settings.request_timeout),
        )
        self.endpoint = redact_url(
            str(self.client.base_url).rstrip("/") + "/v1/messages"
        )  # no userinfo key in logs

    def stream(
        self,
        system: str,
        user: str,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        cancel: threading.Event | None = None,
    ) -> Generator[str | Usage, None, None]:
        def open_stream(timeout: httpx2.Timeout) -> Any:
            return self.client.messages.create(
                model=self.model,
                max_tokens=max_tokens,
                system=system,
                messages=[{"role": "user", "content": user}],
                stream=True,
                timeout=timeout,
            )

        return stream_with_retries(
            open_stream,
            _MessagesReader,
            deadline=Deadline(self.settings.request_timeout),
            max_retries=self.settings.max_retries,
            endpoint=self.endpoint,
            cancel=cancel,
        )
