"""A JSON-RPC protocol that answers every request, however broken.

pygls 2.1 deserialises messages inside `json.loads(..., object_hook=...)`. When a request's
params do not match the LSP type (`textDocument/hover` with `null` params, `workspace/symbol`
with a string, ...) the exception escapes the read loop before the request id is known, so
the client never gets a response and waits forever. Requests before `initialize` and after
`shutdown` are silently dropped too, and so are messages that are not JSON-RPC at all.

`RobustProtocol` moves deserialisation out of the JSON decoder: the decoder hands back plain
dicts, and `handle_message` validates the envelope, enforces the LSP lifecycle and only then
structures the message, so every failure can be answered with the right error code:

- not JSON / not UTF-8 -> -32700 (id null, sent from the server's error hook);
- not a JSON-RPC 2.0 object, bad id, bad method -> -32600;
- a request before `initialize` -> -32002; a request after `shutdown` -> -32600;
- params that do not deserialise -> -32602 with a readable reason;
- unknown method -> -32601 (pygls), handler exceptions -> -32603 (pygls, logged).

It also tracks per-request cancellation events so long-running work in our own threads
(answer generation) can stop when the client sends `$/cancelRequest`.
"""

from __future__ import annotations

import contextvars
import logging
import threading
from collections.abc import Generator, Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from typing import Any

from cattrs import Converter
from cattrs.errors import ClassValidationError
from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.protocol import LanguageServerProtocol, default_converter, lsp_method

logger = logging.getLogger(__name__)

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
SERVER_NOT_INITIALIZED = -32002

# Set while `workspace/executeCommand` runs so command handlers (which pygls calls with the
# unpacked `arguments` only) can still see the request's `workDoneToken`.
current_command_params: contextvars.ContextVar[types.ExecuteCommandParams | None] = (
    contextvars.ContextVar("codeqa_command_params", default=None)
)

# Methods a client may send before `initialize` has been answered.
_ALLOWED_BEFORE_INIT = {types.INITIALIZE, types.EXIT}


def _valid_id(value: Any) -> bool:
    return isinstance(value, str | int) and not isinstance(value, bool)


def describe_structure_error(exc: BaseException) -> str:
    """One readable line for a cattrs failure ("required field missing @ $.textDocument")."""
    cause: BaseException | None = exc
    while cause is not None and not isinstance(cause, ClassValidationError):
        cause = cause.__cause__ or cause.__context__
    if isinstance(cause, ClassValidationError):
        from cattrs import transform_error

        try:
            parts = transform_error(cause, path="$")
        except Exception:  # pragma: no cover - transform_error is best effort
            parts = [str(cause)]
        return "; ".join(p.replace("$.params", "params") for p in parts[:4])
    root = exc.__cause__ or exc
    return f"{type(root).__name__}: {root}"[:300]


def _strict_str(value: Any, _type: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected a string, got {type(value).__name__}")
    return value


def strict_converter() -> Converter:
    """pygls's converter, except that string fields only accept strings.

    cattrs' default turns anything into a string (`{"uri": null}` becomes `"None"`, a list
    becomes `"[1]"`), so a wrong type would flow into handlers as nonsense instead of being
    rejected with -32602. Real clients' messages are unaffected (checked in the tests against
    the VS Code and Neovim capability sets).
    """
    converter = default_converter()
    converter.register_structure_hook(str, _strict_str)
    return converter


class RobustProtocol(LanguageServerProtocol):
    """LanguageServerProtocol that never leaves a request unanswered."""

    def __init__(self, server: Any, converter: Any) -> None:
        super().__init__(server, converter)
        self.initialize_received = False
        self._cancel_events: dict[Any, threading.Event] = {}
        self._cancel_lock = threading.Lock()

    # -- decoding ---------------------------------------------------------------------------
    def structure_message(self, data: dict[str, Any]) -> Any:
        """Called by the JSON decoder for every object: keep plain dicts (see module doc)."""
        return data

    def handle_message(self, message: Any) -> None:
        try:
            self._handle_raw(message)
        except Exception as exc:  # a bug here must not leave the client waiting
            logger.exception("Failed to dispatch message")
            msg_id = message.get("id") if isinstance(message, dict) else None
            if _valid_id(msg_id) and "method" in message:
                self.send_error(msg_id, INTERNAL_ERROR, f"Internal error: {exc}"[:300])

    def _handle_raw(self, message: Any) -> None:
        if not isinstance(message, dict):
            if hasattr(message, "jsonrpc"):  # already structured (tests, other transports)
                super().handle_message(message)
                return
            self.send_error(
                None, INVALID_REQUEST, "Invalid Request: expected a JSON-RPC 2.0 object"
            )
            return

        raw_id = message.get("id")
        has_id = "id" in message and raw_id is not None
        method = message.get("method")
        reply_id = raw_id if _valid_id(raw_id) else None

        if message.get("jsonrpc") != self.VERSION:
            self.send_error(reply_id, INVALID_REQUEST, 'Invalid Request: "jsonrpc" must be "2.0"')
            return
        if has_id and not _valid_id(raw_id):
            self.send_error(
                None, INVALID_REQUEST, "Invalid Request: id must be a string or an integer"
            )
            return
        if "id" in message and raw_id is None and method is not None:
            self.send_error(None, INVALID_REQUEST, "Invalid Request: id must not be null")
            return
        if "method" in message and not isinstance(method, str):
            self.send_error(reply_id, INVALID_REQUEST, "Invalid Request: method must be a string")
            return
        if method is None:
            if has_id and ("result" in message or "error" in message):
                self._handle_client_response(message)
            else:
                self.send_error(reply_id, INVALID_REQUEST, "Invalid Request: no method")
            return
        assert isinstance(method, str)
        is_request = has_id

        if not self._lifecycle_allows(method, reply_id if is_request else None, is_request):
            return

        if not self._handles(method):
            if is_request:  # before structuring: an unknown method is -32601 whatever its params
                self.send_error(raw_id, METHOD_NOT_FOUND, f"Method Not Found: {method}")
            elif not method.startswith("$/"):
                logger.info("Ignoring notification for unhandled method %r", method)
            return
        try:
            structured = LanguageServerProtocol.structure_message(self, message)
        except Exception as exc:
            reason = describe_structure_error(exc)
            if is_request:
                logger.warning("Invalid params for %s (id %r): %s", method, raw_id, reason)
                self.send_error(raw_id, INVALID_PARAMS, f"Invalid params for {method}: {reason}")
            else:
                logger.warning("Ignoring notification %s with invalid params: %s", method, reason)
            return
        if method == types.INITIALIZE:
            self.initialize_received = True
        super().handle_message(structured)

    def _handles(self, method: str) -> bool:
        return (
            method == types.CANCEL_REQUEST  # handled inside pygls, not a registered feature
            or method in self.fm.builtin_features
            or method in self.fm.features
        )

    def _lifecycle_allows(self, method: str, msg_id: Any, is_request: bool) -> bool:
        if method == types.EXIT:
            return True
        if not self.initialize_received and method not in _ALLOWED_BEFORE_INIT:
            if is_request:
                self.send_error(
                    msg_id,
                    SERVER_NOT_INITIALIZED,
                    f"Server not initialized: send 'initialize' before '{method}'",
                )
            return False
        if self.initialize_received and method == types.INITIALIZE and is_request:
            self.send_error(
                msg_id, INVALID_REQUEST, "Invalid Request: 'initialize' was already sent"
            )
            return False
        if self._shutdown:
            if is_request:
                self.send_error(
                    msg_id,
                    INVALID_REQUEST,
                    f"Invalid Request: the server is shutting down, '{method}' refused",
                )
            return False
        return True

    def _handle_client_response(self, message: dict[str, Any]) -> None:
        """A response to one of our requests; a malformed one fails the waiting future."""
        try:
            structured = LanguageServerProtocol.structure_message(self, message)
        except Exception as exc:
            future = self._request_futures.pop(message["id"], None)
            if future is not None and not future.done():
                future.set_exception(
                    JsonRpcInvalidParams(
                        f"malformed response from client: {describe_structure_error(exc)}"
                    )
                )
            logger.warning("Malformed response to request %r: %s", message.get("id"), exc)
            return
        super().handle_message(structured)

    def _send_handler_result(self, future: Future[Any], *, msg_id: Any) -> None:
        """Expected errors (bad arguments, cancellation) are answered without a traceback.

        pygls logs every error response as an exception; a user's typo or a cancelled
        answer is not a server bug and must not bury real ones in the log.
        """
        if not future.cancelled():
            exc = future.exception()
            if isinstance(exc, JsonRpcException):
                self._request_futures.pop(msg_id, None)
                logger.info("request %r failed: %s", msg_id, exc)
                self.send_error(msg_id, exc.code, exc.message, exc.data)
                return
        super()._send_handler_result(future, msg_id=msg_id)

    # -- sending ------------------------------------------------------------------------------
    def send_error(self, msg_id: Any, code: int, message: str, data: Any = None) -> None:
        """Send an error response as a plain dict so that `"id": null` is kept on the wire."""
        error: dict[str, Any] = {"code": code, "message": message}
        if data is not None:
            error["data"] = data
        self._send_data({"jsonrpc": self.VERSION, "id": msg_id, "error": error})

    # -- cancellation -------------------------------------------------------------------------
    @contextmanager
    def cancellation(self, msg_id: Any) -> Iterator[threading.Event]:
        """An event set when the client cancels request `msg_id` (for worker threads)."""
        event = threading.Event()
        if msg_id is None:
            yield event
            return
        with self._cancel_lock:
            self._cancel_events[msg_id] = event
        try:
            yield event
        finally:
            with self._cancel_lock:
                self._cancel_events.pop(msg_id, None)

    def _handle_cancel_notification(self, msg_id: Any) -> None:
        with self._cancel_lock:
            event = self._cancel_events.get(msg_id)
        if event is not None:
            event.set()
        super()._handle_cancel_notification(msg_id)

    def _handle_notification(self, method_name: str, params: Any) -> None:
        if method_name == types.CANCEL_REQUEST and not _valid_id(getattr(params, "id", None)):
            logger.warning("Ignoring $/cancelRequest without a valid id: %r", params)
            return
        super()._handle_notification(method_name, params)

    # -- commands -------------------------------------------------------------------------------
    @lsp_method(types.WORKSPACE_EXECUTE_COMMAND)
    def lsp_workspace__execute_command(
        self, params: types.ExecuteCommandParams
    ) -> Generator[Any, Any, Any]:
        """Like pygls's, with a helpful error for unknown commands and the params in context."""
        if params.command not in self.fm.commands:
            known = ", ".join(sorted(self.fm.commands)) or "none"
            raise JsonRpcInvalidParams(
                f"Unknown command {params.command!r}; this server provides: {known}"
            )
        if params.arguments is not None and not isinstance(params.arguments, list | tuple):
            raise JsonRpcInvalidParams("workspace/executeCommand: 'arguments' must be an array")
        current_command_params.set(params)
        result = yield from super().lsp_workspace__execute_command(params)
        return result
