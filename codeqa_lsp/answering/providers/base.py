"""What every remote provider shares: the stream protocol, error mapping, retries, deadline.

Why our own retry loop instead of the SDKs' (`max_retries` is set to 0 on the clients):
the SDKs retry each *request* with its own full timeout and honour `retry-after` up to two
minutes, so `max_retries=3, timeout=60` can block an editor command for many minutes. Here
one deadline (`settings.request_timeout`) bounds everything: connecting, every retry, the
waits between them and the stream itself. A `retry-after` that does not fit in what is left
of the deadline ends the attempt at once with a message saying when to try again.

Retries only happen before the first text delta: once text has been shown, a retry would
produce a different answer under the same heading, so a failure mid-stream is reported
instead (the answerer falls back to the extractive answer and says why).
"""

from __future__ import annotations

import email.utils
import json
import logging
import random
import time
from collections.abc import Callable, Generator, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol

import anthropic
import httpx2
import openai
import pydantic

from codeqa_lsp.answering.model import Usage

log = logging.getLogger("codeqa_lsp.answering")

INITIAL_BACKOFF_S = 0.5
MAX_BACKOFF_S = 8.0
CONNECT_TIMEOUT_S = 10.0
DEFAULT_MAX_TOKENS = 1024
# A blank `retry-after` header from a rate limiter means "soon"; we still back off.
_RETRYABLE_STATUS = {408, 409, 429}


class ProviderError(Exception):
    """A provider failed; `str(error)` is the one-line reason shown to the user."""

    def __init__(self, reason: str, retryable: bool = False, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retryable = retryable
        self.retry_after = retry_after


class Provider(Protocol):
    """A language model that streams an answer.

    `stream` yields text deltas, then exactly one `Usage` when the answer completed. It
    raises `ProviderError` on any failure, before or after some deltas. Closing the
    generator early (the user cancelled) closes the HTTP response at once.
    """

    name: str
    model: str
    endpoint: str  # where requests go, for the debug log; never contains a key

    def stream(self, system: str, user: str, max_tokens: int = DEFAULT_MAX_TOKENS) -> Generator[str | Usage, None, None]:
        ...


@dataclass
class Deadline:
    """One wall-clock budget for a whole answer, retries included."""

    seconds: float
    started: float = 0.0

    def __post_init__(self) -> None:
        self.started = self.started or time.monotonic()

    def remaining(self) -> float:
        return self.seconds - (time.monotonic() - self.started)

    def check(self) -> None:
        if self.remaining() <= 0:
            raise ProviderError(f"timed out after {self.seconds:g}s")

    def timeout(self) -> httpx2.Timeout:
        """An httpx timeout no longer than the time left (every read waits at most this)."""
        left = max(0.05, self.remaining())
        return httpx2.Timeout(left, connect=min(left, CONNECT_TIMEOUT_S))


# An open SDK stream: a context manager (closing releases the connection) that iterates events.
class _EventStream(AbstractContextManager[Any], Protocol):
    def __iter__(self) -> Iterator[Any]: ...


OpenStream = Callable[[httpx2.Timeout], _EventStream]


class StreamReader(Protocol):
    """Reads one attempt's SDK events; a fresh reader is made for every attempt."""

    def handle(self, event: Any) -> str | None:
        """The text delta an event carries, if any."""

    def finish(self) -> Usage | None:
        """After the events ran out: the usage if the answer completed, None if it was cut."""


def stream_with_retries(
    open_stream: OpenStream,
    new_reader: Callable[[], StreamReader],
    *,
    deadline: Deadline,
    max_retries: int,
    endpoint: str,
) -> Generator[str | Usage, None, None]:
    """Run one streamed request under `deadline` with bounded, retry-after-aware retries.

    Yields text deltas, then the final `Usage`. A stream that ends without the provider's
    end-of-answer marker was cut: that is an error, never a short answer.
    """
    attempt = 0
    while True:
        yielded_text = False
        try:
            deadline.check()
            reader = new_reader()
            with open_stream(deadline.timeout()) as events:
                for event in events:
                    text = reader.handle(event)
                    if text:
                        yielded_text = True
                        yield text
                    deadline.check()
            usage = reader.finish()
            if usage is None:
                raise ProviderError("the answer stream ended before the answer was complete")
            yield usage
            return
        except ProviderError as error:
            failure = error
        except Exception as exc:  # SDK, transport and parsing errors all end up here
            failure = classify(exc, endpoint, deadline)
        if yielded_text or not failure.retryable or attempt >= max_retries:
            if attempt and failure.retryable:
                raise ProviderError(f"{failure.reason} (gave up after {attempt + 1} attempts)")
            raise failure
        wait = backoff(attempt, failure.retry_after)
        if wait >= deadline.remaining():
            hint = f"; retry after {failure.retry_after:g}s" if failure.retry_after else ""
            raise ProviderError(f"{failure.reason}{hint} (no time left within the {deadline.seconds:g}s timeout)")
        log.debug("provider attempt %d failed (%s); retrying in %.2fs", attempt + 1, failure.reason, wait)
        time.sleep(wait)
        attempt += 1


def backoff(attempt: int, retry_after: float | None) -> float:
    """The server's `retry-after` when given, else exponential backoff with jitter."""
    if retry_after is not None and retry_after >= 0:
        return retry_after
    return min(INITIAL_BACKOFF_S * 2.0**attempt, MAX_BACKOFF_S) * (1 - 0.25 * random.random())


def parse_retry_after(headers: httpx2.Headers | None) -> float | None:
    """Seconds from `retry-after-ms`, `retry-after` (seconds or an HTTP date); None if absent."""
    if headers is None:
        return None
    for name, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            return max(0.0, float(value) / divisor)
        except ValueError:
            pass
    value = headers.get("retry-after")
    parsed = email.utils.parsedate_tz(value) if value else None
    return max(0.0, email.utils.mktime_tz(parsed) - time.time()) if parsed else None


_STATUS_ERRORS = (openai.APIStatusError, anthropic.APIStatusError)
_TIMEOUT_ERRORS = (openai.APITimeoutError, anthropic.APITimeoutError, httpx2.TimeoutException)
_CONNECTION_ERRORS = (openai.APIConnectionError, anthropic.APIConnectionError, httpx2.TransportError)
_MALFORMED_ERRORS = (
    json.JSONDecodeError, pydantic.ValidationError, openai.APIResponseValidationError,
    anthropic.APIResponseValidationError, ValueError,
)


def classify(exc: BaseException, endpoint: str, deadline: Deadline) -> ProviderError:
    """Turn any SDK/transport exception into a one-line, key-free `ProviderError`."""
    if isinstance(exc, _STATUS_ERRORS):
        status = exc.status_code
        detail = _server_message(exc.body) or exc.__class__.__name__
        retry_after = parse_retry_after(exc.response.headers)
        if status == 401:
            return ProviderError(f"authentication failed (401): the API key was rejected by {endpoint}")
        if status == 403:
            return ProviderError(f"permission denied (403): {detail}")
        if status == 404:
            return ProviderError(f"not found (404): {detail}; check the `model` and `baseUrl` settings")
        if status == 429:
            return ProviderError(f"rate limited (429): {detail}", retryable=True, retry_after=retry_after)
        if status >= 500 or status in _RETRYABLE_STATUS:
            return ProviderError(f"server error ({status}): {detail}", retryable=True, retry_after=retry_after)
        return ProviderError(f"request rejected ({status}): {detail}")
    if isinstance(exc, _TIMEOUT_ERRORS):
        return ProviderError(f"timed out after {deadline.seconds:g}s waiting for {endpoint}",
                             retryable=deadline.remaining() > 0)
    if isinstance(exc, _CONNECTION_ERRORS):
        cause = exc if isinstance(exc, httpx2.TransportError) else exc.__cause__
        if isinstance(cause, httpx2.ConnectError):
            return ProviderError(f"could not connect to {endpoint}", retryable=True)
        return ProviderError(f"connection to {endpoint} lost before the answer was complete",
                             retryable=True)
    if isinstance(exc, _MALFORMED_ERRORS):
        return ProviderError(f"malformed response from {endpoint} ({exc.__class__.__name__})")
    return ProviderError(f"unexpected provider error ({exc.__class__.__name__})")


def _server_message(body: object) -> str:
    """The human part of an error envelope, one line, bounded."""
    message: object = None
    if isinstance(body, dict):
        inner = body.get("error", body)
        message = inner.get("message") if isinstance(inner, dict) else inner
    text = " ".join(str(message).split()) if message else ""
    return text[:160]
