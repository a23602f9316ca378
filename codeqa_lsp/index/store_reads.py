"""Reads of chunk rows and their metadata: by id, label, name or path.

A mixin of `Store` (it needs only `_reader()`, the calling thread's read connection), kept
in its own module beside `text_search.py` so the store's connection and write logic stay
small.
"""

from __future__ import annotations

from collections.abc import Sequence

from codeqa_lsp.chunking.model import Chunk
from codeqa_lsp.index.store_sql import (
    CHUNK_COLUMNS,
    ReadsThroughStore,
    row_to_chunk,
    rows_in,
    where_clause,
)


class ChunkQueries(ReadsThroughStore):
    def definitions_in_paths(self, paths: Sequence[str]) -> list[tuple[str, str, str]]:
        """(id, path, symbol) of every first piece of a chunk in `paths`: cheap metadata for
        picking which chunks of a file to show when only the whole file matched."""
        if not paths:
            return []
        marks = ",".join("?" * len(paths))
        rows = self._reader().execute(
            f"SELECT id, path, symbol FROM chunks WHERE path IN ({marks}) AND part = 0 "
            "ORDER BY path, start_line",
            list(paths),
        )
        return [(cid, path, symbol) for cid, path, symbol in rows]

    def file_sizes(self, paths: Sequence[str]) -> dict[str, int]:
        """Size in bytes of each indexed file among `paths` (absent paths are left out)."""
        if not paths:
            return {}
        marks = ",".join("?" * len(paths))
        rows = self._reader().execute(
            f"SELECT path, size FROM files WHERE path IN ({marks})", list(paths)
        )
        return {path: int(size) for path, size in rows if size is not None and size > 0}

    def indexed_paths(self) -> list[str]:
        return [r[0] for r in self._reader().execute("SELECT path FROM files")]

    def existing_labels(self, labels: Sequence[int]) -> set[int]:
        select = "SELECT label FROM chunks WHERE label IN ({marks})"
        return {row[0] for row in rows_in(self._reader(), select, labels)}

    def all_labels(self) -> dict[int, str]:
        return {label: cid for cid, label in self._reader().execute("SELECT id, label FROM chunks")}

    def chunks_by_label(self, labels: Sequence[int]) -> dict[int, Chunk]:
        select = f"SELECT label, {CHUNK_COLUMNS} FROM chunks WHERE label IN ({{marks}})"
        return {row[0]: row_to_chunk(row[1:]) for row in rows_in(self._reader(), select, labels)}

    def get_chunks(self, ids: Sequence[str]) -> list[Chunk]:
        select = f"SELECT id, {CHUNK_COLUMNS} FROM chunks WHERE id IN ({{marks}})"
        unique = list(dict.fromkeys(ids))
        found = {row[0]: row_to_chunk(row[1:]) for row in rows_in(self._reader(), select, unique)}
        return [found[i] for i in ids if i in found]

    def chunks(self, path: str | None = None, language: str | None = None) -> list[Chunk]:
        where, args = where_clause(path=path, language=language)
        rows = self._reader().execute(
            f"SELECT {CHUNK_COLUMNS} FROM chunks {where} ORDER BY path, start_line, part", args
        )
        return [row_to_chunk(r) for r in rows]

    def ids_missing_labels(self, present: set[int]) -> list[str]:
        """Ids of chunks whose label is not in `present` (not embedded yet), in file order.
        Ids only: the texts are fetched batch by batch, so memory stays flat on big repos."""
        rows = self._reader().execute(
            "SELECT id, label FROM chunks ORDER BY path, start_line, part"
        )
        return [cid for cid, label in rows if label not in present]

    def definitions(self, name: str) -> list[Chunk]:
        last = name.rsplit(".", 1)[-1]
        rows = self._reader().execute(
            f"SELECT {CHUNK_COLUMNS} FROM chunks WHERE name = ? AND kind != 'module' "
            "ORDER BY path, start_line, part",
            (last,),
        )
        chunks = [row_to_chunk(r) for r in rows]
        return [c for c in chunks if c.symbol == name or c.symbol.endswith("." + name)]

    def graph_rows(self) -> list[tuple[str, str, str, str, int, int, str]]:
        """(id, path, symbol, kind, part, declaration, refs) of every chunk: what the call
        graph is built from, without the chunk texts."""
        return (
            self._reader()
            .execute(
                "SELECT id, path, symbol, kind, part, declaration, refs FROM chunks "
                "ORDER BY path, start_line, part"
            )
            .fetchall()
        )

    def generation(self) -> tuple[int, int]:
        """Changes whenever chunks are added or removed (count, highest rowid)."""
        row = (
            self._reader()
            .execute("SELECT count(*), coalesce(max(rowid), 0) FROM chunks")
            .fetchone()
        )
        return int(row[0]), int(row[1])
