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
- meta `sparse_epoch` changes with every write (readers reload the small delta), and meta
  `sparse_base` with every compaction (readers reload the doc lengths).

Compaction folds the delta and the deletions into the base lists of the terms they touch,
in the writer's transaction (`Store.transaction`), once they are large enough.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Iterable, Sequence
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
"""
# Meta keys: set once the postings hold every FTS5 row (indexes built before them are
# backfilled on open); bumped on every write; bumped on every compaction.
SPARSE_READY = "sparse_ready"
EPOCH_KEY = "sparse_epoch"
BASE_KEY = "sparse_base"

BASE, ADDED, DELETED = 0, 1, 2

# Compact when the delta (added + deleted docs) exceeds this, or half the base when that is
# larger (a full index then rewrites each list ~3 times in all, not once per batch). Readers
# rebuild the delta's in-memory lists after every write: 2,000 docs cost ~20 ms.
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


def doc_terms(space: Space, columns: Sequence[Sequence[str]]) -> tuple[list[str], np.ndarray, int]:
    """(terms, counts per term and column, length) of one document given its columns'
    tokens, counted as FTS5 counts them (after stemming)."""
    per_column = [Counter(tokens) for tokens in columns]
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
    limit = np.iinfo(space.dtype).max
    tfs = np.minimum(np.asarray(rows, dtype=np.int64).reshape(-1, space.columns), limit)
    return list(index), tfs.astype(space.dtype), length


def add_doc(
    conn: sqlite3.Connection, space: Space, key: int, columns: Sequence[Sequence[str]]
) -> None:
    """Add the document of FTS5 rowid `key` (call in the transaction that inserts the row)."""
    terms, tfs, length = doc_terms(space, columns)
    cur = conn.execute(
        "INSERT INTO sparse_docs(space, key, state, length) VALUES (?,?,?,?)",
        (space.id, key, ADDED, length),
    )
    conn.execute(
        "INSERT INTO sparse_pending(doc, terms, tfs) VALUES (?,?,?)",
        (cur.lastrowid, " ".join(terms), tfs.tobytes()),
    )
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


def clear_space(conn: sqlite3.Connection, space: Space) -> None:
    """Drop every document of a space (its FTS5 table was emptied)."""
    conn.execute(
        "DELETE FROM sparse_pending WHERE doc IN (SELECT doc FROM sparse_docs WHERE space = ?)",
        (space.id,),
    )
    conn.execute("DELETE FROM sparse_docs WHERE space = ?", (space.id,))
    conn.execute("DELETE FROM sparse_postings WHERE space = ?", (space.id,))
    _bump(conn, EPOCH_KEY)
    _bump(conn, BASE_KEY)


def maybe_compact(
    conn: sqlite3.Connection, bulk: bool = False, spaces: Iterable[Space] = (CHUNKS, FILES)
) -> None:
    """Compact each space whose delta outgrew `COMPACT_MIN` (and, during a bulk index run,
    half its base: the lists are then rewritten ~3 times in all, not once per batch; the
    run compacts what is left at its end)."""
    for space in spaces:
        delta = delta_size(conn, space)
        if delta <= COMPACT_MIN:
            continue
        if not bulk or delta > _count(conn, space, "state = 0") // 2:
            compact(conn, space)


def delta_size(conn: sqlite3.Connection, space: Space) -> int:
    """Documents added or deleted since the last compaction."""
    return _count(conn, space, "state IN (1, 2)")


def _count(conn: sqlite3.Connection, space: Space, where: str) -> int:
    sql = f"SELECT count(*) FROM sparse_docs WHERE space = ? AND {where}"
    return int(conn.execute(sql, (space.id,)).fetchone()[0])


def compact(conn: sqlite3.Connection, space: Space) -> None:
    """Fold added and deleted documents into the base lists of the terms they touch."""
    added: dict[str, list[tuple[int, np.ndarray]]] = {}
    deleted: dict[str, list[int]] = {}
    for doc, _key, state, _length, terms, blob in pending_rows(conn, space):
        if state == DELETED:
            for term in terms.split():
                deleted.setdefault(term, []).append(doc)
            continue
        tfs = np.frombuffer(blob, dtype=space.dtype).reshape(-1, space.columns)
        for term, row in zip(terms.split(), tfs, strict=True):
            added.setdefault(term, []).append((doc, row))
    for term in sorted(set(added) | set(deleted)):
        docs, tfs = read_postings(conn, space, term)
        if term in deleted:
            keep = ~np.isin(docs, np.asarray(deleted[term], dtype=np.int32))
            docs, tfs = docs[keep], tfs[keep]
        if term in added:  # added docs have higher ids than any base doc: order is kept
            new = added[term]
            docs = np.concatenate([docs, np.asarray([d for d, _ in new], dtype=np.int32)])
            tfs = np.concatenate([tfs.astype(space.dtype), np.stack([r for _, r in new])])
        if len(docs):
            narrow = _narrowest(tfs)
            conn.execute(
                "INSERT OR REPLACE INTO sparse_postings(space, term, docs, tfs, width) "
                "VALUES (?,?,?,?,?)",
                (space.id, term, docs.tobytes(), narrow.tobytes(), narrow.itemsize),
            )
        else:
            conn.execute(
                "DELETE FROM sparse_postings WHERE space = ? AND term = ?", (space.id, term)
            )
    conn.execute(
        "DELETE FROM sparse_pending WHERE doc IN "
        "(SELECT doc FROM sparse_docs WHERE space = ? AND state IN (?, ?))",
        (space.id, ADDED, DELETED),
    )
    conn.execute("DELETE FROM sparse_docs WHERE space = ? AND state = ?", (space.id, DELETED))
    conn.execute(
        "UPDATE sparse_docs SET state = ? WHERE space = ? AND state = ?", (BASE, space.id, ADDED)
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


def _narrowest(tfs: np.ndarray) -> np.ndarray:
    """The counts in the narrowest unsigned type that holds them: most lists fit in a byte
    (the chunk lists of the 100k-chunk bench index take half the space of uint16)."""
    top = int(tfs.max()) if tfs.size else 0
    for dtype in _WIDTHS.values():
        if top <= np.iinfo(dtype).max:
            return np.ascontiguousarray(tfs, dtype=dtype)
    raise ValueError(f"term count {top} does not fit in 32 bits")


def _bump(conn: sqlite3.Connection, key: str) -> None:
    conn.execute(
        "INSERT INTO meta(key, value) VALUES (?, '1') "
        "ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1",
        (key,),
    )
