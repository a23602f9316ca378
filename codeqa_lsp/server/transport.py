"""Running the server over stdio or TCP with our own framing (framing.py) and TCP auth.

TCP threat model (issue 15): any local user can connect to a port on 127.0.0.1. Without a
secret, another user could `initialize` a folder only we can read, point `baseUrl` at their
endpoint and receive both the code and our API key; a second connection could also take over
the editor's session (pygls swaps its one writer to the newest connection). So:

- the first message on a connection must be `initialize` carrying the server's token in
  `initializationOptions.authToken` (compared in constant time); anything else is answered
  with an error and the connection is closed before it reaches the protocol;
- the token is passed by the launching client (`--token-file` it wrote, 0600, or the
  `CODEQA_LSP_TOKEN` environment variable), or generated and written to a 0600 file whose
  path is printed on stderr; only the user (and root) can read it;
- one client per server: a second connection while one is served is refused (the server's
  state, settings and folders belong to one client; `--max-clients` raises the limit for
  clients that connect one after another, e.g. an editor that reconnects).
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import logging
import os
import secrets
import stat
import sys
import threading
from pathlib import Path
from typing import Any

from codeqa_lsp.server.framing import (
    DEFAULT_MAX_MESSAGE_BYTES,
    INVALID_REQUEST,
    MAX_HEADER_LINE_BYTES,
    error_frame,
    read_messages,
)

logger = logging.getLogger(__name__)

TOKEN_ENV = "CODEQA_LSP_TOKEN"
TOKEN_OPTION = "authToken"
# A connection that has not authenticated after this long is closed. It cannot take the
# session (only authenticating does), but without a deadline a peer that connects and sends
# nothing, or drips a header byte at a time, holds a socket and a reader task forever. Ten
# seconds is far above what a local editor needs (initialize is its first write, sent within
# milliseconds of connecting) and short enough that a flood of idle sockets drains quickly.
DEFAULT_AUTH_TIMEOUT_SECONDS = 10.0
AUTH_FAILED = -32001  # implementation-defined server error range


class _StdinReader:
    """Blocking stdin reads in the server's thread pool (as pygls does), bounded per line."""

    def __init__(self, stdin: Any, executor: Any) -> None:
        self.stdin = stdin
        self.executor = executor

    def readline(self) -> Any:
        return asyncio.get_running_loop().run_in_executor(
            self.executor, self.stdin.readline, MAX_HEADER_LINE_BYTES
        )

    def read(self, n: int) -> Any:
        return asyncio.get_running_loop().run_in_executor(self.executor, self.stdin.read, n)


class _StreamReader:
    def __init__(self, reader: asyncio.StreamReader) -> None:
        self.reader = reader

    async def readline(self) -> bytes:
        try:
            return await self.reader.readuntil(b"\n")
        except asyncio.LimitOverrunError as exc:  # an endless "line": hand it back in pieces
            return await self.reader.read(max(exc.consumed, 1))
        except asyncio.IncompleteReadError as exc:
            return exc.partial

    async def read(self, n: int) -> bytes:
        return await self.reader.read(n)


def serve_stdio(server: Any, max_bytes: int = DEFAULT_MAX_MESSAGE_BYTES) -> None:
    """Like pygls's `start_io`, with our reader."""
    from pygls.io_ import StdoutWriter

    server._stop_event = threading.Event()
    stdout = sys.stdout.buffer
    server.protocol.set_writer(StdoutWriter(stdout))

    def reply(frame: bytes) -> None:
        stdout.write(frame)
        stdout.flush()

    reader = _StdinReader(sys.stdin.buffer, server.thread_pool)
    try:
        asyncio.run(
            read_messages(reader, _deliver(server), reply, max_bytes, server._stop_event.is_set)
        )
    except BrokenPipeError:
        logger.error("Connection to the client is lost! Shutting down the server.")
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        server.shutdown()


def _deliver(server: Any) -> Any:
    def deliver(message: Any) -> None:
        try:
            server.protocol.handle_message(message)
        except Exception as exc:  # RobustProtocol answers what it can; never stop reading
            logger.error("unable to handle message: %s", exc)

    return deliver


# -- TCP ---------------------------------------------------------------------------------------


def default_token_path(port: int) -> Path:
    base = os.environ.get("XDG_RUNTIME_DIR") or str(Path.home() / ".cache")
    return Path(base) / "codeqa-lsp" / f"tcp-{port}.token"


def write_token_file(path: Path, token: str) -> None:
    """Create the file 0600 from the start (no window where it is readable by others)."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(token + "\n")


def read_token_file(path: Path) -> str:
    """The token in a file the launching client wrote; refused if others can read it."""
    info = path.stat()
    if stat.S_IMODE(info.st_mode) & 0o077:
        raise ValueError(f"{path} is readable by other users (chmod 600 it)")
    token = path.read_text(encoding="utf-8").strip()
    if len(token) < 16:
        raise ValueError(f"{path}: the token must be at least 16 characters")
    return token


def resolve_token(port: int, token_file: str | None) -> tuple[str, Path | None]:
    """(token, file it was written to when we generated it)."""
    if token_file and Path(token_file).exists():
        return read_token_file(Path(token_file)), None
    env = os.environ.get(TOKEN_ENV, "").strip()
    if env:
        if len(env) < 16:
            raise ValueError(f"{TOKEN_ENV} must be at least 16 characters")
        return env, None
    token = secrets.token_urlsafe(32)
    path = Path(token_file) if token_file else default_token_path(port)
    write_token_file(path, token)
    return token, path


def authenticates(message: Any, token: str) -> bool:
    """The message is `initialize` with our token; the token is removed from the options."""
    if not isinstance(message, dict) or message.get("method") != "initialize":
        return False
    params = message.get("params")
    options = params.get("initializationOptions") if isinstance(params, dict) else None
    offered = options.pop(TOKEN_OPTION, None) if isinstance(options, dict) else None
    if not isinstance(offered, str):
        return False
    return hmac.compare_digest(offered.encode("utf-8", "replace"), token.encode("utf-8"))


def serve_tcp(
    server: Any,
    host: str,
    port: int,
    token: str,
    max_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    max_clients: int = 1,
    auth_timeout: float = DEFAULT_AUTH_TIMEOUT_SECONDS,
) -> None:
    """Serve authenticated clients one at a time; stop after `max_clients` sessions.

    A connection must authenticate within `auth_timeout` seconds or it is closed.
    """
    server._stop_event = stop_event = threading.Event()
    state = {"busy": False, "sessions": 0}

    async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = writer.get_extra_info("peername")
        if state["busy"] or state["sessions"] >= max_clients:
            logger.warning("refused a second connection from %s: one client per server", peer)
            writer.write(
                error_frame(
                    None, INVALID_REQUEST, "Invalid Request: this server already serves a client"
                )
            )
            await _close(writer)
            return
        authenticated = await _session(
            server, reader, writer, token, max_bytes, stop_event, state, auth_timeout
        )
        if authenticated:
            state["busy"] = False
            if state["sessions"] >= max_clients or stop_event.is_set():
                server.shutdown()

    async def main() -> None:
        server._server = await asyncio.start_server(
            connection, host, port, limit=MAX_HEADER_LINE_BYTES
        )
        addrs = ", ".join(str(sock.getsockname()) for sock in server._server.sockets)
        logger.info("Serving on %s (token required)", addrs)
        async with server._server:
            await server._server.serve_forever()

    with contextlib.suppress(asyncio.CancelledError, KeyboardInterrupt, SystemExit):
        asyncio.run(main())


async def _session(
    server: Any,
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    token: str,
    max_bytes: int,
    stop_event: threading.Event,
    state: dict[str, Any],
    auth_timeout: float,
) -> bool:
    """One connection; True if it authenticated (and so held the server's one session).

    A connection only claims the session when it authenticates, so a stranger who connects
    and sends nothing cannot lock the user out.
    """
    authed = False
    closed = False

    def expire() -> None:
        nonlocal closed
        if authed or closed:
            return
        logger.warning(
            "closed a TCP connection from %s: no authentication within %.0f s",
            writer.get_extra_info("peername"),
            auth_timeout,
        )
        closed = True
        writer.close()

    deadline = asyncio.get_running_loop().call_later(auth_timeout, expire)

    def deliver(message: Any) -> None:
        nonlocal authed, closed
        if not authed:
            if state["busy"]:
                writer.write(
                    error_frame(
                        None,
                        INVALID_REQUEST,
                        "Invalid Request: this server already serves a client",
                    )
                )
                closed = True
                writer.close()
                return
            if not authenticates(message, token):
                msg_id = message.get("id") if isinstance(message, dict) else None
                msg_id = (
                    msg_id
                    if isinstance(msg_id, str | int) and not isinstance(msg_id, bool)
                    else None
                )
                logger.warning(
                    "refused an unauthenticated TCP client from %s",
                    writer.get_extra_info("peername"),
                )
                writer.write(
                    error_frame(
                        msg_id,
                        AUTH_FAILED,
                        "authentication required: send initialize with "
                        f"initializationOptions.{TOKEN_OPTION}",
                    )
                )
                closed = True
                writer.close()
                return
            authed = True
            state["busy"] = True
            state["sessions"] += 1
            server.protocol.set_writer(writer)
        _deliver(server)(message)

    try:
        await read_messages(
            _StreamReader(reader),
            deliver,
            writer.write,
            max_bytes,
            lambda: closed or stop_event.is_set(),
        )
    finally:
        deadline.cancel()
    await _close(writer)
    return authed


async def _close(writer: asyncio.StreamWriter) -> None:
    try:
        await writer.drain()
        writer.close()
        await writer.wait_closed()
    except (ConnectionError, OSError):
        pass
