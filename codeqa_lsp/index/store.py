"""SQLite storage: files, chunks, FTS5 (BM25 over the code-aware token stream), metadata.

Concurrency model: one dedicated writer connection used under `write_lock` (writers are
serialized), and one read connection per thread. WAL mode lets readers run while a write
transaction is open, so hovers and searches are never blocked by a full index.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from codeqa_lsp.chunking.model import Chunk
from codeqa_lsp.index import sparse
from codeqa_lsp.index.sparse import CHUNKS, FILES, SPARSE_SCHEMA
from codeqa_lsp.index.sparse_read import SparseReader
from codeqa_lsp.index.store_reads import ChunkQueries
from codeqa_lsp.index.store_sql import CHUNK_COLUMNS, SCHEMA, glob_match, rows_in
from codeqa_lsp.index.text_search import TextSearch
from codeqa_lsp.index.tokens import tokenize

log = logging.getLogger(__name__)

# 2: `declaration` and `refs` columns (implementation over declaration; the call graph).
SCHEMA_VERSION = 2
# Meta key set once `file_fts` holds every file: indexes built before the table existed are
# backfilled from their chunks on open instead of being rebuilt.
FILE_FTS_READY = "file_fts_ready"


class StoreCorrupt(Exception):
    """The database cannot be used as is; the caller rebuilds it."""


class StoreUnwritable(Exception):
    """The database is fine but cannot be written now (disk full, read-only file or folder).

    Never a reason to rebuild: wiping an index because the disk is full used to destroy it
    (issue 15). The caller opens it read-only instead."""


class IndexReadOnly(OSError):
    """An index run was asked of an index that can only be read now (one-line message)."""


# SQLite primary result codes that mean "cannot write here", not "corrupt".
_UNWRITABLE_CODES = {3, 8, 10, 13, 14}  # PERM, READONLY, IOERR, FULL, CANTOPEN
_UNWRITABLE_TEXT = ("disk is full", "readonly", "read-only", "unable to open", "disk i/o error")


def is_unwritable(exc: BaseException) -> bool:
    """The error says the disk or file refuses writes (as opposed to corruption)."""
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int) and (code & 0xFF) in _UNWRITABLE_CODES:
        return True
    return any(text in str(exc).lower() for text in _UNWRITABLE_TEXT)


def label_for(chunk_id: str) -> int:
    """The hnswlib label of a chunk: 60 bits of its (hex, content-derived) id.

    Derived rather than allocated, so SQLite and the vector file can never disagree about
    which label means which chunk, whatever a crash interrupted."""
    return int(chunk_id[:15], 16)


class Store(TextSearch, ChunkQueries):
    def __init__(self, db_path: Path, read_only: bool = False) -> None:
        self.db_path = db_path
        self.read_only = read_only
        self.write_lock = threading.RLock()
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._connections_lock = threading.Lock()
        self._closed = False
        self._sparse = {space.id: SparseReader(space) for space in (CHUNKS, FILES)}
        self._bulk = False
        try:
            if read_only and not db_path.exists():
                raise StoreUnwritable(f"{db_path} does not exist and cannot be created")
            self._writer = self._connect()
            if not read_only:
                # Takes effect in a new database only: lets a bulk run hand back the pages
                # its pending postings used (`bulk_writes`): 10k chunks, 49 -> 42 MB.
                self._writer.execute("PRAGMA auto_vacuum=INCREMENTAL")
                self._writer.execute("PRAGMA journal_mode=WAL")
                self._writer.executescript(SCHEMA + SPARSE_SCHEMA)
            version = self.get_meta("schema_version")
            if version is None and read_only:
                raise StoreUnwritable(f"{db_path} holds no index yet and cannot be written")
            if version is None:
                self.set_meta("schema_version", str(SCHEMA_VERSION))
            elif version != str(SCHEMA_VERSION):
                raise StoreCorrupt(f"schema version {version} != {SCHEMA_VERSION}")
            check = self._writer.execute("PRAGMA quick_check").fetchone()
            if not check or check[0] != "ok":
                raise StoreCorrupt(f"integrity check failed: {check[0] if check else 'no result'}")
            if self.get_meta(FILE_FTS_READY) is None:
                self._backfill_file_fts()
            if self.get_meta(sparse.SPARSE_READY) != sparse.SPARSE_FORMAT and not read_only:
                self._backfill_sparse()
        except sqlite3.DatabaseError as exc:
            self.close()
            if is_unwritable(exc):
                raise StoreUnwritable(str(exc)) from exc
            raise StoreCorrupt(str(exc)) from exc
        except (StoreCorrupt, StoreUnwritable):
            self.close()
            raise

    # -- connections ---------------------------------------------------------------------
    def _connect(self) -> sqlite3.Connection:
        if self.read_only:
            conn = self._connect_read_only()
        else:
            conn = sqlite3.connect(
                str(self.db_path), timeout=30.0, isolation_level=None, check_same_thread=False
            )
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA busy_timeout=30000")
        conn.create_function("globmatch", 2, glob_match, deterministic=True)
        with self._connections_lock:
            self._connections.append(conn)
        return conn

    def _connect_read_only(self) -> sqlite3.Connection:
        """`mode=ro` reads the WAL database without writing; when even that fails (the
        `-shm` file could not be created on a full disk) `immutable=1` reads the main file
        alone, which holds everything once the last writer checkpointed on close."""
        uri = self.db_path.resolve().as_uri()
        for query in ("mode=ro", "mode=ro&immutable=1"):
            conn = sqlite3.connect(
                f"{uri}?{query}",
                uri=True,
                timeout=30.0,
                isolation_level=None,
                check_same_thread=False,
            )
            try:
                conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
                return conn
            except sqlite3.DatabaseError:
                conn.close()
                if "immutable" in query:
                    raise
        raise AssertionError("unreachable")

    def _reader(self) -> sqlite3.Connection:
        if self._closed:
            raise sqlite3.ProgrammingError("index is closed")
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._connect()
            self._local.conn = conn
        return conn

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction on the writer connection, serialized with other writers."""
        with self.write_lock:
            self._writer.execute("BEGIN IMMEDIATE")
            try:
                yield self._writer
                sparse.maybe_compact(self._writer, bulk=self._bulk)
            except BaseException:
                self._writer.execute("ROLLBACK")
                raise
            self._writer.execute("COMMIT")

    @contextmanager
    def bulk_writes(self) -> Iterator[None]:
        """Many transactions in a row (a full index run): the sparse postings are compacted
        once at the end instead of every `sparse.COMPACT_MIN` documents (each list is then
        written once), and the pages their pending rows used are handed back."""
        self._bulk = True
        try:
            yield
        finally:
            self._bulk = False
        with self.transaction() as conn:
            sparse.maybe_compact(conn, minimum=0)
        with self.write_lock:
            # executescript: a plain execute frees one page per step, i.e. one page.
            self._writer.executescript("PRAGMA incremental_vacuum;")

    def close(self) -> None:
        self._closed = True
        with self._connections_lock:
            connections, self._connections = self._connections, []
        for conn in connections:
            with suppress(sqlite3.Error):
                conn.close()

    # -- metadata ------------------------------------------------------------------------
    def get_meta(self, key: str) -> str | None:
        row = self._reader().execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str, conn: sqlite3.Connection | None = None) -> None:
        target = conn or self._writer
        with self.write_lock:
            target.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))

    def get_json(self, key: str, default: Any) -> Any:
        raw = self.get_meta(key)
        try:
            return json.loads(raw) if raw is not None else default
        except ValueError:
            return default

    # -- files ---------------------------------------------------------------------------
    def files(self) -> dict[str, tuple[int, float, str]]:
        rows = self._reader().execute("SELECT path, size, mtime, sha256 FROM files")
        return {path: (size, mtime, sha) for path, size, mtime, sha in rows}

    def file_hash(self, path: str, conn: sqlite3.Connection | None = None) -> str | None:
        row = (
            (conn or self._reader())
            .execute("SELECT sha256 FROM files WHERE path = ?", (path,))
            .fetchone()
        )
        return row[0] if row else None

    def upsert_file(
        self, conn: sqlite3.Connection, path: str, size: int, mtime: float, sha: str, now: float
    ) -> None:
        conn.execute(
            "INSERT OR REPLACE INTO files(path, size, mtime, sha256, indexed_at) VALUES "
            "(?,?,?,?,?)",
            (path, size, mtime, sha, now),
        )

    # -- chunks --------------------------------------------------------------------------
    def chunk_ids_for(self, path: str, conn: sqlite3.Connection | None = None) -> dict[str, int]:
        rows = (conn or self._reader()).execute(
            "SELECT id, label FROM chunks WHERE path = ?", (path,)
        )
        return dict(rows.fetchall())

    def insert_chunks(self, conn: sqlite3.Connection, chunks: Iterable[Chunk]) -> list[Chunk]:
        """Insert chunks (and their FTS rows); returns the ones actually inserted (an id that
        already exists, e.g. two identical definitions in one file, is stored once)."""
        inserted: list[Chunk] = []
        added: list[tuple[int, sparse.Columns]] = []
        for c in chunks:
            cur = conn.execute(
                f"INSERT OR IGNORE INTO chunks(id, label, name, {CHUNK_COLUMNS}) "
                "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    c.id,
                    label_for(c.id),
                    c.name,
                    c.path,
                    c.symbol,
                    c.kind,
                    c.language,
                    c.start_line,
                    c.end_line,
                    c.start_byte,
                    c.end_byte,
                    c.text,
                    c.signature,
                    c.doc,
                    c.part,
                    c.parts,
                    int(c.declaration),
                    " ".join(c.refs),
                ),
            )
            if cur.rowcount:
                columns = [
                    tokenize(c.path),
                    tokenize(f"{c.symbol} {c.signature}"),
                    tokenize(c.doc),
                    tokenize(c.text),
                ]
                conn.execute(
                    "INSERT INTO fts(rowid, path, symbol, doc, body) VALUES (?,?,?,?,?)",
                    (cur.lastrowid, *(" ".join(col) for col in columns)),
                )
                added.append((int(cur.lastrowid or 0), columns))
                inserted.append(c)
        sparse.add_docs(conn, CHUNKS, added)
        return inserted

    def refresh_kept(self, conn: sqlite3.Connection, chunks: Sequence[Chunk]) -> list[Chunk]:
        """Bring the stored rows of kept chunks up to date; returns those to replace whole.

        A chunk's id hashes its path, symbol and text only, so a kept chunk (same id) may
        still have moved: code added above it shifts its lines and bytes, and every citation
        would point at the old ones. A chunker change (`CHUNKER_VERSION`) may also re-derive
        its kind, signature, doc or `declaration` / `refs`. Positions and derived columns are
        rewritten here; a chunk whose kind, signature, doc or part count changed is returned,
        because those feed its keyword rows and its embedded text (`Chunk.embed_text`): the
        caller deletes and re-inserts it."""
        select = "SELECT id, kind, signature, doc, parts FROM chunks WHERE id IN ({marks})"
        stored = {row[0]: row[1:] for row in rows_in(conn, select, [c.id for c in chunks])}
        replace = [
            c for c in chunks if stored.get(c.id, ()) != (c.kind, c.signature, c.doc, c.parts)
        ]
        changed = {c.id for c in replace}
        conn.executemany(
            "UPDATE chunks SET language = ?, start_line = ?, end_line = ?, start_byte = ?, "
            "end_byte = ?, part = ?, declaration = ?, refs = ? WHERE id = ?",
            [
                (
                    c.language,
                    c.start_line,
                    c.end_line,
                    c.start_byte,
                    c.end_byte,
                    c.part,
                    int(c.declaration),
                    " ".join(c.refs),
                    c.id,
                )
                for c in chunks
                if c.id not in changed
            ],
        )
        return replace

    def delete_chunks(self, conn: sqlite3.Connection, ids: Iterable[str]) -> int:
        removed = 0
        for chunk_id in ids:
            row = conn.execute("SELECT rowid FROM chunks WHERE id = ?", (chunk_id,)).fetchone()
            if row:
                self._drop_fts_row(conn, row[0])
                conn.execute("DELETE FROM chunks WHERE rowid = ?", row)
                removed += 1
        return removed

    def forget_file_states(self, conn: sqlite3.Connection) -> None:
        """Make every file look changed, so the next index re-reads and re-chunks it."""
        conn.execute("UPDATE files SET size = -1, sha256 = ''")

    def delete_file(self, conn: sqlite3.Connection, path: str) -> list[int]:
        """Drop a file and its chunks; returns the removed chunks' vector labels."""
        rows = conn.execute("SELECT rowid, label FROM chunks WHERE path = ?", (path,)).fetchall()
        for rowid, _ in rows:
            self._drop_fts_row(conn, rowid)
        conn.execute("DELETE FROM chunks WHERE path = ?", (path,))
        conn.execute("DELETE FROM files WHERE path = ?", (path,))
        self._drop_file_text(conn, path)
        return [label for _, label in rows]

    # -- whole files -----------------------------------------------------------------------
    def refresh_file_text(self, conn: sqlite3.Connection, path: str) -> None:
        """Rewrite the whole-file BM25 row of `path` from its chunks (call after they change).

        Why a second FTS table: on long queries (pasted issues) a plain BM25 over whole files
        beats any ranking of chunks, because the evidence is spread over a file's functions.
        The row is built from the stored chunks, so it never needs the file from disk."""
        self._drop_file_text(conn, path)
        rows = conn.execute(
            "SELECT symbol, text FROM chunks WHERE path = ? ORDER BY start_line, part", (path,)
        ).fetchall()
        if rows:
            columns = [
                tokenize(path),
                [t for symbol, text in rows for t in tokenize(f"{symbol} {text}")],
            ]
            cur = conn.execute(
                "INSERT INTO file_fts(path, body) VALUES (?, ?)",
                tuple(" ".join(col) for col in columns),
            )
            conn.execute(
                "INSERT INTO file_paths(fts_rowid, path) VALUES (?, ?)", (cur.lastrowid, path)
            )
            sparse.add_docs(conn, FILES, [(int(cur.lastrowid or 0), columns)])

    def _drop_file_text(self, conn: sqlite3.Connection, path: str) -> None:
        row = conn.execute("SELECT fts_rowid FROM file_paths WHERE path = ?", (path,)).fetchone()
        if row:
            stored = conn.execute("SELECT path, body FROM file_fts WHERE rowid = ?", row).fetchone()
            if stored is not None:
                sparse.remove_doc(conn, FILES, row[0], [col.split() for col in stored])
            conn.execute("DELETE FROM file_fts WHERE rowid = ?", row)
            conn.execute("DELETE FROM file_paths WHERE fts_rowid = ?", row)

    def _drop_fts_row(self, conn: sqlite3.Connection, rowid: int) -> None:
        """Delete a chunk's FTS5 row and its postings (read back from the row itself: the
        tokens it was indexed with, whatever the tokenizer does today)."""
        stored = conn.execute(
            "SELECT path, symbol, doc, body FROM fts WHERE rowid = ?", (rowid,)
        ).fetchone()
        if stored is not None:
            sparse.remove_doc(conn, CHUNKS, rowid, [col.split() for col in stored])
        conn.execute("DELETE FROM fts WHERE rowid = ?", (rowid,))

    def _backfill_file_fts(self) -> None:
        with self.transaction() as conn:
            conn.execute("DELETE FROM file_fts")
            conn.execute("DELETE FROM file_paths")
            sparse.clear_space(conn, FILES)
            for (path,) in conn.execute("SELECT DISTINCT path FROM chunks").fetchall():
                self.refresh_file_text(conn, path)
            self.set_meta(FILE_FTS_READY, "1", conn)

    def _backfill_sparse(self) -> None:
        """The postings of an index made before them (once: 18 s at 100k chunks)."""
        log.info("building the sparse BM25 postings of %s", self.db_path)
        with self.transaction() as conn:
            sparse.rebuild(conn)

    # -- statistics ----------------------------------------------------------------------
    def chunk_count(self) -> int:
        return int(self._reader().execute("SELECT count(*) FROM chunks").fetchone()[0])

    def counts(self) -> tuple[int, int, dict[str, int]]:
        conn = self._reader()
        files = conn.execute("SELECT count(*) FROM files").fetchone()[0]
        langs = dict(
            conn.execute("SELECT language, count(*) FROM chunks GROUP BY language").fetchall()
        )
        return files, sum(langs.values()), langs
