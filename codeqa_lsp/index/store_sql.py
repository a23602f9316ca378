"""The SQLite schema of the local index and the row helpers its queries share.

Kept apart from `store.py` (the connection and write logic) and `text_search.py` (the BM25
queries) so each stays small; nothing here opens a connection.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from typing import Any

from codeqa_lsp.chunking.model import Chunk
from codeqa_lsp.index.filters import SearchFilters, path_spec

# The FTS5 tokenizer of both BM25 tables. `stems.py` stems with the same one, so the sparse
# postings (`sparse.py`) hold exactly the terms FTS5 matches.
FTS_TOKENIZER = "porter unicode61 remove_diacritics 2"

SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY, size INTEGER NOT NULL, mtime REAL NOT NULL, sha256 TEXT NOT NULL,
    indexed_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS chunks (
    rowid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, label INTEGER NOT NULL,
    path TEXT NOT NULL, symbol TEXT NOT NULL, name TEXT NOT NULL, kind TEXT NOT NULL,
    language TEXT NOT NULL, start_line INTEGER NOT NULL, end_line INTEGER NOT NULL,
    start_byte INTEGER NOT NULL, end_byte INTEGER NOT NULL, text TEXT NOT NULL,
    signature TEXT NOT NULL, doc TEXT NOT NULL, part INTEGER NOT NULL, parts INTEGER NOT NULL,
    declaration INTEGER NOT NULL DEFAULT 0, refs TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS chunks_path ON chunks(path, start_line);
CREATE INDEX IF NOT EXISTS chunks_name ON chunks(name);
CREATE INDEX IF NOT EXISTS chunks_label ON chunks(label);
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(
    path, symbol, doc, body, tokenize = '{FTS_TOKENIZER}'
);
CREATE VIRTUAL TABLE IF NOT EXISTS file_fts USING fts5(
    path, body, tokenize = '{FTS_TOKENIZER}'
);
CREATE TABLE IF NOT EXISTS file_paths (fts_rowid INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE);
"""
CHUNK_COLUMNS = (
    "path, symbol, kind, language, start_line, end_line, start_byte, end_byte, text, "
    "signature, doc, part, parts, declaration, refs"
)


# Keys per `IN (...)` list: well under SQLite's bound-parameter limit.
IN_BATCH = 500


def rows_in(
    conn: sqlite3.Connection, select: str, keys: Sequence[Any]
) -> Iterator[tuple[Any, ...]]:
    """The rows of `select` (ending in `IN ({marks})`) for `keys`, in batches of IN_BATCH."""
    for start in range(0, len(keys), IN_BATCH):
        part = list(keys[start : start + IN_BATCH])
        yield from conn.execute(select.format(marks=",".join("?" * len(part))), part)


def row_to_chunk(row: Sequence[Any]) -> Chunk:
    """A row of `CHUNK_COLUMNS` (refs are stored space-separated: they hold no spaces)."""
    (
        path,
        symbol,
        kind,
        language,
        start_line,
        end_line,
        start_byte,
        end_byte,
        text,
        signature,
        doc,
        part,
        parts,
        declaration,
        refs,
    ) = row
    return Chunk(
        path,
        symbol,
        kind,
        language,
        start_line,
        end_line,
        start_byte,
        end_byte,
        text,
        signature,
        doc,
        part,
        parts,
        bool(declaration),
        tuple(refs.split()),
    )


def glob_match(path: str, globs: str) -> int:
    return int(path_spec(tuple(globs.split("\n"))).match_file(path))


def where_clause(
    path: str | None = None,
    language: str | None = None,
    filters: SearchFilters | None = None,
    alias: str = "",
) -> tuple[str, list[Any]]:
    clauses: list[str] = []
    args: list[Any] = []
    if path is not None:
        clauses.append(f"{alias}path = ?")
        args.append(path)
    if language is not None:
        clauses.append(f"{alias}language = ?")
        args.append(language)
    if filters is not None:
        if filters.languages:
            clauses.append(f"{alias}language IN ({','.join('?' * len(filters.languages))})")
            args.extend(filters.languages)
        if filters.kinds:
            clauses.append(f"{alias}kind IN ({','.join('?' * len(filters.kinds))})")
            args.extend(filters.kinds)
        if filters.path_globs:
            clauses.append(f"globmatch({alias}path, ?)")
            args.append("\n".join(filters.path_globs))
    return ("WHERE " + " AND ".join(clauses), args) if clauses else ("", args)


class ReadsThroughStore:
    """Base of `Store`'s read mixins (`text_search.TextSearch`, `store_reads.ChunkQueries`):
    they need only the calling thread's read connection, which `Store` provides."""

    def _reader(self) -> sqlite3.Connection:
        raise NotImplementedError
