"""BM25 from the sparse postings (`sparse.py`), exactly as FTS5's `bm25()` computes it.

FTS5 (fts5_aux.c) scores a row against phrases p as

    sum_p idf(p) * f(p) * (k1 + 1) / (f(p) + k1 * (1 - b + b * len / avgdl))

with k1 = 1.2, b = 0.75, f(p) the column-weighted count of p in the row, len the row's token
count over all columns, avgdl the table's mean, and idf(p) = log((N - n + 0.5) / (n + 0.5))
(1e-6 when not positive; n = rows containing p, N = rows). A query term that stems to the
same term as another is a second phrase and counts twice, as in FTS5. Scoring here is numpy
over the terms' posting lists: no per-row callback.

A reader keeps, per index, what a query needs beside the lists: doc lengths, FTS5 rowids, the
live documents and the in-memory lists of documents added since the last compaction. They are
reloaded when the meta counters say the index changed, inside the caller's read transaction,
so the lists and these arrays always come from one snapshot.
"""

from __future__ import annotations

import math
import sqlite3
import threading
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from codeqa_lsp.index import sparse
from codeqa_lsp.index.sparse import Space

K1 = 1.2  # FTS5's bm25() constants (sqlite ext/fts5/fts5_aux.c)
B = 0.75
# Serve from the postings only while the documents changed since the last compaction are
# few: their lists are rebuilt in memory after each write (2,300 docs: 43 ms once, at 100k
# chunks). More are pending only during a bulk index run (it compacts at its end) or after
# one was interrupted (the next write compacts, `sparse.COMPACT_MIN`); FTS5 ranks meanwhile.
DELTA_LIMIT = 5_000


@dataclass(frozen=True)
class _Base:
    """The documents of the base lists (live or deleted since), as of one compaction."""

    version: int
    docs: np.ndarray  # int64 doc ids
    keys: np.ndarray  # int64 FTS5 rowids
    lengths: np.ndarray  # float64 token counts


@dataclass(frozen=True)
class Snapshot:
    epoch: int
    base: int
    alive: np.ndarray  # bool by doc id
    keys: np.ndarray  # int64 FTS5 rowid by doc id
    lengths: np.ndarray  # float64 by doc id
    delta: sparse.Grouped  # the documents added since the last compaction, by term
    count: int  # live documents (FTS5's N)
    avgdl: float


class SparseReader:
    """Ranks one space of one index; thread-safe (snapshots are immutable)."""

    def __init__(self, space: Space) -> None:
        self.space = space
        self._lock = threading.Lock()
        self._base: _Base | None = None
        self._snapshot: Snapshot | None = None

    def snapshot(self, conn: sqlite3.Connection) -> Snapshot | None:
        """The state of the postings as `conn`'s open read transaction sees it; None when
        the postings cannot serve it (not built yet, or too many pending changes)."""
        try:
            ready = conn.execute(
                "SELECT value FROM meta WHERE key = ?", (sparse.SPARSE_READY,)
            ).fetchone()
            if ready is None or ready[0] != sparse.SPARSE_FORMAT:
                return None
            epoch = sparse.read_counter(conn, sparse.EPOCH_KEY)
            base = sparse.read_counter(conn, sparse.BASE_KEY)
            current = self._snapshot
            if current is not None and (current.epoch, current.base) == (epoch, base):
                return current
            with self._lock:
                if sparse.delta_size(conn, self.space) > DELTA_LIMIT:
                    return None
                snap = self._load(conn, epoch, base)
                self._snapshot = snap
                return snap
        except sqlite3.OperationalError:  # an index opened read-only from before postings
            return None

    def _load(self, conn: sqlite3.Connection, epoch: int, version: int) -> Snapshot:
        space = self.space
        base = self._base
        if base is None or base.version != version:
            docs, keys, lengths = sparse.read_base(conn, space)
            base = _Base(version, docs, keys, lengths.astype(np.float64))
            self._base = base
        pending = sparse.pending_rows(conn, space)
        top = max([int(base.docs.max()) if len(base.docs) else 0, *(r[0] for r in pending)])
        alive = np.zeros(top + 1, dtype=bool)
        keys = np.zeros(top + 1, dtype=np.int64)
        lengths = np.zeros(top + 1, dtype=np.float64)
        alive[base.docs] = True
        keys[base.docs] = base.keys
        lengths[base.docs] = base.lengths
        added = []
        for doc, key, state, length, terms, blob in pending:
            if state == sparse.DELETED:
                alive[doc] = False
            else:
                alive[doc], keys[doc], lengths[doc] = True, key, length
                added.append((doc, terms, blob))
        delta = sparse.Grouped(space, added)
        count = int(alive.sum())
        avgdl = float(lengths[alive].sum()) / count if count else 1.0
        return Snapshot(epoch, version, alive, keys, lengths, delta, count, avgdl)

    def document_count(self, conn: sqlite3.Connection, snap: Snapshot, term: str) -> int:
        """Live documents holding the FTS5 term `term` (FTS5's n of `idf`)."""
        docs = sparse.read_posting_docs(conn, self.space, term)
        extra = snap.delta.of(term)
        return int(np.count_nonzero(snap.alive[docs])) + (0 if extra is None else len(extra[0]))

    def rank(
        self,
        conn: sqlite3.Connection,
        snap: Snapshot,
        terms: Sequence[str],
        weights: Sequence[float],
        limit: int,
    ) -> list[tuple[int, float]]:
        """(FTS5 rowid, BM25 score) of the best `limit` documents matching any of `terms`
        (FTS5 terms, one phrase each), best first; ties in rowid order."""
        w = np.asarray(weights, dtype=np.float64)
        found_docs: list[np.ndarray] = []
        found_scores: list[np.ndarray] = []
        for term in terms:
            docs, tfs = sparse.read_postings(conn, self.space, term)
            if len(docs):
                live = snap.alive[docs]
                docs, tfs = docs[live], tfs[live]
            extra = snap.delta.of(term)
            if extra is not None:
                docs = np.concatenate([docs, extra[0]])
                tfs = np.concatenate([tfs, extra[1]])
            hits = len(docs)
            if not hits:
                continue
            idf = math.log((snap.count - hits + 0.5) / (hits + 0.5))
            idf = idf if idf > 0.0 else 1e-6
            freq = tfs @ w
            norm = K1 * (1.0 - B + B * snap.lengths[docs] / snap.avgdl)
            found_docs.append(docs)
            found_scores.append(idf * freq * (K1 + 1.0) / (freq + norm))
        if not found_docs or limit <= 0:
            return []
        docs = np.concatenate(found_docs)
        size = len(snap.alive)
        scores = np.bincount(docs, weights=np.concatenate(found_scores), minlength=size)
        matched = np.flatnonzero(np.bincount(docs, minlength=size))
        if len(matched) > limit:
            # Keep every document tied with the limit-th score, then order them by rowid.
            cut = np.partition(scores[matched], len(matched) - limit)[len(matched) - limit]
            matched = matched[scores[matched] >= cut]
        keys = snap.keys[matched]
        order = np.lexsort((keys, -scores[matched]))[:limit]
        return [(int(keys[i]), float(scores[matched[i]])) for i in order]
