"""`workspace/executeCommand`: codeqa.ask / explain / search / status / reindex / showAnswer.

Thin handlers: arguments are validated by arguments.py (a mistake is a -32602 error showing
the expected shape), the folder that answers comes from the folder manager's one rule
(`workspace_for` / `workspace_for_glob`), and answers stream through queries.py.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from codeqa_lsp.answering.model import Answer
from codeqa_lsp.server.app import CodeQAServer
from codeqa_lsp.server.arguments import (
    RequestFailed,
    bad_arguments,
    command_object,
    declare_shapes,
    get_bool,
    get_int,
    get_position,
    get_str,
    request_id,
    search_filters,
)
from codeqa_lsp.server.buffers import document_text
from codeqa_lsp.server.convert import line_range, search_hit_json
from codeqa_lsp.server.queries import merged_search, pick_codebase, stream_answer

if TYPE_CHECKING:
    from codeqa_lsp.engine import CodeBase

logger = logging.getLogger(__name__)

ASK, EXPLAIN, SEARCH, STATUS, REINDEX, SHOW_ANSWER = (
    "codeqa.ask",
    "codeqa.explain",
    "codeqa.search",
    "codeqa.status",
    "codeqa.reindex",
    "codeqa.showAnswer",
)
declare_shapes(
    {
        ASK: "[{question: string, path?: string, language?: string, requestId?: string}]",
        EXPLAIN: "[{uri: string, position: {line: int, character: int}, requestId?: string}]",
        SEARCH: "[{query: string, topK?: int, path?: string, language?: string}]",
        STATUS: "[]",
        REINDEX: "[{force?: bool}]",
        SHOW_ANSWER: "[{uri: string, position: {line: int, character: int}}]",
    }
)
MAX_TOP_K = 100


# -- folder selection ------------------------------------------------------------------------------


async def codebase_for_uri(ls: CodeQAServer, command: str, uri: str) -> tuple[Path, CodeBase, Path]:
    """The folder that explains a file: `workspace_for`, but only for files inside a folder."""
    served = await ls.folders.wait_workspace_for(uri)
    if served is not None and served.rel is not None:
        return served.folder.root, served.codebase, served.path
    found = ls.folders.folder_for_uri(uri)
    if found is None:
        raise bad_arguments(command, f"'uri' {uri!r} is not a file in an open workspace folder")
    raise RequestFailed(f"the index of {found[0].name} is not open yet")


# -- commands (annotations must resolve at run time: pygls inspects them) -------------------------


async def ask(ls: CodeQAServer, *args: Any) -> dict[str, Any]:
    obj = command_object(ASK, args)
    question = get_str(ASK, obj, "question", required=True)
    assert question is not None
    path = get_str(ASK, obj, "path")
    language = get_str(ASK, obj, "language")
    rid = request_id(ASK, obj)
    root, codebase, glob = await pick_codebase(ls, path)
    filters = search_filters(glob, language)
    result, _ = await stream_answer(
        ls, root, lambda cancel: codebase.ask_stream(question, filters=filters, cancel=cancel), rid
    )
    return result


async def _explain(
    ls: CodeQAServer, command: str, obj: dict[str, Any]
) -> tuple[dict[str, Any], Answer, Path]:
    uri = get_str(command, obj, "uri", required=True)
    assert uri is not None
    position = get_position(command, obj)
    rid = request_id(command, obj)
    root, codebase, path = await codebase_for_uri(ls, command, uri)
    text = document_text(ls, uri)
    if text is None:
        raise RequestFailed(f"{uri} is not a readable text file")
    line_count = len(text.splitlines())
    if position.line >= max(line_count, 1):
        raise bad_arguments(
            command,
            f"position line {position.line} is past the end of the document ({line_count} lines)",
        )
    result, answer = await stream_answer(
        ls,
        root,
        lambda cancel: codebase.explain_stream(path, position.line + 1, text=text, cancel=cancel),
        rid,
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
        ls.spawn(offer_citations(ls, root, answer))
    return result


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
    force = get_bool(REINDEX, obj, "force")
    ls.folders.start_all(force=force)
    return {"started": bool(ls.folders.folders)}


def register(server: CodeQAServer) -> None:
    for name, handler in (
        (ASK, ask),
        (EXPLAIN, explain),
        (SEARCH, search),
        (STATUS, status),
        (REINDEX, reindex),
        (SHOW_ANSWER, show_answer),
    ):
        server.command(name)(handler)
