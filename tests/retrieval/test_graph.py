"""The definition graph over a real index: resolved edges, PageRank, the search hook."""

from __future__ import annotations

from pathlib import Path

from codeqa_lsp.index.indexer import Indexer
from codeqa_lsp.retrieval.graph import DefinitionGraph
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
