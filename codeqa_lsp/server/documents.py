"""What the user sees: unsaved buffer text, saves and file-system changes.

pygls keeps open documents in sync (didOpen / didChange / didClose); this module reads them
with a fallback to disk for documents the client never opened, and turns `didSave` and
`didChangeWatchedFiles` into index updates (debounced and queued by `FolderManager`).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from lsprotocol import types

from codeqa_lsp.config import Settings
from codeqa_lsp.server.convert import uri_to_path

if TYPE_CHECKING:
    from codeqa_lsp.server.app import CodeQAServer

logger = logging.getLogger(__name__)

# Beyond this a "document" is not source code a user is reading (minified bundles, data).
MAX_DOCUMENT_BYTES = 5_000_000


def document_text(ls: CodeQAServer, uri: str) -> str | None:
    """The open buffer's text, else the file on disk; None when neither is readable text."""
    if not isinstance(uri, str):
        return None
    try:
        opened = ls.workspace.text_documents.get(uri)
    except RuntimeError:  # not initialized
        return None
    if opened is not None:
        return opened.source
    # A document the client never opened is read from disk only inside a workspace folder,
    # by the scanner's rules (regular file, no FIFO/device, inside the root): a hover or code
    # lens request for `file:///etc/shadow` must not read it (issue 15).
    found = ls.folders.folder_for_uri(uri)
    if found is None:
        return None
    folder, path = found
    rel = folder.relpath(path)
    if rel is None:
        return None
    from codeqa_lsp.chunking.scanner import decode_source, read_at_answer_time

    data = read_at_answer_time(folder.root, rel, _document_limits())
    if data is None:
        return None
    text = decode_source(data)
    return None if "\x00" in text[:8192] else text  # binary


def _document_limits() -> Settings:
    return Settings(max_file_bytes=MAX_DOCUMENT_BYTES)


def line_at(text: str, line: int) -> str | None:
    lines = text.splitlines()
    return lines[line] if 0 <= line < len(lines) else None


async def did_save(ls: CodeQAServer, params: types.DidSaveTextDocumentParams) -> None:
    path = uri_to_path(params.text_document.uri)
    if path is not None:
        ls.folders.file_changed(path, "update")


async def did_change_watched_files(ls: CodeQAServer, params: types.DidChangeWatchedFilesParams) -> None:
    for change in params.changes:
        path = uri_to_path(change.uri)
        if path is None:
            continue
        ls.folders.file_changed(path, "remove" if change.type == types.FileChangeType.Deleted else "update")


def register(server: CodeQAServer) -> None:
    server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))(did_save)
    server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)(did_change_watched_files)
