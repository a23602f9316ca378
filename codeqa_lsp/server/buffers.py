"""The text a feature works on: the open buffer (unsaved edits included), else the file.

Shared by hover, code lens and explain, which must all see what the user sees; kept apart
from documents.py (a feature: saves and watched files) so features never import each other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from codeqa_lsp.config import Settings

if TYPE_CHECKING:
    from codeqa_lsp.server.app import CodeQAServer

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
