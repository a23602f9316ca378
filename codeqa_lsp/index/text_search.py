"""BM25 over the local index: chunks (`fts`) and whole files (`file_fts`).

Ranked from the sparse postings (`sparse.py`, `sparse_read.py`) when they can serve the
query, else by FTS5's `bm25()`; both give the same scores (tests/index/test_sparse.py). FTS5
still serves filtered queries, terms that FTS5 splits into several tokens, and an index whose
postings are not built or have many pending changes.

A mixin of `Store` (it needs only `_reader()`, the calling thread's read connection, and
`_sparse`, the readers), kept in its own module so the store's connection and write logic
stay small.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

from codeqa_lsp.chunking.model import Chunk
from codeqa_lsp.index.filters import SearchFilters
from codeqa_lsp.index.sparse import CHUNKS, FILES, Space
from codeqa_lsp.index.sparse_read import Snapshot, SparseReader
from codeqa_lsp.index.stems import STEMMER
from codeqa_lsp.index.store_sql import (
    CHUNK_COLUMNS,
    ReadsThroughStore,
    row_to_chunk,
    where_clause,
)
from codeqa_lsp.index.tokens import fts_match_expression, query_terms

log = logging.getLogger(__name__)

# bm25() column weights, in FTS column order: path, symbol, doc, body. A hit in a name says
# more about what the chunk *is* than one in its body. Measured on the 100 eval questions
# (BM25 arm alone, hit@5 / MRR@10): all 1.0 → 0.65 / 0.521; (2, 5, 1.5, 1) → 0.64 / 0.520;
# (1, 5, 1, 1) → 0.66 / 0.522; heavier path/doc weights or a lighter body lose (0.57-0.62).
BM25_WEIGHTS = (1.0, 5.0, 1.0, 1.0)

# bm25() column weights of `file_fts` (path, body). A path that names the query's terms
# (`sessions.py` for "session cookies") is strong evidence for a whole file.
FILE_BM25_WEIGHTS = (2.0, 1.0)


class TextSearch(ReadsThroughStore):
    _sparse: dict[int, SparseReader]  # by space id (`Store` creates them)

    def _sparse_ranked(
        self, space: Space, terms: Sequence[str], weights: Sequence[float], limit: int, fetch: str
    ) -> list[tuple[float, tuple[object, ...]]] | None:
        """(score, row of `fetch` for the document's rowid) best first, from the postings;
        None when they cannot answer exactly as FTS5 would. `fetch` selects the rowid and the
        row by `rowid IN ({marks})`.

        One read transaction: the postings, the reader's arrays and the fetched rows are one
        snapshot, whatever a concurrent writer commits meanwhile."""
        stems = STEMMER.terms(t for t in terms if t)
        phrases = [stems[t] for t in terms if t]
        if any(len(p) != 1 for p in phrases):  # a phrase of several tokens: FTS5 semantics
            return None
        with self._postings(space) as (conn, reader, snap):
            if snap is None:
                return None
            ranked = reader.rank(conn, snap, [p[0] for p in phrases], weights, limit)
            keys = [key for key, _ in ranked]
            sql = fetch.format(marks=",".join("?" * len(keys)))
            rows = {row[0]: tuple(row[1:]) for row in conn.execute(sql, keys)} if keys else {}
            return [(score, rows[key]) for key, score in ranked if key in rows]

    @contextmanager
    def _postings(
        self, space: Space
    ) -> Iterator[tuple[sqlite3.Connection, SparseReader, Snapshot | None]]:
        """This thread's read connection in one read transaction, with `space`'s reader and
        its snapshot (None: the postings cannot serve): everything read inside is one state
        of the index, whatever a concurrent writer commits meanwhile."""
        conn = self._reader()
        conn.execute("BEGIN")
        try:
            reader = self._sparse[space.id]
            yield conn, reader, reader.snapshot(conn)
        finally:
            conn.execute("COMMIT")

    def file_bm25(self, terms: Sequence[str], limit: int) -> list[tuple[str, float]]:
        """(path, score) of the files best matching `terms` as one whole-file document."""
        expression = fts_match_expression(terms)
        if expression is None or limit <= 0:
            return []
        fetch = "SELECT fts_rowid, path FROM file_paths WHERE fts_rowid IN ({marks})"
        ranked = self._sparse_ranked(FILES, terms, FILE_BM25_WEIGHTS, limit, fetch)
        if ranked is not None:
            return [(str(row[0]), score) for score, row in ranked]
        return self.fts_file_bm25(terms, limit)

    def fts_file_bm25(self, terms: Sequence[str], limit: int) -> list[tuple[str, float]]:
        """`file_bm25` ranked by FTS5's `bm25()` (the fallback, and the reference in tests)."""
        expression = fts_match_expression(terms)
        if expression is None or limit <= 0:
            return []
        weights = ", ".join(str(w) for w in FILE_BM25_WEIGHTS)
        sql = (
            f"SELECT p.path, f.score FROM (SELECT rowid, -bm25(file_fts, {weights}) AS score "
            "FROM file_fts WHERE file_fts MATCH ? ORDER BY score DESC LIMIT ?) f "
            "JOIN file_paths p ON p.fts_rowid = f.rowid ORDER BY f.score DESC"
        )
        try:
            rows = self._reader().execute(sql, [expression, limit]).fetchall()
        except sqlite3.OperationalError as exc:
            log.debug("file bm25 query %r failed: %s", expression, exc)
            return []
        return [(path, float(score)) for path, score in rows]

    def file_document_counts(self, terms: Sequence[str]) -> tuple[dict[str, int], int]:
        """How many files contain each term, and the number of files (for IDF).

        From the sparse postings' list lengths when they serve the index: one short row read
        per term, where FTS5 counts by walking the term's whole doclist (the dense arm's
        feedback words, 30 a question, took 5.7 ms of FTS5 counts a search at 100k chunks,
        on the search's slowest path; `feedback.py`). Terms that FTS5 splits into several
        tokens are counted by FTS5, as is everything when the postings cannot serve."""
        with self._postings(FILES) as (conn, reader, snap):  # counts and total: one state
            if snap is None:
                return _file_counts(conn, terms, lambda term: _fts_file_count(conn, term))
            stems = STEMMER.terms(t for t in terms if t)

            def count(term: str) -> int | None:
                phrase = stems.get(term, ())
                if len(phrase) != 1:
                    return _fts_file_count(conn, term)
                return reader.document_count(conn, snap, phrase[0])

            return _file_counts(conn, terms, count)

    def fts_file_document_counts(self, terms: Sequence[str]) -> tuple[dict[str, int], int]:
        """`file_document_counts` counted by FTS5 alone (the reference in tests)."""
        conn = self._reader()
        return _file_counts(conn, terms, lambda term: _fts_file_count(conn, term))

    def labels_matching(self, filters: SearchFilters) -> set[int]:
        where, args = where_clause(filters=filters)
        return {r[0] for r in self._reader().execute(f"SELECT label FROM chunks {where}", args)}

    def bm25(
        self, query: str, limit: int, filters: SearchFilters | None = None
    ) -> list[tuple[Chunk, float]]:
        return self.bm25_terms(query_terms(query), limit, filters)

    def bm25_terms(
        self, terms: Sequence[str], limit: int, filters: SearchFilters | None = None
    ) -> list[tuple[Chunk, float]]:
        expression = fts_match_expression(terms)
        if expression is None or limit <= 0:
            return []
        if filters is None or filters.is_empty():
            fetch = f"SELECT rowid, {CHUNK_COLUMNS} FROM chunks WHERE rowid IN ({{marks}})"
            ranked = self._sparse_ranked(CHUNKS, terms, BM25_WEIGHTS, limit, fetch)
            if ranked is not None:
                return [(row_to_chunk(row), score) for score, row in ranked]
        return self.fts_bm25_terms(terms, limit, filters)

    def fts_bm25_terms(
        self, terms: Sequence[str], limit: int, filters: SearchFilters | None = None
    ) -> list[tuple[Chunk, float]]:
        """`bm25_terms` ranked by FTS5's `bm25()` (the fallback, and the reference in tests)."""
        expression = fts_match_expression(terms)
        if expression is None or limit <= 0:
            return []
        where, args = where_clause(filters=filters, alias="c.")
        where = f"AND {where[6:]}" if where else ""
        weights = ", ".join(str(w) for w in BM25_WEIGHTS)
        columns = ", ".join(f"c.{col.strip()}" for col in CHUNK_COLUMNS.split(","))
        if where:  # filters need the chunk columns while ranking
            sql = (
                f"SELECT -bm25(fts, {weights}) AS score, {columns} FROM fts "
                f"JOIN chunks c ON c.rowid = fts.rowid WHERE fts MATCH ? {where} "
                "ORDER BY score DESC LIMIT ?"
            )
        else:
            # Rank inside FTS first and join only the winners: sorting every match together
            # with its chunk text halves the speed at 100k chunks (92 → 46 ms a query).
            sql = (
                f"SELECT f.score, {columns} FROM (SELECT rowid, -bm25(fts, {weights}) AS score "
                "FROM fts WHERE fts MATCH ? ORDER BY score DESC LIMIT ?) f "
                "JOIN chunks c ON c.rowid = f.rowid ORDER BY f.score DESC"
            )
        try:
            rows = self._reader().execute(sql, [expression, *args, limit]).fetchall()
        except sqlite3.OperationalError as exc:  # a query FTS5 cannot parse finds nothing
            log.debug("bm25 query %r failed: %s", expression, exc)
            return []
        return [(row_to_chunk(r[1:]), float(r[0])) for r in rows]


def _file_counts(
    conn: sqlite3.Connection, terms: Sequence[str], count: Callable[[str], int | None]
) -> tuple[dict[str, int], int]:
    """Each term's file count by `count` (None: FTS5 rejected the term, left out), and the
    number of files."""
    total = int(conn.execute("SELECT count(*) FROM file_paths").fetchone()[0])
    counts = {term: n for term in terms if (n := count(term)) is not None}
    return counts, total


def _fts_file_count(conn: sqlite3.Connection, term: str) -> int | None:
    """Files whose `file_fts` row matches `term` as a phrase; None when FTS5 rejects it."""
    try:
        row = conn.execute(
            "SELECT count(*) FROM file_fts WHERE file_fts MATCH ?", (f'"{term}"',)
        ).fetchone()
    except sqlite3.OperationalError:
        return None
    return int(row[0])
