"""`SharedSnapshot`: read one published commit of the shared index.

The read side of the Postgres store. Every query is scoped to one snapshot: a chunk row
counts when its (path, file sha) is the version the snapshot holds. Connections: one per
thread (psycopg serialises calls on one connection, and the search runs its two arms in
parallel threads), autocommit and read-only, with the short timeouts of `dsn.connect`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Sequence
from contextlib import suppress
from typing import Any

import numpy as np

from codeqa_lsp.chunking.model import Chunk
from codeqa_lsp.index.filters import SearchFilters
from codeqa_lsp.index.pg import dsn
from codeqa_lsp.index.pg.rows import (
    GLOB_OVERFETCH,
    SELECT_COLUMNS,
    chunk_from_row,
    filter_sql,
    in_snapshot,
    keep_matching,
    parse_vector,
    path_filter,
    vector_literal,
)
from codeqa_lsp.index.pg.schema import SCHEMA
from codeqa_lsp.index.pg.text_arm import TextArm
from codeqa_lsp.index.store import label_for
from codeqa_lsp.index.tokens import query_terms

# HNSW candidates per query. The index covers every stored version of the repository's
# files; rows of versions this snapshot does not hold (older or newer commits, kept until
# garbage collection, `gc`) are dropped after the index scan (pgvector 0.6 has no filtered
# or iterative scan). The first `limit` survivors of a distance-ordered candidate list are
# the snapshot's true nearest, so recall is lost only when fewer than `limit` survive; then
# the scan is repeated once with DENSE_WIDEN times the candidates (pgvector's maximum
# ef_search is 1000); a filter by language or kind takes the same second pass. Measured in
# BENCHMARKS.md ("Shared team index", many snapshots).
EF_SEARCH = 200
DENSE_WIDEN = 4
MAX_EF_SEARCH = 1000
# How often a reader checks that its snapshot still exists. Garbage collection (`gc`) never
# takes a snapshot younger than a day, but a server left open for days could otherwise read
# an empty, collected snapshot without knowing; one tiny query every few minutes finds out.
RECHECK_SECONDS = 300.0
# A server that stops answering altogether (frozen, a dead network path) never reaches its
# own statement timeout; past this the reader severs the connection itself, so a query
# fails over to the local index instead of holding an editor request. One second above
# the server-side timeout, so a merely slow statement is cancelled by Postgres first.
READ_DEADLINE_SECONDS = dsn.STATEMENT_TIMEOUT_MS / 1000 + 1


class SharedSnapshot:
    """One snapshot (repository x commit x embedding space) of the shared index."""

    def __init__(
        self, url: str, *, repo_id: int, space_id: int, dim: int, snapshot_id: int, commit: str
    ) -> None:
        self.url = url
        self.repo_id, self.space_id, self.dim = int(repo_id), int(space_id), int(dim)
        self.snapshot_id, self.commit = int(snapshot_id), commit
        self._local = threading.local()
        self._all: list[Any] = []
        self._busy: set[int] = set()  # ids of the connections a thread is reading from
        self._lock = threading.Lock()
        self._closed = False
        self.widened = 0  # dense scans repeated with more candidates (see DENSE_WIDEN)
        self._checked_at = time.monotonic()
        scope = (
            f"c.repo_id = {self.repo_id} AND c.space_id = {self.space_id} AND "
            f"{in_snapshot(self.snapshot_id)}"
        )
        self._scope = scope
        self.text = TextArm(
            lambda sql, args: self._rows(sql, args, prepare=False),
            repo_id=self.repo_id,
            space_id=self.space_id,
            snapshot_id=self.snapshot_id,
        )

    # -- connections ---------------------------------------------------------------------
    def _conn(self) -> Any:
        if self._closed:
            raise ConnectionError("shared index closed")
        conn = getattr(self._local, "conn", None)
        if conn is None or conn.closed:
            conn = dsn.connect(self.url, read_only=True)
            conn.execute(f"SET hnsw.ef_search = {EF_SEARCH}")
            self._local.conn = conn
            with self._lock:
                self._all.append(conn)
        return conn

    def _rows(
        self,
        sql: str,
        args: Sequence[Any] = (),
        ef_search: int = EF_SEARCH,
        prepare: bool | None = None,
    ) -> list[Any]:
        """The statement's rows. `prepare=False` for a statement whose text repeats with
        values its plan depends on: psycopg prepares a text run five times, and Postgres
        then may switch to a generic plan that no longer folds the parameters (the text
        scan took 115 ms instead of 67 at 1.1M chunks)."""
        import psycopg

        try:
            conn = self._conn()
            self._claim(conn)
            try:
                if time.monotonic() - self._checked_at > RECHECK_SECONDS:
                    self._check_exists(conn)
                watchdog = threading.Timer(READ_DEADLINE_SECONDS, _sever, (conn,))
                watchdog.daemon = True
                watchdog.start()
                try:
                    if ef_search == EF_SEARCH:
                        return conn.execute(sql, args, prepare=prepare).fetchall()
                    with conn.transaction():
                        conn.execute(f"SET LOCAL hnsw.ef_search = {int(ef_search)}")
                        return conn.execute(sql, args).fetchall()
                finally:
                    watchdog.cancel()
            finally:
                self._release(conn)
        except psycopg.Error as exc:
            conn = getattr(self._local, "conn", None)
            if conn is not None:
                with suppress(Exception):
                    conn.close()
                self._local.conn = None
            raise ConnectionError(
                f"shared index query failed: {dsn.redact(str(exc)).strip()}"
            ) from None

    def _check_exists(self, conn: Any) -> None:
        row = conn.execute(
            f"SELECT 1 FROM {SCHEMA}.snapshots WHERE id = %s AND state = 'ready'",
            (self.snapshot_id,),
        ).fetchone()
        if row is None:
            raise ConnectionError(
                f"the snapshot of {self.commit[:12]} was garbage-collected; re-index to read a "
                "newer one"
            )
        self._checked_at = time.monotonic()

    def _claim(self, conn: Any) -> None:
        """Mark `conn` in use by this thread, unless the snapshot was closed meanwhile."""
        with self._lock:
            if self._closed:
                raise ConnectionError("shared index closed")
            self._busy.add(id(conn))

    def _release(self, conn: Any) -> None:
        """Done with `conn`; closed here, by its own thread, if the snapshot closed while it
        was in use (`close`)."""
        with self._lock:
            self._busy.discard(id(conn))
            closing = self._closed
            if closing and conn in self._all:
                self._all.remove(conn)
        if closing:
            with suppress(Exception):
                conn.close()
            self._local.conn = None

    def close(self) -> None:
        """Close every idle connection; sever the ones a thread is reading from, which that
        thread closes when its read returns (`_release`). Finishing a libpq connection while
        another thread is inside it frees memory under that thread's feet: a query that
        lost the database closed the other search arm's connection mid-read, and a later
        allocation aborted the process (seen once in CI, in hnswlib's `knn_query`)."""
        with self._lock:
            self._closed = True
            busy = [conn for conn in self._all if id(conn) in self._busy]
            idle = [conn for conn in self._all if id(conn) not in self._busy]
            self._all = busy
        for conn in busy:
            _sever(conn)
        for conn in idle:
            with suppress(Exception):
                conn.close()

    # -- reads ---------------------------------------------------------------------------
    def files(self) -> dict[str, str]:
        rows = self._rows(
            f"SELECT path, sha256 FROM {SCHEMA}.snapshot_files WHERE snapshot_id = %s",
            (self.snapshot_id,),
        )
        return dict(rows)

    def file_hash(self, path: str) -> str | None:
        rows = self._rows(
            f"SELECT sha256 FROM {SCHEMA}.snapshot_files WHERE snapshot_id = %s AND path = %s",
            (self.snapshot_id, path),
        )
        return rows[0][0] if rows else None

    def chunk_count(self, exclude: Iterable[str] = ()) -> int:
        """Chunks in the snapshot, leaving out those of the `exclude` paths."""
        rows = self._rows(
            f"SELECT count(*) FROM {SCHEMA}.chunks c WHERE {self._scope} AND NOT (c.path = "
            "ANY(%s))",
            (list(exclude),),
        )
        return int(rows[0][0])

    def chunks(self, path: str | None = None, language: str | None = None) -> list[Chunk]:
        sql, args = "", []
        if path is not None:
            sql += " AND c.path = %s"
            args.append(path)
        if language is not None:
            sql += " AND c.language = %s"
            args.append(language)
        rows = self._rows(
            f"SELECT {SELECT_COLUMNS} FROM {SCHEMA}.chunks c WHERE {self._scope}{sql} "
            "ORDER BY c.path, c.start_line, c.part",
            args,
        )
        return [chunk_from_row(r) for r in rows]

    def get_chunks(self, ids: Sequence[str]) -> list[Chunk]:
        unique = list(dict.fromkeys(ids))
        if not unique:
            return []
        # Looked up by vector label (`label_for(id)`, indexed with the repository and space)
        # and checked by id: no index covers `id` alone, and a scan of every row of the
        # repository for each fetch cost 190 ms a search at 110k chunks.
        rows = self._rows(
            f"SELECT c.id, {SELECT_COLUMNS} FROM {SCHEMA}.chunks c WHERE {self._scope} "
            "AND c.label = ANY(%s) AND c.id = ANY(%s)",
            ([label_for(i) for i in unique], unique),
        )
        found = {r[0]: chunk_from_row(r[1:]) for r in rows}
        return [found[i] for i in ids if i in found]

    def definitions(self, name: str) -> list[Chunk]:
        last = name.rsplit(".", 1)[-1]
        rows = self._rows(
            f"SELECT {SELECT_COLUMNS} FROM {SCHEMA}.chunks c WHERE {self._scope} AND c.name = %s "
            "AND c.kind <> 'module' ORDER BY c.path, c.start_line, c.part",
            (last,),
        )
        chunks = [chunk_from_row(r) for r in rows]
        return [c for c in chunks if c.symbol == name or c.symbol.endswith("." + name)]

    def indexed_paths(self) -> list[str]:
        return sorted(self.files())

    def definitions_in_paths(self, paths: Sequence[str]) -> list[tuple[str, str, str]]:
        """(id, path, symbol) of the first piece of every chunk in `paths` (as the local store)."""
        if not paths:
            return []
        rows = self._rows(
            f"SELECT c.id, c.path, c.symbol FROM {SCHEMA}.chunks c WHERE {self._scope} "
            "AND c.path = ANY(%s) AND c.part = 0 ORDER BY c.path, c.start_line",
            (list(paths),),
        )
        return [(cid, path, symbol) for cid, path, symbol in rows]

    def file_sizes(self, paths: Sequence[str]) -> dict[str, int]:
        """Size in bytes of each file among `paths`, as far as its last chunk reaches (the
        snapshot stores chunks, not files): the second stage's rest-of-file share."""
        if not paths:
            return {}
        rows = self._rows(
            f"SELECT c.path, max(c.end_byte) FROM {SCHEMA}.chunks c WHERE {self._scope} "
            "AND c.path = ANY(%s) GROUP BY c.path",
            (list(paths),),
        )
        return {path: int(size) for path, size in rows if size}

    def file_document_counts(self, terms: Sequence[str]) -> tuple[dict[str, int], int]:
        """How many of the snapshot's files contain each term, and its number of files."""
        words = [t for t in dict.fromkeys(terms) if t.isalnum()]
        rows = (
            self._rows(
                f"SELECT t.term, count(DISTINCT c.path) FROM unnest(%s::text[]) AS t(term) "
                f"JOIN {SCHEMA}.chunks c ON c.tsv @@ to_tsquery('simple', lower(t.term)) "
                f"WHERE {self._scope} GROUP BY t.term",
                (words,),
            )
            if words
            else []
        )
        total = self._rows(
            f"SELECT files FROM {SCHEMA}.snapshots WHERE id = %s", (self.snapshot_id,)
        )
        counts = {term: 0 for term in words}
        counts.update({term: int(n) for term, n in rows})
        return counts, int(total[0][0]) if total else 0

    def file_bm25(self, terms: Sequence[str], limit: int) -> list[tuple[str, float]]:
        """(path, score) of the files best matching `terms` (`text_arm.TextArm.files`)."""
        return self.text.files(terms, limit)

    def bm25(
        self, query: str, limit: int, filters: SearchFilters | None = None
    ) -> list[tuple[Chunk, float]]:
        return self.bm25_terms(query_terms(query), limit, filters)

    def bm25_terms(
        self, terms: Sequence[str], limit: int, filters: SearchFilters | None = None
    ) -> list[tuple[Chunk, float]]:
        """Full-text ranking over the code-aware tokens (`text_arm.TextArm.chunks`)."""
        return self.text.chunks(terms, limit, filters)

    def dense_by_vector(
        self, vector: np.ndarray, limit: int, filters: SearchFilters | None = None
    ) -> list[tuple[Chunk, float]]:
        """Nearest chunks by cosine through the space's HNSW index."""
        if limit <= 0:
            return []
        where, args = filter_sql(filters)
        matches = path_filter(filters)
        fetch = limit * GLOB_OVERFETCH if matches else limit
        cast = f"vector({self.dim})"
        literal = vector_literal(vector)
        for candidates in (EF_SEARCH, min(MAX_EF_SEARCH, EF_SEARCH * DENSE_WIDEN)):
            # The inner query is exactly the partial HNSW index's shape (literal space and
            # repo, ORDER BY distance LIMIT), so the planner walks the graph; membership and
            # filters are checked on its candidates.
            rows = self._rows(
                f"SELECT 1 - c.distance AS score, {SELECT_COLUMNS} FROM ("
                f"SELECT *, embedding::{cast} <=> %s::{cast} AS distance FROM {SCHEMA}.chunks "
                f"WHERE space_id = {self.space_id} AND repo_id = {self.repo_id} "
                f"ORDER BY embedding::{cast} <=> %s::{cast} LIMIT {candidates}) c "
                f"WHERE {self._scope}{where} ORDER BY c.distance LIMIT %s",
                [literal, literal, *args, fetch],
                ef_search=candidates,
            )
            if len(rows) >= fetch:
                break
            self.widened += 1
        out = [(chunk_from_row(r[1:]), float(r[0])) for r in rows]
        return keep_matching(out, matches, limit)

    def vectors_by_label(self, labels: Iterable[int]) -> dict[int, np.ndarray]:
        """Stored vectors of some chunks of this snapshot, by vector label (`label_for`)."""
        unique = list(dict.fromkeys(int(label) for label in labels))
        if not unique:
            return {}
        rows = self._rows(
            f"SELECT c.label, c.embedding::text FROM {SCHEMA}.chunks c WHERE {self._scope} "
            "AND c.label = ANY(%s) AND c.embedding IS NOT NULL",
            (unique,),
        )
        return {int(label): parse_vector(text) for label, text in rows}


def _sever(conn: Any) -> None:
    """Shut the connection's socket down under libpq: its blocked read returns at once with
    an error (closing the connection from another thread is not safe; a shutdown is)."""
    import os
    import socket

    with suppress(Exception):
        sock = socket.socket(fileno=os.dup(conn.fileno()))
        try:
            sock.shutdown(socket.SHUT_RDWR)
        finally:
            sock.close()


def open_snapshot(
    url: str, *, repo: str, space: str, chunking: str, commits: Sequence[str]
) -> SharedSnapshot | None:
    """The ready snapshot of the first of `commits` (nearest first) published for this
    repository, embedding space and chunking; None when there is none."""
    if not commits:
        return None
    with dsn.connect(url, read_only=True) as conn:
        rows = conn.execute(
            f"SELECT s.id, s.commit, s.repo_id, s.space_id, sp.dim FROM {SCHEMA}.snapshots s JOIN "
            f"{SCHEMA}.repos r ON r.id = s.repo_id JOIN {SCHEMA}.spaces sp ON sp.id = s.space_id "
            "WHERE r.identity = %s AND sp.name = %s AND s.chunking = %s AND s.state = 'ready' AND "
            "s.commit = ANY(%s)",
            (repo, space, chunking, list(commits)),
        ).fetchall()
    by_commit = {row[1]: row for row in rows}
    for commit in commits:
        if commit in by_commit:
            sid, _, repo_id, space_id, dim = by_commit[commit]
            return SharedSnapshot(
                url, repo_id=repo_id, space_id=space_id, dim=dim, snapshot_id=sid, commit=commit
            )
    return None
