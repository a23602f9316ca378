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

import contextlib
import email.utils
import json
import logging
import random
import socket
import threading
import time
from collections.abc import Callable, Generator, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from codeqa_lsp.answering.model import Usage

if TYPE_CHECKING:  # the SDKs take seconds to import: only loaded when a provider is used
    import httpx2

log = logging.getLogger("codeqa_lsp.answering")

INITIAL_BACKOFF_S = 0.5
MAX_BACKOFF_S = 8.0
CONNECT_TIMEOUT_S = 10.0
LENGTH_LIMIT_NOTE = "\n\n*(The answer reached the model's length limit and may be incomplete.)*"
DEFAULT_MAX_TOKENS = 2048  # room for reasoning models, which count thinking in the limit
# The newest Sonnet the installed anthropic SDK (2.11) knows; a current flagship for OpenAI.
DEFAULT_MODELS = {"anthropic": "claude-sonnet-5-5", "openai": "gpt-5.5"}
# A blank `retry-after` header from a rate limiter means "soon"; we still back off.
_RETRYABLE_STATUS = {408, 409, 429}


class ProviderError(Exception):
    """A provider failed; `str(error)` is the one-line reason shown to the user."""

    def __init__(
        self, reason: str, retryable: bool = False, retry_after: float | None = None
    ) -> None:
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

    def stream(
        self,
        system: str,
        user: str,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        cancel: threading.Event | None = None,
    ) -> Generator[str | Usage, None, None]: ...


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
        import httpx2

        left = max(0.05, self.remaining())
        return httpx2.Timeout(left, connect=min(left, CONNECT_TIMEOUT_S))


# An open SDK stream: a context manager (closing releases the connection) that iterates events.
class _EventStream(AbstractContextManager[Any], Protocol):
    def __iter__(self) -> Iterator[Any]: ...


OpenStream = Callable[["httpx2.Timeout"], _EventStream]


class StreamReader(Protocol):
    """Reads one attempt's SDK events; a fresh reader is made for every attempt."""

    def handle(self, event: Any) -> str | None:
        """The text delta an event carries, if any."""

    def finish(self) -> Usage | None:
        """After the events ran out: the usage if the answer completed, None if it was cut."""

    @property
    def hit_limit(self) -> bool:
        """The model stopped at `max_tokens`: the answer is complete as a stream, not as text."""


class Cancelled(ProviderError):
    """The consumer cancelled (its `cancel` event was set); not a failure to report."""

    def __init__(self) -> None:
        super().__init__("cancelled")


class _Watchdog:
    """Shuts an open response's socket down at the deadline or on cancel.

    Why: a read blocked on a silent server (slow-loris, a stalled model) only returns when
    data or its read timeout arrives, and closing the response from another thread does not
    wake it. `shutdown()` on the socket does, at once: so the deadline is exact and a
    cancelled request releases its connection immediately, not at the next delta.
    """

    POLL_S = 0.05

    def __init__(self, events: Any, deadline: Deadline, cancel: threading.Event | None) -> None:
        self.deadline = deadline
        self.cancel = cancel
        self.fired: str | None = None  # "timeout" | "cancelled"
        self._done = threading.Event()
        self._socket = _socket_of(events)
        self._thread: threading.Thread | None = None

    def __enter__(self) -> _Watchdog:
        if self._socket is not None:
            self._thread = threading.Thread(
                target=self._watch, name="codeqa-provider-watchdog", daemon=True
            )
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        if self._thread is not None:
            self._thread.join()

    def _watch(self) -> None:
        while not self._done.wait(min(self.POLL_S, max(0.0, self.deadline.remaining()))):
            if self.cancel is not None and self.cancel.is_set():
                self.fired = "cancelled"
            elif self.deadline.remaining() <= 0:
                self.fired = "timeout"
            else:
                continue
            with contextlib.suppress(OSError):
                self._socket.shutdown(socket.SHUT_RDWR)  # type: ignore[union-attr]
            return


def _socket_of(events: Any) -> socket.socket | None:
    """The TCP socket under an SDK stream (httpx exposes it as `network_stream`)."""
    response = getattr(events, "response", None)
    stream = (
        getattr(response, "extensions", {}).get("network_stream") if response is not None else None
    )
    sock = stream.get_extra_info("socket") if stream is not None else None
    return sock if isinstance(sock, socket.socket) else None


def stream_with_retries(
    open_stream: OpenStream,
    new_reader: Callable[[], StreamReader],
    *,
    deadline: Deadline,
    max_retries: int,
    endpoint: str,
    cancel: threading.Event | None = None,
) -> Generator[str | Usage, None, None]:
    """Run one streamed request under `deadline` with bounded, retry-after-aware retries.

    Yields text deltas, then the final `Usage`. A stream that ends without the provider's
    end-of-answer marker was cut: that is an error, never a short answer. Setting `cancel`
    ends the request at once with `Cancelled`.
    """
    attempt = 0
    while True:
        yielded_text = False
        watchdog: _Watchdog | None = None
        try:
            if cancel is not None and cancel.is_set():
                raise Cancelled()
            deadline.check()
            reader = new_reader()
            with (
                open_stream(deadline.timeout()) as events,
                _Watchdog(events, deadline, cancel) as watchdog,
            ):
                for event in events:
                    text = reader.handle(event)
                    if text:
                        yielded_text = True
                        yield text
                    deadline.check()
            usage = reader.finish()
            if usage is None:
                raise ProviderError("the answer stream ended before the answer was complete")
            if reader.hit_limit:
                yield LENGTH_LIMIT_NOTE
            yield usage
            return
        except ProviderError as error:
            failure = error
        except Exception as exc:  # SDK, transport and parsing errors all end up here
            failure = classify(exc, endpoint, deadline)
        if watchdog is not None and watchdog.fired == "cancelled":
            raise Cancelled()
        if watchdog is not None and watchdog.fired == "timeout":
            failure = ProviderError(f"timed out after {deadline.seconds:g}s waiting for {endpoint}")
        if yielded_text or not failure.retryable or attempt >= max_retries:
            if attempt and failure.retryable:
                raise ProviderError(f"{failure.reason} (gave up after {attempt + 1} attempts)")
            raise failure
        wait = backoff(attempt, failure.retry_after)
        if wait >= deadline.remaining():
            hint = f"; retry after {failure.retry_after:g}s" if failure.retry_after else ""
            raise ProviderError(
                f"{failure.reason}{hint} (no time left within the {deadline.seconds:g}s timeout)"
            )
        log.debug(
            "provider attempt %d failed (%s); retrying in %.2fs", attempt + 1, failure.reason, wait
        )
        if cancel is not None and cancel.wait(wait):
            raise Cancelled()
        if cancel is None:
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


def classify(exc: BaseException, endpoint: str, deadline: Deadline) -> ProviderError:
    """Turn any SDK/transport exception into a one-line, key-free `ProviderError`."""
    import anthropic
    import httpx2
    import openai
    import pydantic

    status_errors = (openai.APIStatusError, anthropic.APIStatusError)
    timeout_errors = (openai.APITimeoutError, anthropic.APITimeoutError, httpx2.TimeoutException)
    connection_errors = (
        openai.APIConnectionError,
        anthropic.APIConnectionError,
        httpx2.TransportError,
    )
    malformed_errors = (
        json.JSONDecodeError,
        pydantic.ValidationError,
        openai.APIResponseValidationError,
        anthropic.APIResponseValidationError,
        ValueError,
    )
    if isinstance(exc, status_errors):
        status = exc.status_code
        detail = _server_message(exc.body) or exc.__class__.__name__
        retry_after = parse_retry_after(exc.response.headers)
        if status == 401:
            return ProviderError(
                f"authentication failed (401): the API key was rejected by {endpoint}"
            )
        if status == 403:
            return ProviderError(f"permission denied (403): {detail}")
        if status == 404:
            return ProviderError(
                f"not found (404): {detail}; check the `model` and `baseUrl` settings"
            )
        if status == 429:
            return ProviderError(
                f"rate limited (429): {detail}", retryable=True, retry_after=retry_after
            )
        if status >= 500 or status in _RETRYABLE_STATUS:
            return ProviderError(
                f"server error ({status}): {detail}", retryable=True, retry_after=retry_after
            )
        return ProviderError(f"request rejected ({status}): {detail}")
    if isinstance(exc, timeout_errors):
        return ProviderError(
            f"timed out after {deadline.seconds:g}s waiting for {endpoint}",
            retryable=deadline.remaining() > 0,
        )
    if isinstance(exc, connection_errors):
        cause = exc if isinstance(exc, httpx2.TransportError) else exc.__cause__
        if isinstance(cause, httpx2.ConnectError):
            return ProviderError(f"could not connect to {endpoint}", retryable=True)
        return ProviderError(
            f"connection to {endpoint} lost before the answer was complete", retryable=True
        )
    if isinstance(exc, malformed_errors):
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
