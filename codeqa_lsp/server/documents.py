"""Saves and file-system changes: `didSave` and `didChangeWatchedFiles` become index updates.

pygls keeps open documents in sync (didOpen / didChange / didClose; buffers.py reads them);
this feature turns saves and watched-file events into index updates, debounced and queued
by the folder manager (save_queue.py).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from lsprotocol import types

from codeqa_lsp.server.convert import uri_to_path

if TYPE_CHECKING:
    from codeqa_lsp.server.app import CodeQAServer

logger = logging.getLogger(__name__)


async def did_save(ls: CodeQAServer, params: types.DidSaveTextDocumentParams) -> None:
    path = uri_to_path(params.text_document.uri)
    if path is not None:
        ls.folders.file_changed(path, "update")


async def did_change_watched_files(
    ls: CodeQAServer, params: types.DidChangeWatchedFilesParams
) -> None:
    for change in params.changes:
        path = uri_to_path(change.uri)
        if path is None:
            continue
        ls.folders.file_changed(
            path, "remove" if change.type == types.FileChangeType.Deleted else "update"
        )


def register(server: CodeQAServer) -> None:
    server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))(did_save)
    server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)(did_change_watched_files)
