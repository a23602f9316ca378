"""Validating `workspace/executeCommand` arguments, shared by every command feature.

pygls passes a command's `arguments` as positional parameters; every codeqa command takes
one object (PROTOCOL.md). A mistake is a -32602 error whose message shows the expected
shape, so a plugin author sees at once what to send. Each feature declares its commands'
shapes here (`declare_shapes`) instead of reaching into another feature's table.
"""

from __future__ import annotations

import uuid
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from codeqa_lsp.index.filters import SearchFilters

REQUEST_FAILED = -32803  # LSP RequestFailed

# command name -> the arguments it expects, as shown in -32602 messages
SHAPES: dict[str, str] = {}


class RequestFailed(JsonRpcException):
    CODE = REQUEST_FAILED
    MESSAGE = "Request failed"


def declare_shapes(shapes: dict[str, str]) -> None:
    """Register commands' expected arguments (each feature module, at import)."""
    SHAPES.update(shapes)


def bad_arguments(command: str, problem: str) -> JsonRpcInvalidParams:
    return JsonRpcInvalidParams(f"{command}: {problem}; expected arguments {SHAPES[command]}")


def command_object(command: str, args: tuple[Any, ...], required: bool = True) -> dict[str, Any]:
    if not args:
        if required:
            raise bad_arguments(command, "missing argument object")
        return {}
    if len(args) > 1:
        raise bad_arguments(command, f"got {len(args)} arguments")
    if args[0] is None and not required:
        return {}
    if not isinstance(args[0], dict):
        raise bad_arguments(command, f"argument must be an object, got {type(args[0]).__name__}")
    return args[0]


def get_str(command: str, obj: dict[str, Any], key: str, required: bool = False) -> str | None:
    value = obj.get(key)
    if value is None:
        if required:
            raise bad_arguments(command, f"'{key}' is required")
        return None
    if not isinstance(value, str) or (required and not value.strip()):
        raise bad_arguments(command, f"'{key}' must be a non-empty string")
    return value


def get_int(command: str, obj: dict[str, Any], key: str, low: int, high: int) -> int | None:
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise bad_arguments(command, f"'{key}' must be an integer in {low}..{high}")
    return value


def get_bool(command: str, obj: dict[str, Any], key: str) -> bool:
    """An optional flag, False when absent."""
    value = obj.get(key, False)
    if not isinstance(value, bool):
        raise bad_arguments(command, f"'{key}' must be a boolean")
    return value


def get_position(command: str, obj: dict[str, Any]) -> types.Position:
    pos = obj.get("position")
    if not isinstance(pos, dict):
        raise bad_arguments(command, "'position' is required")
    line, character = pos.get("line"), pos.get("character", 0)
    for name, value in (("line", line), ("character", character)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise bad_arguments(command, f"'position.{name}' must be a non-negative integer")
    assert isinstance(line, int) and isinstance(character, int)
    return types.Position(line=line, character=character)


def request_id(command: str, obj: dict[str, Any]) -> str:
    """The client's id for an answer's streamed deltas, or a fresh one."""
    return get_str(command, obj, "requestId") or f"r-{uuid.uuid4().hex[:10]}"


def search_filters(path: str | None, language: str | None) -> SearchFilters | None:
    if not path and not language:
        return None
    return SearchFilters(
        languages=(language,) if language else (), path_globs=(path,) if path else ()
    )
