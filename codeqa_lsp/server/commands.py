"""`workspace/executeCommand`: codeqa.ask / explain / search / status / reindex / showAnswer.

pygls passes the command's `arguments` as positional parameters; every command takes one
object (PROTOCOL.md). Arguments are validated here and a mistake is a -32602 error whose
message shows the expected shape, so a plugin author sees at once what to send.

Answers stream: the engine's generator runs in the server's work pool; each text delta is
forwarded to the event loop as a `codeqa/answerDelta` notification (and a `$/progress`
report carrying the partial text when the request had a work-done token). `$/cancelRequest`
or cancelling that progress closes the generator, which stops generation.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams, JsonRpcRequestCancelled

from codeqa_lsp.answering.model import Answer
from codeqa_lsp.answering.sanitize import escape_preview
from codeqa_lsp.index.filters import SearchFilters
from codeqa_lsp.retrieval.model import SearchHit
from codeqa_lsp.server.app import CodeQAServer
from codeqa_lsp.server.convert import answer_json, line_range, search_hit_json
from codeqa_lsp.server.documents import document_text
from codeqa_lsp.server.protocol import current_command_params

if TYPE_CHECKING:
    from codeqa_lsp.engine import CodeBase

logger = logging.getLogger(__name__)

ASK, EXPLAIN, SEARCH, STATUS, REINDEX, SHOW_ANSWER = (
    "codeqa.ask", "codeqa.explain", "codeqa.search", "codeqa.status", "codeqa.reindex",
    "codeqa.showAnswer",
)
SHAPES = {
    ASK: "[{question: string, path?: string, language?: string, requestId?: string}]",
    EXPLAIN: "[{uri: string, position: {line: int, character: int}, requestId?: string}]",
    SEARCH: "[{query: string, topK?: int, path?: string, language?: string}]",
    STATUS: "[]",
    REINDEX: "[{force?: bool}]",
    SHOW_ANSWER: "[{uri: string, position: {line: int, character: int}}]",
}
MAX_TOP_K = 100
PROGRESS_INTERVAL_SECONDS = 0.05
REQUEST_FAILED = -32803  # LSP RequestFailed


class RequestFailed(JsonRpcException):
    CODE = REQUEST_FAILED
    MESSAGE = "Request failed"


# -- argument validation -------------------------------------------------------------------------

def _bad(command: str, problem: str) -> JsonRpcInvalidParams:
    return JsonRpcInvalidParams(f"{command}: {problem}; expected arguments {SHAPES[command]}")


def command_object(command: str, args: tuple[Any, ...], required: bool = True) -> dict[str, Any]:
    if not args:
        if required:
            raise _bad(command, "missing argument object")
        return {}
    if len(args) > 1:
        raise _bad(command, f"got {len(args)} arguments")
    if args[0] is None and not required:
        return {}
    if not isinstance(args[0], dict):
        raise _bad(command, f"argument must be an object, got {type(args[0]).__name__}")
    return args[0]


def get_str(command: str, obj: dict[str, Any], key: str, required: bool = False) -> str | None:
    value = obj.get(key)
    if value is None:
        if required:
            raise _bad(command, f"'{key}' is required")
        return None
    if not isinstance(value, str) or (required and not value.strip()):
        raise _bad(command, f"'{key}' must be a non-empty string")
    return value


def get_int(command: str, obj: dict[str, Any], key: str, low: int, high: int) -> int | None:
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise _bad(command, f"'{key}' must be an integer in {low}..{high}")
    return value


def get_position(command: str, obj: dict[str, Any]) -> types.Position:
    pos = obj.get("position")
    if not isinstance(pos, dict):
        raise _bad(command, "'position' is required")
    line, character = pos.get("line"), pos.get("character", 0)
    for name, value in (("line", line), ("character", character)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise _bad(command, f"'position.{name}' must be a non-negative integer")
    assert isinstance(line, int) and isinstance(character, int)
    return types.Position(line=line, character=character)


def _filters(path: str | None, language: str | None) -> SearchFilters | None:
    if not path and not language:
        return None
    return SearchFilters(
        languages=(language,) if language else (), path_globs=(path,) if path else ()
    )


# -- folder selection ------------------------------------------------------------------------------

async def pick_workspace(ls: CodeQAServer, path_glob: str | None) -> tuple[Path, CodeBase, str | None]:
    """The folder an ask goes to: the one named by the glob's first segment, else the first."""
    await ls.folders.wait_open()
    ready = ls.folders.ready()
    if not ready:
        raise RequestFailed("no workspace folder is open (or its index could not be opened)")
    if path_glob and len(ready) > 1:
        head, _, rest = path_glob.partition("/")
        for folder, workspace in ready:
            if head == folder.name and rest:
                return folder.root, workspace, rest
    folder, workspace = ready[0]
    return folder.root, workspace, path_glob


async def workspace_for_uri(ls: CodeQAServer, command: str, uri: str) -> tuple[Path, CodeBase, Path]:
    found = ls.folders.folder_for_uri(uri)
    if found is None:
        raise _bad(command, f"'uri' {uri!r} is not a file in an open workspace folder")
    folder, path = found
    await ls.folders.wait_open([folder])
    if folder.workspace is None:
        raise RequestFailed(f"the index of {folder.name} is not open yet")
    return folder.root, folder.workspace, path


# -- streaming answers -------------------------------------------------------------------------------

StreamFactory = Callable[[threading.Event], Iterator[str | Answer]]


def _consume(make_stream: StreamFactory, emit: Callable[[str], None], cancel: threading.Event) -> Answer | None:
    """(work pool) Drive the engine's answer generator; None when cancelled.

    The engine gets the same `cancel` event, which interrupts a provider request even while
    it waits on a silent server; between deltas we check it too.
    """
    stream = make_stream(cancel)
    answer: Answer | None = None
    try:
        for item in stream:
            if cancel.is_set():
                return None
            if isinstance(item, Answer):
                answer = item
            elif item:
                emit(item)
    finally:
        close = getattr(stream, "close", None)
        if close is not None:
            close()  # stops generation when we left early
    return None if cancel.is_set() else answer


async def stream_answer(
    ls: CodeQAServer,
    root: Path,
    make_stream: StreamFactory,
    request_id: str,
) -> tuple[dict[str, Any], Answer]:
    params = current_command_params.get()
    token = params.work_done_token if params is not None else None
    msg_id = ls.protocol.msg_id
    partial: list[str] = []
    last_report = [0.0]

    def send_delta(text: str) -> None:
        partial.append(text)
        ls.protocol.notify("codeqa/answerDelta", {"requestId": request_id, "text": text})
        now = time.monotonic()
        if token is not None and now - last_report[0] >= PROGRESS_INTERVAL_SECONDS:
            last_report[0] = now
            ls.work_done_progress.report(token, types.WorkDoneProgressReport(message="".join(partial)))

    last_char = [""]

    def emit(text: str) -> None:
        safe = escape_preview(text, last_char[0])  # raw model text: inert until sanitised
        last_char[0] = text[-1:] or last_char[0]
        ls.call_soon(send_delta, safe)

    with ls.robust.cancellation(msg_id) as cancel:
        if token is not None:
            ls.progress_cancellers[token] = cancel
            ls.work_done_progress.begin(
                token, types.WorkDoneProgressBegin(title="codeqa: answering", cancellable=True)
            )
        try:
            answer = await ls.run_work(_consume, make_stream, emit, cancel)
        finally:
            if token is not None:
                ls.progress_cancellers.pop(token, None)
                ls.work_done_progress.end(token, types.WorkDoneProgressEnd())
    if answer is None:
        raise JsonRpcRequestCancelled(f"request {msg_id!r} was cancelled")
    return answer_json(root, answer, request_id), answer


def _request_id(command: str, obj: dict[str, Any]) -> str:
    return get_str(command, obj, "requestId") or f"r-{uuid.uuid4().hex[:10]}"


# -- commands (annotations must resolve at run time: pygls inspects them) -------------------------------------------------------------------------------------------

async def ask(ls: CodeQAServer, *args: Any) -> dict[str, Any]:
    obj = command_object(ASK, args)
    question = get_str(ASK, obj, "question", required=True)
    assert question is not None
    path = get_str(ASK, obj, "path")
    language = get_str(ASK, obj, "language")
    request_id = _request_id(ASK, obj)
    root, workspace, glob = await pick_workspace(ls, path)
    filters = _filters(glob, language)
    result, _ = await stream_answer(
        ls, root, lambda cancel: workspace.ask_stream(question, filters=filters, cancel=cancel), request_id
    )
    return result


async def _explain(ls: CodeQAServer, command: str, obj: dict[str, Any]) -> tuple[dict[str, Any], Answer, Path]:
    uri = get_str(command, obj, "uri", required=True)
    assert uri is not None
    position = get_position(command, obj)
    request_id = _request_id(command, obj)
    root, workspace, path = await workspace_for_uri(ls, command, uri)
    text = document_text(ls, uri)
    if text is None:
        raise RequestFailed(f"{uri} is not a readable text file")
    line_count = len(text.splitlines())
    if position.line >= max(line_count, 1):
        raise _bad(command, f"position line {position.line} is past the end of the document ({line_count} lines)")
    result, answer = await stream_answer(
        ls, root, lambda cancel: workspace.explain_stream(path, position.line + 1, text=text, cancel=cancel), request_id
    )
    return result, answer, root


async def explain(ls: CodeQAServer, *args: Any) -> dict[str, Any]:
    result, _, _ = await _explain(ls, EXPLAIN, command_object(EXPLAIN, args))
    return result


async def show_answer(ls: CodeQAServer, *args: Any) -> dict[str, Any]:
    """Explain, then deliver the answer the way this client can display it."""
    result, answer, root = await _explain(ls, SHOW_ANSWER, command_object(SHOW_ANSWER, args))
    if ls.client_features.answer_notification:
        ls.protocol.notify("codeqa/answer", result)
    else:
        # Not awaited: the command returns now; the popup waits for the user as long as it likes.
        task = asyncio.get_running_loop().create_task(offer_citations(ls, root, answer))
        _background.add(task)
        task.add_done_callback(_background.discard)
    return result


_background: set[asyncio.Task[None]] = set()


def plain_summary(answer: Answer, max_lines: int = 12, max_chars: int = 1200) -> str:
    lines = [line for line in answer.text.strip().splitlines() if line.strip()][:max_lines]
    text = "\n".join(lines)
    return text if len(text) <= max_chars else text[: max_chars - 1] + "…"


async def offer_citations(ls: CodeQAServer, root: Path, answer: Answer) -> None:
    """`window/showMessageRequest` with "Open [n] symbol (path:line)"; the choice opens it."""
    from codeqa_lsp.server.convert import file_uri

    titles = {
        f"Open [{c.number}] {c.symbol or c.path} ({c.path}:{c.start_line})": c
        for c in answer.citations[:6]
    }
    try:
        choice = await ls.window_show_message_request_async(
            types.ShowMessageRequestParams(
                type=types.MessageType.Info,
                message=plain_summary(answer) or "No answer.",
                actions=[types.MessageActionItem(title=t) for t in titles] or None,
            )
        )
    except Exception as exc:
        logger.info("showMessageRequest failed: %s", exc)
        return
    citation = titles.get(choice.title) if choice is not None else None
    if citation is None:
        return
    try:
        await ls.window_show_document_async(
            types.ShowDocumentParams(
                uri=file_uri(root / citation.path),
                take_focus=True,
                selection=line_range(citation.start_line, citation.end_line),
            )
        )
    except Exception as exc:
        logger.info("showDocument failed: %s", exc)


def merged_search(
    ls: CodeQAServer, query: str, top_k: int, path: str | None = None, language: str | None = None
) -> list[tuple[Path, SearchHit]]:
    """(read pool) Search every ready folder; best hits first across folders."""
    hits: list[tuple[Path, SearchHit]] = []
    for folder, workspace in ls.folders.ready():
        try:
            response = workspace.search(query, top_k=top_k, filters=_filters(path, language))
        except Exception:
            logger.exception("search in %s failed", folder.root)
            continue
        hits.extend((folder.root, hit) for hit in response.hits)
    hits.sort(key=lambda pair: pair[1].score, reverse=True)
    return hits[:top_k]


async def search(ls: CodeQAServer, *args: Any) -> list[dict[str, Any]]:
    obj = command_object(SEARCH, args)
    query = get_str(SEARCH, obj, "query", required=True)
    assert query is not None
    top_k = get_int(SEARCH, obj, "topK", 1, MAX_TOP_K) or ls.settings.top_k
    path, language = get_str(SEARCH, obj, "path"), get_str(SEARCH, obj, "language")
    hits = await ls.run_read(merged_search, ls, query, top_k, path, language)
    return [search_hit_json(root, hit) for root, hit in hits]


async def status(ls: CodeQAServer, *args: Any) -> dict[str, Any]:
    command_object(STATUS, args, required=False)
    return await ls.run_read(ls.folders.status)


async def reindex(ls: CodeQAServer, *args: Any) -> dict[str, Any]:
    obj = command_object(REINDEX, args, required=False)
    force = obj.get("force", False)
    if not isinstance(force, bool):
        raise _bad(REINDEX, "'force' must be a boolean")
    ls.folders.start_all(force=force)
    return {"started": bool(ls.folders.folders)}


def register(server: CodeQAServer) -> None:
    for name, handler in (
        (ASK, ask), (EXPLAIN, explain), (SEARCH, search), (STATUS, status),
        (REINDEX, reindex), (SHOW_ANSWER, show_answer),
    ):
        server.command(name)(handler)
