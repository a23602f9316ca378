"""A loopback stand-in for the OpenAI and Anthropic HTTP APIs, for tests of the real SDKs.

Why a real HTTP server rather than mocks: the point of our provider tests is that the
*real* `openai` / `anthropic` clients (their retry logic, SSE parsers, timeouts) behave as
we expect against the wire formats, including failures only a socket can produce (a stream
cut mid-answer, headers followed by silence). Nothing here leaves 127.0.0.1.

Endpoints (a leading `/v1` is optional, so `base_url=server.url` works for both SDKs:
the anthropic SDK posts to `/v1/messages`, the openai SDK to `<base>/chat/completions`):

- `POST /v1/chat/completions`  OpenAI Chat Completions, JSON or SSE (`stream: true`), with a
  final usage chunk when `stream_options.include_usage` is set, then `data: [DONE]`.
- `POST /v1/messages`          Anthropic Messages, JSON or the SSE event sequence.
- `POST /v1/embeddings`        OpenAI Embeddings: deterministic bag-of-words vectors of
  `dimensions` (default `embedding_dim`), `float` or `base64` encoding, with usage.

Scripting: `server.script("chat", Status(429, headers={"retry-after": "0.1"}), Reply("hi"))`
queues behaviours per endpoint (`"chat"`, `"messages"`, `"embeddings"`, or `"*"` for any);
each request consumes the next one, and an empty queue answers normally (`default_reply`).

Every request is recorded (`server.requests`: path, headers, parsed JSON body, raw bytes).

Use it as a context manager (`with FakeLLMServer() as server: ...`) or through the pytest
fixture `fake_llm` exported by `tests.fakes` (import it into your test package's
`conftest.py`: `from tests.fakes import fake_llm  # noqa: F401`). Another process (the
language server in a subprocess) can use it too: pass `server.url` as `baseUrl` /
`embeddingBaseUrl`.
"""

from __future__ import annotations

import base64
import contextlib
import json
import select
import socket
import struct
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.fakes.wire_formats import (
    WORD,
    anthropic_events,
    anthropic_message,
    count_tokens,
    embed_text,
    error_body,
    openai_completion,
    openai_events,
    split_text,
)

ENDPOINTS = {"/chat/completions": "chat", "/messages": "messages", "/embeddings": "embeddings"}


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str  # as received, e.g. "/v1/chat/completions"
    endpoint: str  # "chat" | "messages" | "embeddings" | "unknown"
    headers: dict[str, str]  # lower-case names
    body: Any  # parsed JSON, or None when the body was not JSON
    raw: bytes

    @property
    def stream(self) -> bool:
        return isinstance(self.body, dict) and bool(self.body.get("stream"))


Responder = Callable[[RecordedRequest], str]


@dataclass(frozen=True)
class Reply:
    """A successful answer. `text` may be a function of the request (to echo context)."""

    text: str | Responder = "This is the fake model's answer."
    deltas: int = 4  # how many pieces the text is streamed in
    input_tokens: int | None = None  # None: estimated from the request body
    output_tokens: int | None = None
    hit_limit: bool = False  # stop because of max_tokens ("length" / "max_tokens")


@dataclass(frozen=True)
class Status:
    """An HTTP error with the provider's error envelope (or a custom `body`)."""

    code: int
    message: str = "scripted error"
    headers: dict[str, str] = field(default_factory=dict)
    body: str | None = None


@dataclass(frozen=True)
class CutStream:
    """Send `after_deltas` pieces of `text`, then drop the connection mid-body."""

    text: str = "The answer starts well but then the connection"
    after_deltas: int = 2


@dataclass(frozen=True)
class SlowLoris:
    """Send a 200 status and headers, then nothing for `seconds` (or until the server stops)."""

    seconds: float = 300.0


@dataclass(frozen=True)
class Stall:
    """Stream `after_deltas` pieces of `text`, then go silent (a model that hangs mid-answer).

    The handler watches the socket while silent, so a client that gives up (cancellation)
    is seen at once: `server.disconnected` is set.
    """

    text: str = "The model starts answering and then stalls"
    after_deltas: int = 1
    seconds: float = 300.0


@dataclass(frozen=True)
class Malformed:
    """A 200 whose body (or first SSE event) is not valid JSON."""

    body: str = '{"id": "broken", "choices": [ {"delta": '


Behaviour = Reply | Status | CutStream | SlowLoris | Stall | Malformed


class FakeLLMServer:
    """Threaded loopback HTTP server speaking the OpenAI/Anthropic wire formats."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, embedding_dim: int = 1536) -> None:
        self.embedding_dim = embedding_dim
        self.default_reply = Reply()
        self.requests: list[RecordedRequest] = []
        self._scripts: dict[str, deque[Behaviour]] = {}
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self.disconnected = threading.Event()  # a client hung up on a silent (stalled) response
        self._connections: set[socket.socket] = set()
        self._httpd = _Server((host, port), _Handler)
        self._httpd.fake = self
        self._thread: threading.Thread | None = None

    # -- lifecycle -----------------------------------------------------------------------
    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        """Base URL for either SDK (`/v1` is optional on every endpoint)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_url(self) -> str:
        """The base URL shaped like the real OpenAI one (`.../v1`)."""
        return self.url + "/v1"

    def start(self) -> FakeLLMServer:
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._httpd.serve_forever,
                kwargs={"poll_interval": 0.05},
                name="fake-llm-server",
                daemon=True,
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and drop every open connection (wakes slow-loris handlers)."""
        self._stopping.set()
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join()
            self._thread = None
        with self._lock:
            for conn in list(self._connections):
                _hard_close(conn)
            self._connections.clear()
        self._httpd.server_close()

    def __enter__(self) -> FakeLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- scripting and inspection --------------------------------------------------------
    def script(self, endpoint: str, *behaviours: Behaviour) -> None:
        """Queue behaviours for `endpoint` ("chat", "messages", "embeddings" or "*")."""
        if endpoint not in {*ENDPOINTS.values(), "*"}:
            raise ValueError(f"unknown endpoint {endpoint!r}")
        with self._lock:
            self._scripts.setdefault(endpoint, deque()).extend(behaviours)

    def pending(self, endpoint: str = "*") -> int:
        """Scripted behaviours not consumed yet."""
        with self._lock:
            if endpoint == "*":
                return sum(len(q) for q in self._scripts.values())
            return len(self._scripts.get(endpoint, ()))

    def requests_to(self, endpoint: str) -> list[RecordedRequest]:
        with self._lock:
            return [r for r in self.requests if r.endpoint == endpoint]

    def clear(self) -> None:
        with self._lock:
            self.requests.clear()
            self._scripts.clear()

    def all_bodies_text(self) -> str:
        """Every request body received, decoded: for "this never left the machine" asserts."""
        with self._lock:
            return "\n".join(r.raw.decode("utf-8", "replace") for r in self.requests)

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def _next(self, request: RecordedRequest) -> Behaviour:
        with self._lock:
            self.requests.append(request)
            for key in (request.endpoint, "*"):
                queue = self._scripts.get(key)
                if queue:
                    return queue.popleft()
        return self.default_reply

    def _track(self, conn: socket.socket, add: bool) -> None:
        with self._lock:
            (self._connections.add if add else self._connections.discard)(conn)


class QuietHTTPServer(ThreadingHTTPServer):
    """A loopback test server that takes a client hanging up mid-request (a test cutting a
    stream, a client giving up on a retry) as the expected event it is: socketserver's
    default prints the ConnectionResetError's traceback to stderr, which read as a failure
    in CI logs twice (sessions 26 and 27). Any other error still prints."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


class _Server(QuietHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    fake: FakeLLMServer


def _hard_close(conn: socket.socket) -> None:
    with contextlib.suppress(OSError):
        conn.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(OSError):
        conn.close()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # chunked streams, so a cut stream is a protocol error
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # silence stderr noise
        return

    def setup(self) -> None:
        super().setup()
        self.server.fake._track(self.connection, add=True)

    def finish(self) -> None:
        with contextlib.suppress(OSError):
            super().finish()
        self.server.fake._track(self.connection, add=False)

    # -- dispatch ------------------------------------------------------------------------
    def do_GET(self) -> None:
        self._send_json(404, {"error": {"message": f"no GET {self.path}", "type": "not_found"}})

    def do_POST(self) -> None:
        fake = self.server.fake
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        path = self.path.split("?", 1)[0]
        bare = path[3:] if path.startswith("/v1/") else path
        endpoint = ENDPOINTS.get(bare, "unknown")
        request = RecordedRequest(
            method="POST",
            path=path,
            endpoint=endpoint,
            headers={k.lower(): v for k, v in self.headers.items()},
            body=body,
            raw=raw,
        )
        if endpoint == "unknown":
            fake._record(request)
            self._send_json(
                404, {"error": {"message": f"no such endpoint {path}", "type": "not_found"}}
            )
            return
        if not isinstance(body, dict):
            fake._record(request)
            self._send_json(400, error_body(endpoint, 400, "request body is not a JSON object"))
            return
        behaviour = fake._next(request)
        try:
            self._perform(behaviour, request)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client went away (cancelled): fine

    def _perform(self, behaviour: Behaviour, request: RecordedRequest) -> None:
        endpoint = request.endpoint
        if isinstance(behaviour, Status):
            body = (
                behaviour.body
                if behaviour.body is not None
                else json.dumps(error_body(endpoint, behaviour.code, behaviour.message))
            )
            self._send_raw(behaviour.code, body.encode(), "application/json", behaviour.headers)
        elif isinstance(behaviour, Malformed):
            if request.stream:
                self._start_stream()
                # The anthropic SDK ignores events without a name: give it one it parses.
                event = "event: message_start\n" if endpoint == "messages" else ""
                self._chunk(f"{event}data: {behaviour.body}\n\n".encode())
                self._end_stream()
            else:
                self._send_raw(200, behaviour.body.encode(), "application/json")
        elif isinstance(behaviour, SlowLoris):
            self.send_response(200)
            self.send_header(
                "content-type", "text/event-stream" if request.stream else "application/json"
            )
            if request.stream:
                self.send_header("transfer-encoding", "chunked")
            else:
                self.send_header("content-length", "4096")
            self.end_headers()
            self.wfile.flush()
            self._stay_silent(behaviour.seconds)
        elif isinstance(behaviour, Stall):
            self._start_stream()
            model = str(request.body.get("model") or "fake-model")
            events = list(
                (openai_events if endpoint == "chat" else anthropic_events)(
                    request.body,
                    model,
                    split_text(behaviour.text, behaviour.after_deltas + 2),
                    10,
                    10,
                )
            )
            opening = 1 if endpoint == "chat" else 3
            for event in events[: opening + behaviour.after_deltas]:
                self._chunk(event)
            self._stay_silent(behaviour.seconds)
        elif isinstance(behaviour, CutStream):
            self._cut(behaviour, request)
        elif endpoint == "embeddings":
            self._send_json(200, self._embeddings(request))
        else:
            self._reply(behaviour, request)

    def _stay_silent(self, seconds: float) -> None:
        """Send nothing until the client hangs up, the server stops or `seconds` pass."""
        fake = self.server.fake
        deadline = time.monotonic() + seconds
        self.close_connection = True
        while not fake._stopping.is_set() and time.monotonic() < deadline:
            readable, _, _ = select.select([self.connection], [], [], 0.05)
            if readable:
                try:
                    data = self.connection.recv(1, socket.MSG_PEEK)
                except OSError:
                    data = b""
                if not data:
                    fake.disconnected.set()
                    return

    # -- successful answers --------------------------------------------------------------
    def _reply(self, reply: Reply, request: RecordedRequest) -> None:
        text = reply.text(request) if callable(reply.text) else reply.text
        pieces = split_text(text, reply.deltas)
        input_tokens = (
            reply.input_tokens if reply.input_tokens is not None else count_tokens(request.raw)
        )
        output_tokens = (
            reply.output_tokens if reply.output_tokens is not None else count_tokens(text.encode())
        )
        model = str(request.body.get("model") or "fake-model")
        if not request.stream:
            body = (openai_completion if request.endpoint == "chat" else anthropic_message)(
                model, text, input_tokens, output_tokens, reply.hit_limit
            )
            self._send_json(200, body)
            return
        self._start_stream()
        events = (openai_events if request.endpoint == "chat" else anthropic_events)(
            request.body, model, pieces, input_tokens, output_tokens, reply.hit_limit
        )
        for event in events:
            self._chunk(event)
        self._end_stream()

    def _cut(self, cut: CutStream, request: RecordedRequest) -> None:
        model = str(request.body.get("model") or "fake-model")
        pieces = split_text(cut.text, max(cut.after_deltas + 2, 4))
        if not request.stream:
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", "4096")
            self.end_headers()
            self.wfile.write(b'{"id": "cut", "choices": [')
        else:
            self._start_stream()
            events = (openai_events if request.endpoint == "chat" else anthropic_events)(
                request.body, model, pieces, 10, 10
            )
            # The opening events (role / message_start, content_block_start, ping) plus N deltas.
            opening = 1 if request.endpoint == "chat" else 3
            for event in list(events)[: opening + cut.after_deltas]:
                self._chunk(event)
        self.wfile.flush()
        self.close_connection = True
        _hard_close(self.connection)

    def _embeddings(self, request: RecordedRequest) -> dict[str, Any]:
        body = request.body
        inputs = body.get("input")
        items = (
            inputs
            if isinstance(inputs, list) and not all(isinstance(i, int) for i in inputs)
            else [inputs]
        )
        dim = int(body.get("dimensions") or self.server.fake.embedding_dim)
        use_base64 = body.get("encoding_format") == "base64"
        data = []
        tokens = 0
        for index, item in enumerate(items):
            text = item if isinstance(item, str) else json.dumps(item)
            tokens += max(1, len(WORD.findall(text)))
            vector = embed_text(text, dim)
            encoded: Any = (
                base64.b64encode(struct.pack(f"<{dim}f", *vector)).decode()
                if use_base64
                else vector
            )
            data.append({"object": "embedding", "index": index, "embedding": encoded})
        return {
            "object": "list",
            "data": data,
            "model": body.get("model") or "fake-embedding",
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }

    # -- transport -----------------------------------------------------------------------
    def _send_json(self, code: int, obj: Any) -> None:
        self._send_raw(code, json.dumps(obj).encode(), "application/json")

    def _send_raw(
        self, code: int, body: bytes, content_type: str, headers: dict[str, str] | None = None
    ) -> None:
        self.send_response(code)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()

    def _start_stream(self) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _end_stream(self) -> None:
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


def unused_port_url() -> str:
    """A loopback URL nobody listens on, for "connection refused" tests."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"
