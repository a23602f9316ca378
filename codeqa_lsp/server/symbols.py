"""`workspace/symbol`: hybrid search over chunks, so "parse config" finds `load_settings`.

Editors send a query per keystroke; an empty query (VS Code's first call) returns nothing
rather than the whole index.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types

from codeqa_lsp.server.convert import symbol_information
from codeqa_lsp.server.queries import merged_search

if TYPE_CHECKING:
    from codeqa_lsp.server.app import CodeQAServer

MAX_SYMBOLS = 50


async def workspace_symbol(
    ls: CodeQAServer, params: types.WorkspaceSymbolParams
) -> list[types.SymbolInformation]:
    query = params.query.strip()
    if not query:
        return []
    hits = await ls.run_read(merged_search, ls, query, MAX_SYMBOLS)
    return [symbol_information(root, hit.chunk) for root, hit in hits]


def register(server: CodeQAServer) -> None:
    server.feature(types.WORKSPACE_SYMBOL)(workspace_symbol)
