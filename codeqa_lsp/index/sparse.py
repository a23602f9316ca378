"""A sparse BM25 index beside the FTS5 tables: per-term posting lists, kept in SQLite.

Why: FTS5 ranks with `bm25()` row by row, ~12 µs per matching row; a question OR-ing 11-18
terms matches 12k-44k of 100k chunks, so ranking alone cost ~30-110 ms a query (bench
`speed.py --latency`, large tree). The same BM25 computed from posting lists with numpy
(`sparse_read.py`) is a few vector operations per term.

What is stored (the same database and the same write transactions as the chunks and the FTS5
rows, so a crash or a rollback leaves the postings exactly as consistent as the FTS5 tables):

- `sparse_postings`: per (space, term) the *base* posting list: doc ids (int32, ascending)
  and the term's count in each FTS5 column (one row per doc, in the narrowest unsigned type
  that holds them: `width` bytes). Terms are FTS5's own terms (`stems.py`), so matching is
  exactly FTS5's.
- `sparse_docs`: one row per document: its FTS5 rowid (`key`), its length in tokens (as FTS5
  counts it) and a state: 0 in the base postings, 1 added since, 2 deleted since.
- `sparse_pending`: the terms of each document in state 1 or 2 (readers list the added ones
  in memory; compaction learns which lists a deleted one is in). Compaction empties it, so
  its pages return to SQLite's free list rather than bloating `sparse_docs`.
- `sparse_base`: per space, the base documents' ids, rowids and lengths as arrays, written by
  each compaction (a reader loads them in one row, not 100k: ~100 ms less at 100k chunks).
- meta `sparse_epoch` changes with every write (readers reload the small delta), and meta
  `sparse_base` with every compaction (readers reload the doc lengths).

Compaction folds the delta and the deletions into the base lists of the terms they touch,
in the writer's transaction (`Store.transaction`), once they are large enough.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from codeqa_lsp.index.stems import STEMMER

SPARSE_SCHEMA = """
CREATE TABLE IF NOT EXISTS sparse_docs (
    doc INTEGER PRIMARY KEY AUTOINCREMENT, space INTEGER NOT NULL, key INTEGER NOT NULL,
    state INTEGER NOT NULL, length INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS sparse_docs_key ON sparse_docs(space, key);
CREATE INDEX IF NOT EXISTS sparse_docs_state ON sparse_docs(space, state);
CREATE TABLE IF NOT EXISTS sparse_pending (
    doc INTEGER PRIMARY KEY, terms TEXT NOT NULL, tfs BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS sparse_postings (
    space INTEGER NOT NULL, term TEXT NOT NULL, docs BLOB NOT NULL, tfs BLOB NOT NULL,
    width INTEGER NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS sparse_postings_term ON sparse_postings(space, term);
CREATE TABLE IF NOT EXISTS sparse_base (
    space INTEGER PRIMARY KEY, docs BLOB NOT NULL, keys BLOB NOT NULL, lengths BLOB NOT NULL
);
"""
# Meta keys: set once the postings hold every FTS5 row (indexes built before them are
# backfilled on open); bumped on every write; bumped on every compaction.
SPARSE_READY = "sparse_ready"
# The layout version SPARSE_READY holds: postings of another layout are rebuilt on open (and
# ignored by a read-only open). 2: `sparse_base`.
SPARSE_FORMAT = "2"
EPOCH_KEY = "sparse_epoch"
BASE_KEY = "sparse_base"

BASE, ADDED, DELETED = 0, 1, 2

# Compact when the delta (added + deleted docs) exceeds this, except during a bulk index run,
# which compacts once at its end (each list is then written once). Measured on the 100k-chunk
# bench index: the first query after a write rebuilds the delta's lists, 4 ms with 300
# pending docs, 43 ms with 2,300; a compaction costs 1.0-1.7 s (2,000-7,000 pending docs),
# mostly rewriting the long lists of common terms, so it is worth batching.
COMPACT_MIN = 2_000


@dataclass(frozen=True)
class Space:
    """One FTS5 table mirrored by postings: its id in the sparse tables, its column count
    and the dtype of a pending document's term counts (a chunk is short: uint16, saturating;
    a whole file can repeat a term more than 65,535 times)."""

    id: int
    columns: int
    dtype: type[np.unsignedinteger]


CHUNKS = Space(0, 4, np.uint16)  # fts: path, symbol, doc, body
FILES = Space(1, 2, np.uint32)  # file_fts: path, body


Columns = Sequence[Sequence[str]]  # a document: the tokens of each of its FTS5 columns


def doc_terms(
    space: Space,
    columns: Columns,
    stems: dict[str, tuple[str, ...]] | None = None,
    per_column: list[Counter[str]] | None = None,
) -> tuple[list[str], np.ndarray, int]:
    """(terms, counts per term and column, length) of one document given its columns'
    tokens, counted as FTS5 counts them (after stemming; `stems` and the columns' token
    counts when already known)."""
    if per_column is None:
        per_column = [Counter(tokens) for tokens in columns]
    if stems is None:
        stems = STEMMER.terms(t for counts in per_column for t in counts)
    index: dict[str, int] = {}
    rows: list[list[int]] = []
    length = 0
    for column, counts in enumerate(per_column):
        for token, n in counts.items():
            for term in stems[token]:
                at = index.get(term)
                if at is None:
                    at = index[term] = len(rows)
                    rows.append([0] * space.columns)
                rows[at][column] += n
                length += n
    tfs = np.minimum(np.asarray(rows, dtype=np.int64).reshape(-1, space.columns), _TOP[space.dtype])
    return list(index), tfs.astype(space.dtype), length


def add_docs(conn: sqlite3.Connection, space: Space, docs: Sequence[tuple[int, Columns]]) -> None:
    """Add the documents (FTS5 rowid, column tokens); call in the transaction that inserts
    their rows. One stemming batch and one epoch bump for all of them."""
    if not docs:
        return
    counted = [[Counter(tokens) for tokens in columns] for _, columns in docs]
    stems = STEMMER.terms(set().union(*(c.keys() for cols in counted for c in cols)))
    pending = []
    for (key, columns), per_column in zip(docs, counted, strict=True):
        terms, tfs, length = doc_terms(space, columns, stems, per_column)
        cur = conn.execute(
            "INSERT INTO sparse_docs(space, key, state, length) VALUES (?,?,?,?)",
            (space.id, key, ADDED, length),
        )
        pending.append((cur.lastrowid, " ".join(terms), tfs.tobytes()))
    conn.executemany("INSERT INTO sparse_pending(doc, terms, tfs) VALUES (?,?,?)", pending)
    _bump(conn, EPOCH_KEY)


def remove_doc(
    conn: sqlite3.Connection, space: Space, key: int, columns: Sequence[Sequence[str]]
) -> None:
    """Remove the document of FTS5 rowid `key` (call in the transaction that deletes the
    row). `columns` is its tokens: a base document keeps its terms until compaction."""
    row = conn.execute(
        "SELECT doc, state FROM sparse_docs WHERE space = ? AND key = ? AND state != ?",
        (space.id, key, DELETED),
    ).fetchone()
    if row is None:
        return
    doc, state = row
    if state == ADDED:
        conn.execute("DELETE FROM sparse_docs WHERE doc = ?", (doc,))
        conn.execute("DELETE FROM sparse_pending WHERE doc = ?", (doc,))
    else:
        terms, tfs, _ = doc_terms(space, columns)
        conn.execute("UPDATE sparse_docs SET state = ? WHERE doc = ?", (DELETED, doc))
        conn.execute(
            "INSERT INTO sparse_pending(doc, terms, tfs) VALUES (?,?,?)",
            (doc, " ".join(terms), tfs.tobytes()),
        )
    _bump(conn, EPOCH_KEY)


def rebuild(conn: sqlite3.Connection) -> None:
    """All postings anew from the FTS5 tables' rows (the very token streams FTS5 indexed)."""
    for space, table, columns in (
        (CHUNKS, "fts", "path, symbol, doc, body"),
        (FILES, "file_fts", "path, body"),
    ):
        clear_space(conn, space)
        rows = conn.execute(f"SELECT rowid, {columns} FROM {table}")
        while batch := rows.fetchmany(1000):
            add_docs(conn, space, [(r[0], [col.split() for col in r[1:]]) for r in batch])
        compact(conn, space)
    conn.execute(
        "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (SPARSE_READY, SPARSE_FORMAT)
    )


def clear_space(conn: sqlite3.Connection, space: Space) -> None:
    """Drop every document of a space (its FTS5 table was emptied)."""
    conn.execute(
        "DELETE FROM sparse_pending WHERE doc IN (SELECT doc FROM sparse_docs WHERE space = ?)",
        (space.id,),
    )
    conn.execute("DELETE FROM sparse_docs WHERE space = ?", (space.id,))
    conn.execute("DELETE FROM sparse_postings WHERE space = ?", (space.id,))
    conn.execute("DELETE FROM sparse_base WHERE space = ?", (space.id,))
    _bump(conn, EPOCH_KEY)
    _bump(conn, BASE_KEY)


def maybe_compact(conn: sqlite3.Connection, bulk: bool = False, minimum: int = COMPACT_MIN) -> None:
    """Compact each space whose delta outgrew `minimum` (0: any pending document, the end of
    a bulk run); nothing during a bulk run (it compacts at its end: `Store.bulk_writes`)."""
    if bulk:
        return
    for space in (CHUNKS, FILES):
        if delta_size(conn, space) > minimum:
            compact(conn, space)


def delta_size(conn: sqlite3.Connection, space: Space) -> int:
    """Documents added or deleted since the last compaction."""
    return _count(conn, space, "state IN (1, 2)")


def _count(conn: sqlite3.Connection, space: Space, where: str) -> int:
    sql = f"SELECT count(*) FROM sparse_docs WHERE space = ? AND {where}"
    return int(conn.execute(sql, (space.id,)).fetchone()[0])


class Grouped:
    """Added documents' postings grouped by term, as flat arrays: a full index compacts
    ~4.4M postings at 100k chunks, too many for a Python object each; readers hold the
    documents added since the last compaction this way too."""

    def __init__(self, space: Space, rows: Sequence[tuple[int, str, bytes]]) -> None:
        vocab: dict[str, int] = {}
        ids: list[int] = []
        lengths: list[int] = []
        for _, terms, _ in rows:
            words = terms.split()
            ids.extend(vocab.setdefault(w, len(vocab)) for w in words)
            lengths.append(len(words))
        term_ids = np.asarray(ids, dtype=np.int64)
        docs = np.repeat(np.asarray([r[0] for r in rows], dtype=np.int32), lengths)
        tfs = np.frombuffer(b"".join(r[2] for r in rows), dtype=space.dtype)
        order = np.argsort(term_ids, kind="stable")  # stable: docs stay ascending per term
        self.docs = docs[order]
        self.tfs = tfs.reshape(-1, space.columns)[order]
        sorted_ids = term_ids[order]
        starts = np.flatnonzero(np.diff(sorted_ids, prepend=-1))
        ends = np.append(starts[1:], len(sorted_ids))[: len(starts)]
        names = list(vocab)
        self.spans = {
            names[int(sorted_ids[a])]: (int(a), int(b)) for a, b in zip(starts, ends, strict=True)
        }
        self._starts = starts
        self._narrow: tuple[dict[str, int], np.ndarray] | None = None

    def of(self, term: str) -> tuple[np.ndarray, np.ndarray] | None:
        span = self.spans.get(term)
        if span is None:
            return None
        return self.docs[span[0] : span[1]], self.tfs[span[0] : span[1]]

    def row(self, space: Space, term: str) -> tuple[int, str, bytes, bytes, int]:
        """The `sparse_postings` row of a term that only added documents hold: written
        straight from these arrays, in the narrowest type (~20 µs saved per list)."""
        if self._narrow is None:  # per term its largest count; all counts as bytes
            row_top = self.tfs.max(axis=1) if len(self.tfs) else np.zeros(0, space.dtype)
            tops = np.maximum.reduceat(row_top, self._starts) if len(self._starts) else row_top
            as_bytes = np.minimum(self.tfs, _TOP[np.uint8]).astype(np.uint8)
            self._narrow = (dict(zip(self.spans, tops.tolist(), strict=True)), as_bytes)
        top, as_bytes = self._narrow
        a, b = self.spans[term]
        if top[term] <= _TOP[np.uint8]:
            return (space.id, term, self.docs[a:b].tobytes(), as_bytes[a:b].tobytes(), 1)
        narrow = _narrowest(self.tfs[a:b])
        return (space.id, term, self.docs[a:b].tobytes(), narrow.tobytes(), narrow.itemsize)


def compact(conn: sqlite3.Connection, space: Space) -> None:
    """Fold added and deleted documents into the base lists of the terms they touch."""
    deleted: dict[str, list[int]] = {}
    added_rows: list[tuple[int, str, bytes]] = []
    for doc, _key, state, _length, terms, blob in pending_rows(conn, space):
        if state == DELETED:
            for term in terms.split():
                deleted.setdefault(term, []).append(doc)
        else:
            added_rows.append((doc, terms, blob))
    added = Grouped(space, added_rows)
    del added_rows
    in_base = {
        term
        for (term,) in conn.execute("SELECT term FROM sparse_postings WHERE space = ?", (space.id,))
    }
    writes: list[tuple[int, str, bytes, bytes, int]] = []
    drops: list[tuple[int, str]] = []
    for term in sorted(set(added.spans) | set(deleted)):
        if term not in in_base and term not in deleted:
            writes.append(added.row(space, term))
            continue
        if term in in_base:
            docs, tfs = read_postings(conn, space, term)
        else:
            docs, tfs = np.zeros(0, np.int32), np.zeros((0, space.columns), space.dtype)
        if term in deleted:
            keep = ~np.isin(docs, np.asarray(deleted[term], dtype=np.int32))
            docs, tfs = docs[keep], tfs[keep]
        new = added.of(term)
        if new is not None:  # added docs have higher ids than any base doc: order is kept
            docs = np.concatenate([docs, new[0]])
            tfs = np.concatenate([tfs.astype(space.dtype), new[1]])
        if len(docs):
            narrow = _narrowest(tfs)
            writes.append((space.id, term, docs.tobytes(), narrow.tobytes(), narrow.itemsize))
        else:
            drops.append((space.id, term))
    conn.executemany(
        "INSERT OR REPLACE INTO sparse_postings(space, term, docs, tfs, width) VALUES (?,?,?,?,?)",
        writes,
    )
    conn.executemany("DELETE FROM sparse_postings WHERE space = ? AND term = ?", drops)
    conn.execute(
        "DELETE FROM sparse_pending WHERE doc IN "
        "(SELECT doc FROM sparse_docs WHERE space = ? AND state IN (?, ?))",
        (space.id, ADDED, DELETED),
    )
    conn.execute("DELETE FROM sparse_docs WHERE space = ? AND state = ?", (space.id, DELETED))
    conn.execute(
        "UPDATE sparse_docs SET state = ? WHERE space = ? AND state = ?", (BASE, space.id, ADDED)
    )
    rows = conn.execute(
        "SELECT doc, key, length FROM sparse_docs WHERE space = ? ORDER BY doc", (space.id,)
    ).fetchall()
    table = np.asarray(rows, dtype=np.int64).reshape(-1, 3)
    conn.execute(
        "INSERT OR REPLACE INTO sparse_base(space, docs, keys, lengths) VALUES (?,?,?,?)",
        (space.id, table[:, 0].tobytes(), table[:, 1].tobytes(), table[:, 2].tobytes()),
    )
    _bump(conn, EPOCH_KEY)
    _bump(conn, BASE_KEY)


def read_postings(
    conn: sqlite3.Connection, space: Space, term: str
) -> tuple[np.ndarray, np.ndarray]:
    """The base posting list of `term`: (doc ids, counts per column)."""
    row = conn.execute(
        "SELECT docs, tfs, width FROM sparse_postings WHERE space = ? AND term = ?",
        (space.id, term),
    ).fetchone()
    if row is None:
        return np.zeros(0, dtype=np.int32), np.zeros((0, space.columns), dtype=space.dtype)
    docs = np.frombuffer(row[0], dtype=np.int32)
    counts = np.frombuffer(row[1], dtype=_WIDTHS[int(row[2])])
    return docs, counts.reshape(-1, space.columns)


def read_posting_docs(conn: sqlite3.Connection, space: Space, term: str) -> np.ndarray:
    """The doc ids of `term`'s base posting list (live or deleted since)."""
    row = conn.execute(
        "SELECT docs FROM sparse_postings WHERE space = ? AND term = ?", (space.id, term)
    ).fetchone()
    return np.frombuffer(row[0], dtype=np.int32) if row else np.zeros(0, dtype=np.int32)


def pending_rows(
    conn: sqlite3.Connection, space: Space
) -> list[tuple[int, int, int, int, str, bytes]]:
    """(doc, key, state, length, terms, counts) of the documents added or deleted since the
    last compaction, in doc order."""
    return conn.execute(
        "SELECT d.doc, d.key, d.state, d.length, p.terms, p.tfs FROM sparse_docs d "
        "JOIN sparse_pending p ON p.doc = d.doc WHERE d.space = ? AND d.state IN (?, ?) "
        "ORDER BY d.doc",
        (space.id, ADDED, DELETED),
    ).fetchall()


def read_counter(conn: sqlite3.Connection, key: str) -> int:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return int(row[0]) if row else 0


_WIDTHS: dict[int, type[np.unsignedinteger]] = {1: np.uint8, 2: np.uint16, 4: np.uint32}
_TOP = {dtype: int(np.iinfo(dtype).max) for dtype in _WIDTHS.values()}


def _narrowest(tfs: np.ndarray) -> np.ndarray:
    """The counts in the narrowest unsigned type that holds them: most lists fit in a byte
    (the chunk lists of the 100k-chunk bench index take half the space of uint16)."""
    top = int(tfs.max()) if tfs.size else 0
    for dtype, most in _TOP.items():
        if top <= most:
            return np.ascontiguousarray(tfs, dtype=dtype)
    raise ValueError(f"term count {top} does not fit in 32 bits")


def _bump(conn: sqlite3.Connection, key: str) -> None:
    conn.execute(
        "INSERT INTO meta(key, value) VALUES (?, '1') "
        "ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1",
        (key,),
    )


def read_base(conn: sqlite3.Connection, space: Space) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(doc ids, FTS5 rowids, lengths) of the base documents as of the last compaction
    (int64 each; empty before the first)."""
    row = conn.execute(
        "SELECT docs, keys, lengths FROM sparse_base WHERE space = ?", (space.id,)
    ).fetchone()
    if row is None:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    docs, keys, lengths = (np.frombuffer(blob, dtype=np.int64) for blob in row)
    return docs, keys, lengths
