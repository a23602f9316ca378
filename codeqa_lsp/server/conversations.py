"""Conversation commands: thin LSP wrappers over the engine's threads (answering/conversation.py).

- `codeqa.conversation.new` `[{title?}]` → the new thread
  `{id, title, client, created, updated, turns}`
- `codeqa.conversation.continue` `[{question, threadId?, path?, language?, requestId?}]` → the
  answer (as `codeqa.ask`, streamed the same way) plus `threadId`; without `threadId` the
  client's latest thread continues (a new one is started when it has none, or with
  `newThread: true`: the first question of a conversation)
- `codeqa.conversation.list` `[{client?: bool}]` → thread summaries, newest first (`client`:
  only this editor's)
- `codeqa.conversation.get` `[{threadId}]` → the thread with its turns (question, answer,
  citations) for history views
- `codeqa.conversation.clear` `[{threadId?}]` → `{cleared: n}` (all threads without an id)

Threads belong to a workspace folder (stored next to its index); a thread id is looked up in
every open folder.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from codeqa_lsp.server.app import CodeQAServer
from codeqa_lsp.server.arguments import (
    RequestFailed,
    command_object,
    declare_shapes,
    get_bool,
    get_str,
    request_id,
    search_filters,
)
from codeqa_lsp.server.queries import pick_codebase, stream_answer

if TYPE_CHECKING:
    from codeqa_lsp.answering.conversation import Thread
    from codeqa_lsp.engine import CodeBase

NEW, CONTINUE, LIST, GET, CLEAR = (
    "codeqa.conversation.new",
    "codeqa.conversation.continue",
    "codeqa.conversation.list",
    "codeqa.conversation.get",
    "codeqa.conversation.clear",
)
declare_shapes(
    {
        NEW: "[{title?: string}]",
        CONTINUE: (
            "[{question: string, threadId?: string, newThread?: bool, path?: string, language?: "
            "string, requestId?: string}]"
        ),
        LIST: "[{client?: bool}]",
        GET: "[{threadId: string}]",
        CLEAR: "[{threadId?: string}]",
    }
)


def _with_root(root: Path, data: dict[str, Any]) -> dict[str, Any]:
    return {**data, "root": str(root)}


async def _find(ls: CodeQAServer, thread_id: str) -> tuple[Path, CodeBase, Thread] | None:
    await ls.folders.wait_open()
    for folder, codebase in ls.folders.ready():
        thread = await ls.run_read(codebase.conversations.get, thread_id)
        if thread is not None:
            return folder.root, codebase, thread
    return None


async def new(ls: CodeQAServer, *args: Any) -> dict[str, Any]:
    obj = command_object(NEW, args, required=False)
    title = get_str(NEW, obj, "title") or ""
    root, codebase, _ = await pick_codebase(ls, None)
    thread = await ls.run_read(codebase.conversations.new, title, ls.client_name)
    return _with_root(root, thread.summary())


async def continue_(ls: CodeQAServer, *args: Any) -> dict[str, Any]:
    obj = command_object(CONTINUE, args)
    question = get_str(CONTINUE, obj, "question", required=True)
    assert question is not None
    thread_id = get_str(CONTINUE, obj, "threadId")
    path = get_str(CONTINUE, obj, "path")
    language = get_str(CONTINUE, obj, "language")
    rid = request_id(CONTINUE, obj)
    new_thread = get_bool(CONTINUE, obj, "newThread")
    if thread_id:
        found = await _find(ls, thread_id)
        if found is None:
            raise RequestFailed(f"no conversation {thread_id!r} (it may have been cleared)")
        root, codebase, found_thread = found
        glob = path
        active_id = found_thread.id
    else:
        root, codebase, glob = await pick_codebase(ls, path)
        store = codebase.conversations
        latest = None if new_thread else await ls.run_read(store.latest, ls.client_name)
        if latest is None:
            latest = await ls.run_read(store.new, question, ls.client_name)
        active_id = latest.id
    filters = search_filters(glob, language)
    result, _ = await stream_answer(
        ls,
        root,
        lambda cancel: codebase.ask_in_thread_stream(
            question, active_id, filters=filters, cancel=cancel
        ),
        rid,
    )
    return {**result, "threadId": active_id}


async def list_(ls: CodeQAServer, *args: Any) -> list[dict[str, Any]]:
    obj = command_object(LIST, args, required=False)
    only_client = get_bool(LIST, obj, "client")
    await ls.folders.wait_open()
    summaries: list[dict[str, Any]] = []
    for folder, codebase in ls.folders.ready():
        threads = await ls.run_read(
            codebase.conversations.list, ls.client_name if only_client else None
        )
        summaries.extend(_with_root(folder.root, t.summary()) for t in threads)
    return sorted(summaries, key=lambda s: s["updated"], reverse=True)


async def get(ls: CodeQAServer, *args: Any) -> dict[str, Any]:
    obj = command_object(GET, args)
    thread_id = get_str(GET, obj, "threadId", required=True)
    assert thread_id is not None
    found = await _find(ls, thread_id)
    if found is None:
        raise RequestFailed(f"no conversation {thread_id!r} (it may have been cleared)")
    root, _, thread = found
    return _with_root(root, thread.to_json())


async def clear(ls: CodeQAServer, *args: Any) -> dict[str, Any]:
    obj = command_object(CLEAR, args, required=False)
    thread_id = get_str(CLEAR, obj, "threadId")
    await ls.folders.wait_open()
    cleared = 0
    for _, codebase in ls.folders.ready():
        cleared += await ls.run_read(codebase.conversations.clear, thread_id)
    return {"cleared": cleared}


def register(server: CodeQAServer) -> None:
    for name, handler in (
        (NEW, new),
        (CONTINUE, continue_),
        (LIST, list_),
        (GET, get),
        (CLEAR, clear),
    ):
        server.command(name)(handler)
