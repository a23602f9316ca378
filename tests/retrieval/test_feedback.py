"""Pseudo-relevance feedback (`retrieval/feedback.py`): the dense arm's first chunks lend
their rare words to the BM25 arm. The pipeline test runs the real MiniLM on onnxruntime over
a real index (SQLite FTS5, hnswlib)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from codeqa_lsp.chunking.chunker import chunk_source
from codeqa_lsp.config import Settings
from codeqa_lsp.index.indexer import Indexer
from codeqa_lsp.retrieval.feedback import Feedback, feedback_for, feedback_terms
from codeqa_lsp.retrieval.search import HybridSearcher
from tests.local_model import needs_local_model, write_workspace

CACHE = '''
import heapq
import time


def evict_expired(store):
    """Throw away the entries whose time to live has passed."""
    now = time.monotonic()
    while store._ttl_heap and store._ttl_heap[0][0] <= now:
        _, key = heapq.heappop(store._ttl_heap)
        store._entries.pop(key, None)


def rebuild_ttl_heap(store):
    store._ttl_heap = [(expiry, key) for key, (expiry, _) in store._entries.items()]
    heapq.heapify(store._ttl_heap)
'''
OTHERS = {
    "colors.py": "def blend(a, b):\n    return tuple((x + y) / 2 for x, y in zip(a, b))\n",
    "paths.py": "def home_dir():\n    return os.path.expanduser('~')\n",
    "greet.py": "def greet(name):\n    return f'hello {name}, entries are open'\n",
}


def test_words_frequent_in_the_first_chunks_and_rare_in_the_index_come_first() -> None:
    chunks = chunk_source("cache.py", CACHE)
    by_name = {c.symbol: c for c in chunks}
    files = {"ttl": 1, "heap": 1, "store": 40, "key": 40, "entries": 2, "heapq": 1}

    def counts(terms: Sequence[str]) -> tuple[dict[str, int], int]:
        return {t: files.get(t, 50) for t in terms}, 50

    words = feedback_terms(
        "how are stale entries thrown away",
        [by_name["evict_expired"]],
        counts,
        Feedback(chunks=1, terms=3),
    )
    # `ttl` and `heap` are the chunk's own rare words; `entries` is the question's own.
    assert len(words) == 3 and {"ttl", "heap"} <= set(words) and "entries" not in words
    assert "store" not in words  # frequent in the chunk, but in most files
    # A remote model is semantic too.
    assert feedback_for("hash") is None
    assert feedback_for("local") == Feedback() and feedback_for("openai") == Feedback()


@needs_local_model
def test_the_bm25_arm_finds_what_shares_the_dense_arms_words_not_the_questions(
    tmp_path: Path,
) -> None:
    root = write_workspace(tmp_path / "ws", {"cache.py": CACHE, **OTHERS})
    settings = Settings(embedder="local", index_dir=str(tmp_path / "idx"))
    indexer = Indexer(root, settings)
    searcher = HybridSearcher(indexer, settings)
    try:
        indexer.index()
        question = "how do we get rid of stale records once their lifetime is over"
        on = searcher._run_arms(question, 50, None, "hybrid", indexer.coverage())
        assert on.dense and on.dense[0][0].symbol == "evict_expired"
        # `rebuild_ttl_heap` shares no word with the question, only the dense first chunk's.
        assert "rebuild_ttl_heap" in [c.symbol for c, _ in on.bm25]
        searcher.feedback = None
        off = searcher._run_arms(question, 50, None, "hybrid", indexer.coverage())
        assert "rebuild_ttl_heap" not in [c.symbol for c, _ in off.bm25]
        # A dense arm as sure as the point where fusion trusts it most gets no feedback.
        confidence = searcher.fusion.dense_confidence
        assert confidence is not None and on.dense[0][1] < confidence.high < 1.0
        searcher.feedback = Feedback()
        searcher.fusion = replace(
            searcher.fusion, dense_confidence=replace(confidence, high=on.dense[0][1])
        )
        sure = searcher._run_arms(question, 50, None, "hybrid", indexer.coverage())
        assert "rebuild_ttl_heap" not in [c.symbol for c, _ in sure.bm25]
    finally:
        searcher.close()
        indexer.close()
