"""A `Chunk` built by hand for tests of pure functions over chunks (priors, compounds,
snippets): its lines and bytes computed from its text."""

from __future__ import annotations

from codeqa_lsp.chunking.chunker import chunk_source
from codeqa_lsp.chunking.model import Chunk


def chunk_of(
    text: str,
    path: str = "src/mod.py",
    symbol: str = "f",
    kind: str = "function",
    language: str = "python",
    start_line: int = 1,
) -> Chunk:
    return Chunk(
        path=path,
        symbol=symbol,
        kind=kind,
        language=language,
        start_line=start_line,
        end_line=start_line + text.count("\n"),
        start_byte=0,
        end_byte=len(text.encode()),
        text=text,
    )


def chunks_by_symbol(path: str, text: str) -> dict[str, Chunk]:
    """The real tree-sitter chunks of `text` as the chunker writes them for `path`, by symbol."""
    return {c.symbol: c for c in chunk_source(path, text)}
