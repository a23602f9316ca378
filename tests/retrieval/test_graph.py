"""The definition graph over a real index: resolved edges, PageRank, the search hook."""

from __future__ import annotations

from pathlib import Path

import pytest

from codeqa_lsp.index.indexer import Indexer
from codeqa_lsp.retrieval import graph
from codeqa_lsp.retrieval.graph import DefinitionGraph
from codeqa_lsp.retrieval.search import HybridSearcher
from tests.index.test_callgraph import STORE, make_indexer


def _edges(indexer: Indexer) -> set[tuple[str, str]]:
    graph = DefinitionGraph(indexer.store.graph_rows())
    names = [d.symbol for d in graph.definitions]
    return {(names[s], names[t]) for s, t in graph.edges}


def test_calls_resolve_to_edges_by_scope(tmp_path: Path) -> None:
    indexer = make_indexer(tmp_path)
    try:
        edges = _edges(indexer)
        assert edges >= {
            ("Service.handle", "Service.validate"),
            ("Service.handle", "write"),  # through `import lib.log as log`
            ("Service.handle", "save_record"),  # through `from lib.store import save_record`
            ("save_record", "_commit"),
            ("Service.handle", "Service"),  # a method belongs to its class
        }
        assert not any(target in ("str", "print") for _, target in edges)
    finally:
        indexer.close()


def test_edges_follow_a_save(tmp_path: Path) -> None:
    indexer = make_indexer(tmp_path)
    try:
        changed = STORE.lstrip().replace("return _commit(record)", "return record")
        (indexer.root / "lib/store.py").write_text(changed, encoding="utf-8")
        indexer.update_file("lib/store.py")
        assert ("save_record", "_commit") not in _edges(indexer)
        assert ("Service.handle", "save_record") in _edges(indexer)
    finally:
        indexer.close()


def test_pagerank_ranks_the_shared_callee_highest(tmp_path: Path) -> None:
    indexer = make_indexer(tmp_path)
    try:
        graph = DefinitionGraph(indexer.store.graph_rows())
        importance = {d.symbol: float(graph.importance[i]) for i, d in enumerate(graph.definitions)}
        assert importance["_commit"] > importance["Service.handle"]  # called, calls onward
        assert max(importance.values()) == 1.0
    finally:
        indexer.close()


def test_search_lifts_the_neighbours_of_a_named_definition(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through the real searcher: `_commit` (called by the named `save_record`) gains."""
    indexer = make_indexer(tmp_path)
    searcher = HybridSearcher(indexer, indexer.settings)
    try:

        def score_of(symbol: str) -> float:
            hits = searcher.search("what happens after save_record is called", top_k=20).hits
            return next(h.score for h in hits if h.chunk.symbol == symbol)

        monkeypatch.setattr(graph, "NEIGHBOUR_BOOST", 0.0)
        monkeypatch.setattr(graph, "PAGERANK_WEIGHT", 0.0)
        plain = score_of("_commit")
        monkeypatch.setattr(graph, "NEIGHBOUR_BOOST", 0.3)
        assert score_of("_commit") > plain
        unrelated = score_of("write")  # not a neighbour of save_record: unchanged
        monkeypatch.setattr(graph, "NEIGHBOUR_BOOST", 0.0)
        assert score_of("write") == pytest.approx(unrelated)
    finally:
        searcher.close()
        indexer.close()
