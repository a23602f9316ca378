"""The JSON bodies and SSE event sequences of the OpenAI and Anthropic APIs, for the fake.

Shapes follow what the official SDKs parse: chat-completion chunks (with the optional
trailing usage chunk), the Messages event sequence, error envelopes, embeddings.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Iterator
from typing import Any

WORD = re.compile(r"[A-Za-z0-9_]+")


def count_tokens(data: bytes) -> int:
    """A rough, deterministic token count (words), standing in for a tokenizer."""
    return max(1, len(WORD.findall(data.decode("utf-8", "replace"))))


def split_text(text: str, parts: int) -> list[str]:
    if not text:
        return []
    parts = max(1, min(parts, len(text)))
    size = -(-len(text) // parts)
    return [text[i : i + size] for i in range(0, len(text), size)]


def embed_text(text: str, dim: int) -> list[float]:
    """Deterministic unit vector: hashed bag of lower-cased words (shared words → closer)."""
    vector = [0.0] * dim
    words = [w.lower() for w in WORD.findall(text)] or [""]
    for word in words:
        digest = hashlib.sha256(word.encode()).digest()
        index = int.from_bytes(digest[:4], "little") % dim
        vector[index] += 1.0 if digest[4] & 1 else -1.0
    norm = sum(v * v for v in vector) ** 0.5 or 1.0
    return [v / norm for v in vector]


def error_body(endpoint: str, code: int, message: str) -> dict[str, Any]:
    kinds = {
        400: "invalid_request_error",
        401: "authentication_error",
        403: "permission_error",
        404: "not_found_error",
        429: "rate_limit_error",
        529: "overloaded_error",
    }
    kind = kinds.get(code, "api_error")
    if endpoint == "messages":
        return {"type": "error", "error": {"type": kind, "message": message}}
    return {"error": {"message": message, "type": kind, "param": None, "code": kind}}


def sse(data: Any, event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    payload = data if isinstance(data, str) else json.dumps(data)
    return f"{head}data: {payload}\n\n".encode()


def openai_completion(
    model: str, text: str, inp: int, out: int, limited: bool = False
) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "length" if limited else "stop",
                "logprobs": None,
            }
        ],
        "usage": {"prompt_tokens": inp, "completion_tokens": out, "total_tokens": inp + out},
    }


def openai_events(
    body: dict[str, Any], model: str, pieces: list[str], inp: int, out: int, limited: bool = False
) -> Iterator[bytes]:
    base = {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
    }
    options = body.get("stream_options")
    usage_wanted = isinstance(options, dict) and bool(options.get("include_usage"))

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        data = {
            **base,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}],
        }
        if usage_wanted:
            data["usage"] = None
        return sse(data)

    yield chunk({"role": "assistant", "content": ""})
    for piece in pieces:
        yield chunk({"content": piece})
    yield chunk({}, "length" if limited else "stop")
    if usage_wanted:
        yield sse(
            {
                **base,
                "choices": [],
                "usage": {
                    "prompt_tokens": inp,
                    "completion_tokens": out,
                    "total_tokens": inp + out,
                },
            }
        )
    yield sse("[DONE]")


def anthropic_message(
    model: str, text: str, inp: int, out: int, limited: bool = False
) -> dict[str, Any]:
    return {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": text}],
        "stop_reason": "max_tokens" if limited else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": inp, "output_tokens": out},
    }


def anthropic_events(
    body: dict[str, Any], model: str, pieces: list[str], inp: int, out: int, limited: bool = False
) -> Iterator[bytes]:
    message = {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": inp, "output_tokens": 1},
    }
    yield sse({"type": "message_start", "message": message}, "message_start")
    yield sse(
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        "content_block_start",
    )
    yield sse({"type": "ping"}, "ping")
    for piece in pieces:
        yield sse(
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": piece},
            },
            "content_block_delta",
        )
    yield sse({"type": "content_block_stop", "index": 0}, "content_block_stop")
    yield sse(
        {
            "type": "message_delta",
            "delta": {
                "stop_reason": "max_tokens" if limited else "end_turn",
                "stop_sequence": None,
            },
            "usage": {"output_tokens": out},
        },
        "message_delta",
    )
    yield sse({"type": "message_stop"}, "message_stop")
