"""`openai`: OpenAI embeddings, or any OpenAI-compatible endpoint (Ollama, llama.cpp, vLLM).

Only ever used when the user chose it: code leaves the machine on request only. Requests
are bounded (<= 2048 inputs and a token budget each), retried with exponential backoff
and jitter on 429/5xx/timeouts (honouring `retry-after`), and fail with a clear message on
401/403 or a missing key. The API key is never logged.
"""

from __future__ import annotations

import logging
import os
import random
import threading
import time
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlparse

import numpy as np

from codeqa_lsp.config import Settings
from codeqa_lsp.index.embedders.base import EmbedderError, l2_normalize
from codeqa_lsp.secret_shapes import Redactor

log = logging.getLogger(__name__)

DEFAULT_MODEL = "text-embedding-3-small"
KNOWN_DIMS = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}
MAX_INPUTS_PER_REQUEST = 2048
MAX_TOKENS_PER_REQUEST = 200_000  # OpenAI allows 300k; estimates are rough, stay well under
MAX_CHARS_PER_INPUT = 8191 * 3  # ~8191 tokens at a pessimistic 3 characters per token
BACKOFF_BASE_SECONDS = 0.5
BACKOFF_MAX_SECONDS = 20.0


def _estimated_tokens(text: str) -> int:
    return len(text) // 3 + 1


def is_loopback(url: str | None) -> bool:
    host = urlparse(url).hostname if url else None
    return host in {"localhost", "127.0.0.1", "::1"}


def batches(texts: Sequence[str]) -> list[list[int]]:
    """Split text indices into requests bounded by input count and estimated tokens."""
    out: list[list[int]] = []
    current: list[int] = []
    budget = 0
    for i, text in enumerate(texts):
        cost = min(_estimated_tokens(text), MAX_CHARS_PER_INPUT // 3)
        if current and (
            len(current) >= MAX_INPUTS_PER_REQUEST or budget + cost > MAX_TOKENS_PER_REQUEST
        ):
            out.append(current)
            current, budget = [], 0
        current.append(i)
        budget += cost
    if current:
        out.append(current)
    return out


class OpenAIEmbedder:
    name = "openai"

    def __init__(self, settings: Settings) -> None:
        self.base_url = settings.embedding_base_url or os.environ.get("OPENAI_BASE_URL") or None
        if not settings.allow_remote and not is_loopback(self.base_url):
            raise EmbedderError(
                "the openai embedder sends code to a remote service, but allowRemote is false; "
                "choose the 'local' or 'hash' embedder, or point embeddingBaseUrl at a local server"
            )
        refused = settings.refused_endpoint("embedding_base_url")
        if refused:
            raise EmbedderError(refused)
        own = settings.api_key if settings.provider == "openai" else None
        key = settings.replace(api_key=own).key_for_endpoint(
            "embedding_base_url", os.environ.get("OPENAI_API_KEY")
        )
        if not key:
            if not self.base_url:
                raise EmbedderError(
                    "the openai embedder needs an API key: set OPENAI_API_KEY (or apiKey with "
                    "provider openai)"
                )
            key = "unused"  # local OpenAI-compatible servers usually ignore the key
        self.model = settings.embedding_model or DEFAULT_MODEL
        self.dimensions = settings.embedding_dimensions
        self.timeout = settings.request_timeout
        self.max_retries = settings.max_retries
        self._key = key
        # Chunk text leaves the machine here: the same redaction as prompts (issue 15).
        self._redactor = Redactor([settings.api_key, key])
        self._client: Any = None
        self._lock = threading.Lock()
        self._dim: int | None = self.dimensions or KNOWN_DIMS.get(self.model)

    @property
    def dim(self) -> int:
        """Known for OpenAI models; for other endpoints learned from one probe request."""
        if self._dim is None:
            self._dim = int(self._request(["dimension probe"]).shape[1])
        return self._dim

    def _get_client(self) -> Any:
        with self._lock:
            if self._client is None:
                from openai import OpenAI

                # Our own retry loop (below) counts attempts and honours retry-after.
                self._client = OpenAI(
                    api_key=self._key, base_url=self.base_url, timeout=self.timeout, max_retries=0
                )
            return self._client

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        clipped = [self._redactor.redact(t)[:MAX_CHARS_PER_INPUT] or " " for t in texts]
        parts = [self._request([clipped[i] for i in group]) for group in batches(clipped)]
        return l2_normalize(np.concatenate(parts, axis=0))

    def _request(self, inputs: list[str]) -> np.ndarray:
        import openai

        client = self._get_client()
        kwargs: dict[str, Any] = {"model": self.model, "input": inputs}
        if self.dimensions:
            kwargs["dimensions"] = self.dimensions
        attempt = 0
        while True:
            try:
                response = client.embeddings.create(**kwargs)
                rows = sorted(response.data, key=lambda d: d.index)
                return np.asarray([row.embedding for row in rows], dtype=np.float32)
            except (openai.AuthenticationError, openai.PermissionDeniedError) as exc:
                raise EmbedderError(
                    f"the embeddings endpoint refused the API key (HTTP {exc.status_code}); check "
                    "OPENAI_API_KEY"
                ) from None
            except (
                openai.RateLimitError,
                openai.InternalServerError,
                openai.APITimeoutError,
                openai.APIConnectionError,
            ) as exc:
                status = getattr(exc, "status_code", None)
                if attempt >= self.max_retries:
                    raise EmbedderError(
                        f"embeddings request failed after {attempt + 1} attempts: "
                        f"{type(exc).__name__}{f' (HTTP {status})' if status else ''}"
                    ) from None
                delay = _retry_delay(exc, attempt)
                log.warning(
                    "embeddings request failed (%s), retrying in %.1fs", type(exc).__name__, delay
                )
                time.sleep(delay)
                attempt += 1
            except openai.APIStatusError as exc:
                raise EmbedderError(
                    f"embeddings request rejected (HTTP {exc.status_code})"
                ) from None
            except (ValueError, TypeError, AttributeError) as exc:
                raise EmbedderError(
                    f"malformed embeddings response: {type(exc).__name__}"
                ) from None


def _retry_delay(exc: Exception, attempt: int) -> float:
    """`retry-after(-ms)` when the server says so, else exponential backoff with full jitter."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None) or {}
    try:
        if "retry-after-ms" in headers:
            return min(BACKOFF_MAX_SECONDS, float(headers["retry-after-ms"]) / 1000)
        if "retry-after" in headers:
            return min(BACKOFF_MAX_SECONDS, float(headers["retry-after"]))
    except ValueError:
        pass
    return random.uniform(0, min(BACKOFF_MAX_SECONDS, BACKOFF_BASE_SECONDS * 2**attempt))
