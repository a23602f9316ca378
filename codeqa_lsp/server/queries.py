"""Engine reads several features share: streaming an answer, searching every folder.

Answers stream: the engine's generator runs in the server's work pool; each text delta is
forwarded to the event loop as a `codeqa/answerDelta` notification (and a `$/progress`
report carrying the partial text when the request had a work-done token). `$/cancelRequest`
or cancelling that progress closes the generator, which stops generation. `codeqa.ask`,
`codeqa.explain` and `codeqa.conversation.continue` all answer this way; `codeqa.search`
and `workspace/symbol` both rank hits across folders with `merged_search`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcRequestCancelled

from codeqa_lsp.answering.model import Answer
from codeqa_lsp.answering.sanitize import escape_preview
from codeqa_lsp.retrieval.model import SearchHit
from codeqa_lsp.server.arguments import RequestFailed, search_filters
from codeqa_lsp.server.convert import answer_json
from codeqa_lsp.server.protocol import current_command_params

if TYPE_CHECKING:
    from codeqa_lsp.engine import CodeBase
    from codeqa_lsp.server.app import CodeQAServer

logger = logging.getLogger(__name__)

PROGRESS_INTERVAL_SECONDS = 0.05


async def pick_codebase(
    ls: CodeQAServer, path_glob: str | None
) -> tuple[Path, CodeBase, str | None]:
    """The folder a question goes to (`FolderRegistry.workspace_for_glob`), once one is open."""
    await ls.folders.wait_open()
    picked = ls.folders.workspace_for_glob(path_glob)
    if picked is None:
        raise RequestFailed("no workspace folder is open (or its index could not be opened)")
    folder, codebase, glob = picked
    return folder.root, codebase, glob


StreamFactory = Callable[[threading.Event], Iterator[str | Answer]]


def _consume(
    make_stream: StreamFactory, emit: Callable[[str], None], cancel: threading.Event
) -> Answer | None:
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
            ls.work_done_progress.report(
                token, types.WorkDoneProgressReport(message="".join(partial))
            )

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


def merged_search(
    ls: CodeQAServer, query: str, top_k: int, path: str | None = None, language: str | None = None
) -> list[tuple[Path, SearchHit]]:
    """(read pool) Search every ready folder; best hits first across folders."""
    hits: list[tuple[Path, SearchHit]] = []
    for folder, codebase in ls.folders.ready():
        try:
            response = codebase.search(query, top_k=top_k, filters=search_filters(path, language))
        except Exception:
            logger.exception("search in %s failed", folder.root)
            continue
        hits.extend((folder.root, hit) for hit in response.hits)
    hits.sort(key=lambda pair: pair[1].score, reverse=True)
    return hits[:top_k]
