"""`textDocument/codeLens`: an "Explain" lens above every function, method and class.

Lenses come from the chunker run on the *current buffer text* (`CodeBase.chunk_text`), not
from the index, so they sit on the right lines while the user types, before any save. The
lens command is `codeqa.showAnswer`, which works in any client (PROTOCOL.md).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from codeqa_lsp.server.buffers import document_text

if TYPE_CHECKING:
    from codeqa_lsp.server.app import CodeQAServer

logger = logging.getLogger(__name__)

LENS_KINDS = {"function", "method", "class"}
VSCODE_TITLE = "$(sparkle) Explain"
PLAIN_TITLE = "Explain this function"


def lens_title(client_name: str) -> str:
    """VS Code renders `$(sparkle)` as an icon; other clients would show it literally."""
    lowered = client_name.lower()
    return (
        VSCODE_TITLE
        if "visual studio code" in lowered or "vscod" in lowered or "code - oss" in lowered
        else PLAIN_TITLE
    )


def lens_command(title: str, uri: str, line: int) -> types.Command:
    argument: dict[str, Any] = {"uri": uri, "position": {"line": line, "character": 0}}
    return types.Command(title=title, command="codeqa.showAnswer", arguments=[argument])


def compute_lenses(ls: CodeQAServer, uri: str) -> list[types.CodeLens]:
    """(read pool) One lens per definition of the buffer, first line of each."""
    served = ls.folders.workspace_for(uri)
    if served is None:
        return []
    text = document_text(ls, uri)
    if not text:
        return []
    title = lens_title(ls.client_name)
    lenses = []
    for chunk in served.codebase.chunk_text(served.path, text):
        if chunk.kind not in LENS_KINDS or chunk.part > 0:
            continue
        line = chunk.start_line - 1
        lenses.append(
            types.CodeLens(
                range=types.Range(
                    start=types.Position(line=line, character=0),
                    end=types.Position(line=line, character=0),
                ),
                command=lens_command(title, uri, line),
                data={"uri": uri, "line": line},
            )
        )
    return lenses


async def code_lens(ls: CodeQAServer, params: types.CodeLensParams) -> list[types.CodeLens]:
    return await ls.run_read(compute_lenses, ls, params.text_document.uri)


async def code_lens_resolve(ls: CodeQAServer, lens: types.CodeLens) -> types.CodeLens:
    """Lenses are sent resolved; this fills in a command for clients that dropped it."""
    if lens.command is None and isinstance(lens.data, dict):
        uri, line = lens.data.get("uri"), lens.data.get("line")
        if isinstance(uri, str) and isinstance(line, int):
            lens.command = lens_command(lens_title(ls.client_name), uri, line)
    return lens


def register(server: CodeQAServer) -> None:
    server.feature(types.TEXT_DOCUMENT_CODE_LENS, types.CodeLensOptions(resolve_provider=True))(
        code_lens
    )
    server.feature(types.CODE_LENS_RESOLVE)(code_lens_resolve)
