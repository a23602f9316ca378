"""The sparse BM25 postings rank exactly as FTS5's bm25() does, before and after updates,
compactions, a backfill and a crash mid-write (real SQLite, real chunks of this project)."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from codeqa_lsp.chunking.chunker import chunk_source
from codeqa_lsp.config import Settings
from codeqa_lsp.index import sparse, stems
from codeqa_lsp.index.indexer import Indexer
from codeqa_lsp.index.sparse import CHUNKS, FILES
from codeqa_lsp.index.store import Store
from codeqa_lsp.index.tokens import query_terms

REPO = Path(__file__).resolve().parents[2]
# Real code: the index layer of this project (~20 files, ~600 chunks).
CORPUS = sorted((REPO / "codeqa_lsp" / "index").glob("*.py"))
QUESTIONS = (
    "where is the write transaction committed or rolled back",
    "how are sessions and session cookies stored",  # two phrases with one stem
    "which function splits camelCase identifiers into tokens",
    "read only database disk is full",
    "vector labels derived from chunk ids",
    "hnswlib index save atomically",
    "zzzunknownterm",
    "the",  # a stopword-only query keeps its tokens
)


def fill(store: Store, paths: list[Path]) -> None:
    with store.transaction() as conn:
        for path in paths:
            rel = path.relative_to(REPO).as_posix()
            store.insert_chunks(conn, chunk_source(rel, path.read_text("utf-8"), max_tokens=400))
            store.refresh_file_text(conn, rel)


def sparse_serves(store: Store) -> bool:
    """The postings can answer (the search is not silently falling back to FTS5)."""
    conn = store._reader()
    conn.execute("BEGIN")
    try:
        return all(store._sparse[s.id].snapshot(conn) is not None for s in (CHUNKS, FILES))
    finally:
        conn.execute("COMMIT")


def assert_same_ranking(store: Store, limit: int = 40) -> None:
    assert sparse_serves(store)
    for question in QUESTIONS:
        terms = query_terms(question)
        ours = [(c.id, s) for c, s in store.bm25_terms(terms, limit)]
        reference = [(c.id, s) for c, s in store.fts_bm25_terms(terms, limit)]
        _same(ours, reference, question)
        _same(store.file_bm25(terms, limit), store.fts_file_bm25(terms, limit), question)
        # Each term's file count (feedback words, salient terms of a pasted issue); one term
        # FTS5 splits in two (`write_lock`) is counted as a phrase, by FTS5.
        words = [*terms, "write_lock", "zzzunknownterm"]
        assert store.file_document_counts(words) == store.fts_file_document_counts(words)


def _same(ours: list[tuple[str, float]], reference: list[tuple[str, float]], what: str) -> None:
    assert len(ours) == len(reference), what
    assert [s for _, s in ours] == pytest.approx([s for _, s in reference], rel=1e-9), what
    if not reference:
        return
    # Equal scores may come in any order; everything scored above the last one may not.
    last = reference[-1][1]
    mine = {doc for doc, s in ours if s > last * (1 + 1e-9)}
    theirs = {doc for doc, s in reference if s > last * (1 + 1e-9)}
    assert mine == theirs, what
    assert [d for d, s in ours if d in mine] == [d for d, s in reference if d in theirs], what


@pytest.fixture
def store(tmp_path: Path) -> Store:
    store = Store(tmp_path / "index.sqlite")
    fill(store, CORPUS)
    return store


def test_scores_equal_fts5_bm25_on_real_code(store: Store) -> None:
    assert_same_ranking(store)  # all documents still pending: served from the delta
    with store.transaction() as conn:
        sparse.compact(conn, CHUNKS)
        sparse.compact(conn, FILES)
        assert sparse.delta_size(conn, CHUNKS) == 0
    assert_same_ranking(store)  # now from the base lists
    top = store.bm25_terms(query_terms(QUESTIONS[0]), 5)
    assert any(c.path.endswith("/store.py") for c, _ in top)


def test_deleted_file_loses_its_postings_and_the_rest_still_ranks_as_fts5(store: Store) -> None:
    with store.transaction() as conn:
        sparse.compact(conn, CHUNKS)
        sparse.compact(conn, FILES)
    target = "codeqa_lsp/index/stems.py"
    terms = ["stemmer"]  # `Stemmer` is defined only there (and named in sparse*.py docs)
    assert any(c.path == target for c, _ in store.bm25_terms(terms, 50))
    with store.transaction() as conn:
        store.delete_file(conn, target)
    assert all(c.path != target for c, _ in store.bm25_terms(terms, 50))
    assert all(p != target for p, _ in store.file_bm25(terms, 50))
    assert_same_ranking(store)  # deleted base documents are masked
    with store.transaction() as conn:
        sparse.compact(conn, CHUNKS)
        sparse.compact(conn, FILES)
    conn = store._reader()
    docs = conn.execute("SELECT count(*) FROM sparse_docs WHERE space = 0").fetchone()[0]
    assert docs == store.chunk_count()
    assert conn.execute("SELECT count(*) FROM sparse_pending").fetchone()[0] == 0
    live = {doc for (doc,) in conn.execute("SELECT doc FROM sparse_docs")}
    for (blob,) in conn.execute("SELECT docs FROM sparse_postings"):
        assert set(np.frombuffer(blob, dtype=np.int32).tolist()) <= live  # no dead entries
    assert all(c.path != target for c, _ in store.bm25_terms(terms, 50))
    assert_same_ranking(store)
    # Re-adding it after the compaction: found again, from the delta.
    fill(store, [REPO / target])
    assert any(c.path == target for c, _ in store.bm25_terms(terms, 50))
    assert_same_ranking(store)


def test_saves_through_the_indexer_keep_the_postings_exact(
    make_workspace: Callable[..., Path], hash_settings: Callable[[str], Settings]
) -> None:
    root = make_workspace(files=5)
    indexer = Indexer(root, hash_settings("index"))
    try:
        indexer.index()
        store = indexer.store
        assert sparse.delta_size(store._reader(), CHUNKS) == 0  # the run compacted at its end
        hits = store.bm25_terms(["session3"], 10)
        assert hits and hits[0][0].path == "pkg/mod3.py"
        source = root / "pkg" / "mod3.py"
        source.write_text(source.read_text("utf-8").replace("Session3", "Gateway3"), "utf-8")
        indexer.update_file("pkg/mod3.py")
        assert store.bm25_terms(["session3"], 10) == []
        assert store.bm25_terms(["gateway3"], 10)[0][0].path == "pkg/mod3.py"
        (root / "pkg" / "mod4.py").unlink()
        indexer.remove_file("pkg/mod4.py")
        assert store.bm25_terms(["session4"], 10) == []
        assert store.file_bm25(["session4"], 10) == []
        for terms in (["session", "send", "request"], ["compute", "total", "scale"]):
            _same(
                [(c.id, s) for c, s in store.bm25_terms(terms, 30)],
                [(c.id, s) for c, s in store.fts_bm25_terms(terms, 30)],
                str(terms),
            )
            _same(store.file_bm25(terms, 30), store.fts_file_bm25(terms, 30), str(terms))
    finally:
        indexer.close()


def test_an_index_from_before_the_postings_is_backfilled(tmp_path: Path) -> None:
    path = tmp_path / "index.sqlite"
    fill(Store(path), CORPUS)
    old = sqlite3.connect(path)  # what an index written by the previous version holds
    old.executescript(
        "DROP TABLE sparse_docs; DROP TABLE sparse_pending; DROP TABLE sparse_postings; "
        "DELETE FROM meta WHERE key LIKE 'sparse%';"
    )
    old.close()
    reopened = Store(path)
    assert reopened.get_meta(sparse.SPARSE_READY) == sparse.SPARSE_FORMAT
    assert_same_ranking(reopened)


CRASH = """
import os, sys
from pathlib import Path
from codeqa_lsp.index import sparse
from codeqa_lsp.index.store import Store
store = Store(Path(sys.argv[1]))
store._writer.execute("PRAGMA cache_size = 5")  # spill pages to the WAL mid-transaction
with store.transaction() as conn:
    store.delete_file(conn, "codeqa_lsp/index/store.py")
    sparse.compact(conn, sparse.CHUNKS)
    sparse.compact(conn, sparse.FILES)
    os._exit(9)  # killed before COMMIT
"""


def test_a_crash_mid_write_leaves_the_postings_as_committed(tmp_path: Path) -> None:
    path = tmp_path / "index.sqlite"
    fill(Store(path), CORPUS)
    crashed = subprocess.run(
        [sys.executable, "-c", CRASH, str(path)], cwd=REPO, capture_output=True, text=True
    )
    assert crashed.returncode == 9, crashed.stderr
    reopened = Store(path)
    assert any(c.path.endswith("/store.py") for c, _ in reopened.bm25_terms(["writer"], 50))
    assert sparse.delta_size(reopened._reader(), CHUNKS) == reopened.chunk_count()
    assert_same_ranking(reopened)


def test_a_read_only_index_from_before_the_postings_ranks_with_fts5(tmp_path: Path) -> None:
    path = tmp_path / "index.sqlite"
    writer = Store(path)
    fill(writer, CORPUS)
    writer.close()
    old = sqlite3.connect(path)
    old.executescript(
        "DROP TABLE sparse_docs; DROP TABLE sparse_pending; DROP TABLE sparse_postings; "
        "DELETE FROM meta WHERE key LIKE 'sparse%';"
    )
    old.close()
    reader = Store(path, read_only=True)  # cannot backfill: FTS5 serves every query
    assert not sparse_serves(reader)
    terms = query_terms(QUESTIONS[0])
    hits = reader.bm25_terms(terms, 20)
    assert hits and hits == reader.fts_bm25_terms(terms, 20)
    assert reader.file_bm25(terms, 20) == reader.fts_file_bm25(terms, 20)


def test_the_stemmer_answers_across_a_cache_reset(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past CACHE_LIMIT the cache is replaced; a call that triggers the reset still gets
    every token's terms, as FTS5's porter tokenizer makes them."""
    monkeypatch.setattr(stems, "CACHE_LIMIT", 3)
    stemmer = stems.Stemmer()
    assert stemmer.terms(["sessions", "parsing"]) == {
        "sessions": ("session",),
        "parsing": ("pars",),
    }
    after_reset = stemmer.terms(t for t in ["sessions", "connections", "retries"])
    assert after_reset == {
        "sessions": ("session",),
        "connections": ("connect",),
        "retries": ("retri",),
    }
