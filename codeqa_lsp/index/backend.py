"""The storage interface retrieval reads through, and its two implementations.

`ChunkReader` is what a search, a definition lookup and citation checking need from an
index. Two stores implement it:

* local (the default, nothing to start): `Indexer`, SQLite (WAL) + FTS5 + hnswlib in the
  workspace's cache directory, written by `Indexer.index()` / `update_file()`;
* postgres (`store = postgresql://...`): `pg.snapshot.SharedSnapshot`, one published
  commit of the shared team index, written by `pg.publish.Publisher` (`codeqa index
  --store URL ROOT --ref main`).

The write sides differ on purpose: the local index follows the editor file by file, the
shared one is published from a clean checkout of a commit. `overlay.OverlayIndexer`
combines the two for a client: the shared snapshot for what HEAD shares with it, the local
index for what differs in the working tree. `tests/pgstore/test_store_contract.py` runs
the same behavioural tests against both.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from codeqa_lsp.chunking.model import Chunk
from codeqa_lsp.index.filters import SearchFilters


@runtime_checkable
class ChunkReader(Protocol):
    """`filters` narrow a search by language, path globs and kind (`filters.SearchFilters`)."""

    def chunks(self, path: str | None = None, language: str | None = None) -> list[Chunk]: ...

    def get_chunks(self, ids: Sequence[str]) -> list[Chunk]: ...

    def definitions(self, name: str) -> list[Chunk]: ...

    def file_hash(self, path: str) -> str | None: ...

    def bm25(
        self, query: str, limit: int, filters: SearchFilters | None = None
    ) -> list[tuple[Chunk, float]]: ...

    def dense_by_vector(
        self, vector: np.ndarray, limit: int, filters: SearchFilters | None = None
    ) -> list[tuple[Chunk, float]]: ...


def is_shared_store(value: str | None) -> bool:
    """Whether a `store` setting names the shared (Postgres) store; None/"" is local."""
    from codeqa_lsp.index.pg.dsn import is_store_url

    return bool(value) and is_store_url(value or "")
