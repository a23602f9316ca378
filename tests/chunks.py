"""A `Chunk` built by hand for tests of pure functions over chunks (priors, compounds,
snippets): its lines and bytes computed from its text."""

from __future__ import annotations

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
