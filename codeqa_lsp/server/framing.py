"""The base-protocol reader: `Content-Length` framing that no client can knock over.

pygls's reader (`pygls.io_.run_async`) trusts the header: `Content-Length: 1000000000000000`
allocates the whole body at once (MemoryError, the server exits), a negative, non-numeric or
missing length is silently skipped so every later message is misread (alive but deaf), a
header line without a newline is read whole into memory, and JSON nested 100k deep raises
RecursionError, which is logged but never answered. This loop replaces it for stdio and TCP:

- a body longer than `max_bytes` is answered with -32600 and *streamed away* in bounded
  chunks, so the next message is read normally and memory stays flat;
- a header block without a usable `Content-Length` is answered with -32700 and the reader
  resynchronises on the next line that carries one;
- a body that is not JSON, not UTF-8 or nested too deep is answered with -32700;
- error data never carries a Python traceback, only a one-line reason.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

logger = logging.getLogger(__name__)

PARSE_ERROR = -32700
INVALID_REQUEST = -32600

# 64 MB: a `didOpen` of the largest file the scanner would index (`maxFileBytes`, 1 MB by
# default) JSON-escaped is far below it; generated files a client might still open (minified
# bundles, lockfiles of a few MB) fit too. Configurable with `--max-message-bytes`.
DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024 * 1024
# Header lines are short ("Content-Length: 123", "Content-Type: ..."); a longer line is garbage.
MAX_HEADER_LINE_BYTES = 8192
DISCARD_CHUNK_BYTES = 1024 * 1024

_LENGTH = re.compile(rb"Content-Length:[ \t]*([^\r\n]*)\r?\n?$", re.IGNORECASE)


class FrameReader(Protocol):
    def readline(self) -> Awaitable[bytes]:
        """One line, at most MAX_HEADER_LINE_BYTES (a longer one comes back in pieces)."""

    def read(self, n: int) -> Awaitable[bytes]:
        """Up to n bytes (b"" at end of stream)."""


def error_frame(msg_id: Any, code: int, message: str) -> bytes:
    body = json.dumps({"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}})
    return f"Content-Length: {len(body)}\r\n\r\n{body}".encode()


def parse_length(value: bytes) -> int | None:
    """The declared length, or None when it is not a plain non-negative decimal."""
    text = value.strip()
    if not text.isdigit() or len(text) > 19:
        return None
    return int(text)


async def read_exactly(reader: FrameReader, n: int) -> bytes:
    parts: list[bytes] = []
    left = n
    while left > 0:
        chunk = await reader.read(min(left, DISCARD_CHUNK_BYTES))
        if not chunk:
            break
        parts.append(chunk)
        left -= len(chunk)
    return b"".join(parts)


async def discard(reader: FrameReader, n: int) -> bool:
    """Skip n bytes in bounded chunks; False if the stream ended first."""
    left = n
    while left > 0:
        chunk = await reader.read(min(left, DISCARD_CHUNK_BYTES))
        if not chunk:
            return False
        left -= len(chunk)
    return True


def decode(body: bytes) -> tuple[Any, str | None]:
    """The JSON value, or None and a one-line reason."""
    try:
        return json.loads(body.decode("utf-8")), None
    except RecursionError:
        return None, "Parse error: JSON nested too deeply"
    except UnicodeDecodeError as exc:
        return None, f"Parse error: body is not UTF-8 ({exc.reason} at byte {exc.start})"
    except json.JSONDecodeError as exc:
        return None, f"Parse error: {exc.msg} at line {exc.lineno} column {exc.colno}"


async def read_messages(
    reader: FrameReader,
    deliver: Callable[[Any], None],
    reply: Callable[[bytes], Any],
    max_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    should_stop: Callable[[], bool] = lambda: False,
) -> None:
    """Read framed messages until end of stream, handing each decoded one to `deliver`.

    `reply(frame)` sends an error frame straight to the peer (protocol-level errors have
    no request to attach to). Returns at end of stream or when `should_stop()`.
    """
    length: int | None = None
    bad_length: bytes | None = None
    saw_header = False
    while not should_stop():
        line = await reader.readline()
        if not line:
            return
        match = _LENGTH.search(line)  # search: resynchronise after an unframed body
        if match:
            saw_header = True
            length = parse_length(match.group(1))
            bad_length = None if length is not None else match.group(1).strip()[:40]
            continue
        if line.strip():
            saw_header = True  # another header (Content-Type), or garbage we answer for
            continue
        if not saw_header:
            continue  # stray blank line between messages
        saw_header = False
        if length is None:
            reason = (
                f"invalid Content-Length {bad_length.decode('latin-1')!r}"
                if bad_length is not None
                else "missing Content-Length header"
            )
            await _send(reply, error_frame(None, PARSE_ERROR, f"Parse error: {reason}"))
            bad_length = None
            continue
        size, length = length, None
        if size > max_bytes:
            await _send(
                reply,
                error_frame(
                    None,
                    INVALID_REQUEST,
                    f"Invalid Request: message of {size} bytes exceeds the limit of {max_bytes} "
                    "bytes",
                ),
            )
            logger.warning("refused a message of %d bytes (limit %d)", size, max_bytes)
            if not await discard(reader, size):
                return
            continue
        body = await read_exactly(reader, size)
        if len(body) < size:
            return
        message, problem = decode(body)
        if problem is not None:
            logger.warning("%s", problem)
            await _send(reply, error_frame(None, PARSE_ERROR, problem))
            continue
        deliver(message)


async def _send(reply: Callable[[bytes], Any], frame: bytes) -> None:
    result = reply(frame)
    if hasattr(result, "__await__"):
        await result
