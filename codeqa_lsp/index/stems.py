"""The terms FTS5 indexes for our tokens, computed by FTS5 itself.

The sparse BM25 index (`sparse.py`) must hold exactly the terms the FTS5 tables match, or
its ranking would drift from theirs. Our tokens (`tokens.py`) are alphanumeric runs that
`unicode61` keeps whole, but the `porter` stemmer then rewrites them (`sessions` -> `session`,
`parsing` -> `pars`). Rather than re-implement SQLite's Porter variant and hope it agrees, we
ask SQLite: each unseen token is inserted into an in-memory FTS5 table with the same tokenizer
and read back through `fts5vocab`. A token maps to a tuple of terms (one, except for rare
non-ASCII runs that unicode61 splits or drops); results are cached, since a repository's
vocabulary is small next to its token count.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable

from codeqa_lsp.index.store_sql import FTS_TOKENIZER

# Distinct tokens remembered. The bench's 100k-chunk tree has ~230k distinct terms; beyond
# this the cache is cleared and refilled (10k unseen tokens cost ~50 ms to stem).
CACHE_LIMIT = 1_000_000


class Stemmer:
    """Thread-safe token -> FTS5 terms, backed by a private in-memory SQLite database."""

    def __init__(self) -> None:
        self._conn = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        self._conn.execute(f"CREATE VIRTUAL TABLE s USING fts5(t, tokenize = '{FTS_TOKENIZER}')")
        self._conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(s, 'instance')")
        self._cache: dict[str, tuple[str, ...]] = {}
        self._lock = threading.Lock()

    def terms(self, tokens: Iterable[str]) -> dict[str, tuple[str, ...]]:
        """The FTS5 terms of each distinct token."""
        wanted = set(tokens)
        cache = self._cache  # a reset may replace it meanwhile: read it once
        out = {t: cache[t] for t in wanted if t in cache}
        missing = list(wanted - out.keys())
        if missing:
            out.update(self._fill(missing))
        return out

    def _fill(self, tokens: list[str]) -> dict[str, tuple[str, ...]]:
        """Stem `tokens` through FTS5 and remember them; returns their terms."""
        with self._lock:
            if len(self._cache) + len(tokens) > CACHE_LIMIT:
                self._cache = {}
            conn = self._conn
            conn.execute("BEGIN")
            try:
                conn.executemany(
                    "INSERT INTO s(rowid, t) VALUES (?, ?)", list(enumerate(tokens, 1))
                )
                found: dict[int, list[str]] = {}
                for doc, term in conn.execute('SELECT doc, term FROM v ORDER BY doc, "offset"'):
                    found.setdefault(doc, []).append(term)
                conn.execute("DELETE FROM s")
            finally:
                conn.execute("COMMIT")
            stemmed = {token: tuple(found.get(i, ())) for i, token in enumerate(tokens, 1)}
            self._cache.update(stemmed)
            return stemmed


STEMMER = Stemmer()
