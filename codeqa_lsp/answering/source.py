"""`CodeSource`: everything answering needs from an indexed workspace, and nothing more.

Answering owns this interface and the engine implements it (`engine.CodeBase` passes
itself to the `Answerer`), so answering never imports the engine or reaches into the
index: a question goes engine → answering → (search, chunks, files through this
protocol) and never back up. Tests give answering a small in-memory source instead of an
index (`tests/answering/test_citation_source.py`).

Paths are workspace-relative with `/` separators, as in `Chunk.path`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from codeqa_lsp.chunking.model import Chunk
from codeqa_lsp.index.filters import SearchFilters
from codeqa_lsp.retrieval.model import SearchResponse, Use


class CodeSource(Protocol):
    def search(
        self, query: str, top_k: int | None = None, filters: SearchFilters | None = None
    ) -> SearchResponse:
        """Ranked chunks for a question, with the confidence verdict (the retrieval layer)."""
        ...

    def chunks(self, path: str | None = None, language: str | None = None) -> list[Chunk]:
        """Indexed chunks of a file (explain without buffer text)."""
        ...

    def get_chunks(self, ids: Sequence[str]) -> list[Chunk]:
        """Indexed chunks by id, in order, skipping ids no longer indexed (cached answers,
        callees)."""
        ...

    def definitions(self, name: str) -> list[Chunk]:
        """Indexed definitions whose symbol is `name` or ends with `.name` (callees)."""
        ...

    def uses(self, definition: Chunk, limit: int) -> list[Use]:
        """Indexed chunks whose code uses the definition's name, with the lines where they do
        (explain's callers; `retrieval/uses.py`)."""
        ...

    def chunk_text(self, path: str, text: str) -> list[Chunk]:
        """Chunks of `text` as the file `path`, cut now, not indexed (buffers, re-pointing a
        stale citation)."""
        ...

    def file_hash(self, path: str) -> str | None:
        """sha256 of the file's bytes when it was indexed; None when not indexed."""
        ...

    def read_file(self, path: str) -> bytes | None:
        """The file's bytes now, under the scanner's rules (inside the root, a regular file,
        the size cap); None when missing or refused."""
        ...

    def skip_reason(self, path: str) -> str | None:
        """Why the scanner would not index `path` (excluded, key file...), else None: such a
        file is never sent to a provider."""
        ...
