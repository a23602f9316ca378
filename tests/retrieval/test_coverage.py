"""Among the first results, the ones holding more of the question's rarer words gain
(`coverage.py`): the rule on real tree-sitter chunks, and through the real pipeline (SQLite
FTS5, hnswlib, the `hash` embedder)."""

from __future__ import annotations

from pathlib import Path

import pytest

from codeqa_lsp.chunking.chunker import chunk_source
from codeqa_lsp.chunking.model import Chunk
from codeqa_lsp.index.tokens import query_terms
from codeqa_lsp.retrieval import coverage
from codeqa_lsp.retrieval.coverage import WITHIN, coverage_lifted, words_held
from tests.retrieval.searchers import hash_searcher

CACHE = {
    "cache/evict.py": '''
def evict(cache):
    """Drop entries from the cache until it fits."""
    while cache.size > cache.limit:
        cache.pop_oldest()
''',
    "cache/expire.py": '''
def expire(cache, now):
    """Drop cache entries whose time to live has passed."""
    for key, entry in list(cache.items()):
        if entry.deadline <= now:
            del cache[key]
''',
    "cache/stale.py": '''
def sweep_stale(cache, now):
    """Remove stale entries: expired ones, oldest first, and count what was removed."""
    removed = 0
    for key in cache.by_age():
        if cache[key].deadline <= now:
            del cache[key]
            removed += 1
    return removed
''',
    "cache/store.py": '''
def store(cache, key, value, ttl):
    """Add an entry to the cache with a time to live."""
    cache[key] = Entry(value, deadline=clock() + ttl)
    evict(cache)
''',
    "cache/lookup.py": '''
def lookup(cache, key, now):
    """Read an entry from the cache; an expired entry reads as missing."""
    entry = cache.get(key)
    if entry is None or entry.deadline <= now:
        return None
    return entry.value
''',
    "cache/stats.py": '''
def stats(cache):
    """Counts of the cache: entries, hits and misses."""
    return {"entries": len(cache), "hits": cache.hits, "misses": cache.misses}
''',
}


def _chunk(path: str) -> Chunk:
    return next(c for c in chunk_source(path, CACHE[path].lstrip()) if c.kind == "function")


def test_a_word_is_held_by_its_stem() -> None:
    text = CACHE["cache/stale.py"]
    terms = query_terms("which code removes expired entries, counting them by parseArgs")
    # "removes" meets `removed`, "expired" and "entries" are there as written, "counting"
    # meets `count`; `parseArgs` and its parts are not in the text.
    assert words_held(text, terms) == {"removes", "expired", "entries", "counting"}
    assert words_held("def parseArgs(argv): ...", ["args", "parsing"]) == {"args", "parsing"}


def test_the_result_holding_more_of_the_questions_rare_words_rises() -> None:
    stale, expire, stats = (_chunk(f"cache/{n}.py") for n in ("stale", "expire", "stats"))
    question = "how are stale entries removed, oldest first"
    # Close scores: the one holding "stale", "removed" and "oldest" overtakes the others;
    # "entries", which all three hold, separates none of them.
    ranked = coverage_lifted([(expire, 1.0), (stats, 0.98), (stale, 0.95)], question)
    assert ranked[0][0] == stale
    # A lead wider than the coverage term can close stays.
    ranked = coverage_lifted([(expire, 1.0), (stats, 0.9), (stale, 0.5)], question)
    assert [c for c, _ in ranked] == [expire, stats, stale]


def test_only_the_first_results_are_rescored() -> None:
    stale, stats = _chunk("cache/stale.py"), _chunk("cache/stats.py")
    question = "how are stale entries removed"
    # Just below the first WITHIN, the result holding the question's words stays where it is ...
    filler = [(stats, 0.12 - i / 10000) for i in range(WITHIN)]
    ranked = coverage_lifted([*filler, (stale, 0.115)], question)
    assert ranked[-1][0] == stale
    assert len(ranked) == WITHIN + 1
    # ... and one place higher, among them, it would have led.
    ranked = coverage_lifted([*filler[:-1], (stale, 0.115)], question)
    assert ranked[0][0] == stale


def test_the_pipeline_orders_close_results_by_coverage(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    question = "which code removes expired cache entries and counts them"
    with hash_searcher(tmp_path, CACHE) as searcher:
        names = [h.chunk.symbol for h in searcher.search(question, top_k=6).hits]
        assert names[0] == "sweep_stale"
        # `expire` holds "expired" (by its stem) besides the words `store` holds too.
        assert names.index("expire") < names.index("store")
        monkeypatch.setattr(coverage, "WEIGHT", 0.0)
        names = [h.chunk.symbol for h in searcher.search(question, top_k=6).hits]
        assert names.index("store") < names.index("expire")  # the fused order, without it


LAZY = '''
class LazyTarget:
    """An output target created lazily: nothing exists on disk until the first write."""

    def convert(self, value, param, ctx):
        opened = Deferred(value, self.mode)
        ctx.call_on_close(opened.close_intelligently)
        return opened


def copy_handle(source, handle):
    """Copy everything from an open source handle into another handle for writing."""
    for block in source:
        handle.write(block)
'''


def test_a_method_holds_the_words_of_its_class_docstring() -> None:
    chunks = {c.symbol: c for c in chunk_source("types.py", LAZY.lstrip())}
    convert, copy = chunks["LazyTarget.convert"], chunks["copy_handle"]
    question = "why is nothing created on disk until the first write"
    # With its class among the candidates, the method speaks in the class's words (and the
    # class, first now, gives way to its members next: `classes.py`) ...
    ranked = coverage_lifted([(copy, 1.0), (chunks["LazyTarget"], 0.99), (convert, 0.98)], question)
    order = [c for c, _ in ranked]
    assert order.index(convert) < order.index(copy)
    # ... without it, only in its own: the function sharing "write" keeps the lead.
    ranked = coverage_lifted([(copy, 1.0), (convert, 0.98)], question)
    assert ranked[0][0] == copy
