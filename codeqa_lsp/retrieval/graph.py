"""Code structure for ranking: declarations below implementations, and the call graph.

`adjust` is the one hook the searcher calls on its fused, prior-weighted candidate list:

1. a declaration (`Chunk.declaration`: stub, overload, abstract method) whose implementation
   is also a candidate is moved just below that implementation, whatever their scores
   (the prior in `priors.py` already halves it; this makes "below" hold when the stub
   matched more than twice as well, as a stub that repeats the docstring does), unless the
   query asks for stubs, signatures or overloads;
2. graph features over the definition graph (calls resolved by `index/callgraph.py`, plus
   class ↔ method): a PageRank importance prior as in aider's repo map, and a lift for the
   neighbours (callers, callees, class, methods) of the definitions the query names.
   Both are measured and switched off: a gain with the hash embedder, a loss with the local
   one (see the module constants).
"""

from __future__ import annotations

import logging
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING

import numpy as np

from codeqa_lsp.chunking.model import Chunk
from codeqa_lsp.index.callgraph import Definition, Resolver, calls_of, imports_of
from codeqa_lsp.retrieval.delegates import DELEGATE_SHARE, forwards_to
from codeqa_lsp.retrieval.priors import QueryPriors
from codeqa_lsp.retrieval.query import QueryInfo

if TYPE_CHECKING:
    from codeqa_lsp.index.indexer import Indexer

log = logging.getLogger(__name__)

# Multiplier range of the PageRank prior: score × (1 + PAGERANK_WEIGHT × importance), the
# importance in [0, 1] (log-scaled rank). Added to a neighbour (caller, callee, class,
# method) of a definition the query names: NEIGHBOUR_BOOST × the best score. Measured on the
# 100 questions (hash embedder, hybrid; hit@5 / MRR@10), graph off 0.73 / 0.557:
#   PageRank 0.1 → 0.73 / 0.563, 0.3 → 0.75 / 0.571, 0.5 → 0.75 / 0.583, 0.8 → 0.75 / 0.567;
#   neighbours alone 0.1 or 0.3 → 0.73 / 0.558;
#   PageRank 0.5 + neighbours 0.3 → 0.75 / 0.596 (0.6: 0.597, 1.0: 0.74 / 0.571);
#   PageRank 0.4 / 0.6 + neighbours 0.3 → 0.75 / 0.589 / 0.600.
# CoSQA dev (500, nDCG@10) 0.4033 off → 0.4034 at 0.5 / 0.3 (0.4006 at PageRank 0.8).
# The local embedder (the default) does not confirm it: off → 0.5 / 0.3, hit@5 / MRR@10,
# requests 0.88 / 0.621 → 0.92 / 0.638, click 0.76 / 0.550 → 0.72 / 0.514, express
# 0.84 / 0.687 → 0.84 / 0.640, rxjs 0.56 / 0.427 → 0.60 / 0.454; all 100: 0.76 / 0.571 →
# 0.77 / 0.562. So both are off (0.0) until a scorer that sees the arms'
# agreement can use them; the graph then is not even built (explain uses its own resolver).
PAGERANK_WEIGHT = 0.0
NEIGHBOUR_BOOST = 0.0
# Named definitions looked at (a common name defined fifty times names nothing).
MAX_NAMED = 5
# A graph rebuilt at most this often while the index keeps changing (saves in an editor):
# between rebuilds the previous graph serves, missing only the newest definitions.
REBUILD_SECONDS = 30.0
# Up to this many chunks the first graph is built while the first query waits; larger
# indexes build it in the background. Measured (2 cores, load 15): requests 825 chunks
# 0.36 s, CoSQA 6,377 chunks 1.5 s (fetch + build).
SYNC_BUILD_CHUNKS = 8_000
DAMPING = 0.85
ITERATIONS = 30


class DefinitionGraph:
    """Definitions (one node per path+symbol) and their edges, with PageRank importance."""

    def __init__(self, rows: Sequence[tuple[str, str, str, str, int, int, str]]) -> None:
        self.node_of: dict[str, int] = {}  # chunk id (any part) → node
        self.definitions: list[Definition] = []
        key_to_node: dict[tuple[str, str], int] = {}
        refs_by_node: dict[int, list[str]] = {}
        file_refs: dict[str, list[tuple[str, ...]]] = {}
        for chunk_id, path, symbol, kind, _part, declaration, refs in rows:
            split = tuple(refs.split())
            if kind == "module":
                file_refs.setdefault(path, []).append(split)
                continue
            node = key_to_node.get((path, symbol))
            if node is None:
                node = key_to_node[(path, symbol)] = len(self.definitions)
                self.definitions.append(Definition(chunk_id, path, symbol, kind, bool(declaration)))
            self.node_of[chunk_id] = node
            refs_by_node.setdefault(node, []).extend(split)
            file_refs.setdefault(path, []).append(split)
        self.by_name: dict[str, list[Definition]] = {}
        by_path: dict[str, list[Definition]] = {}
        for definition in self.definitions:
            self.by_name.setdefault(definition.name, []).append(definition)
            by_path.setdefault(definition.path, []).append(definition)
        edges: set[tuple[int, int]] = set()
        for path, in_file in by_path.items():
            resolver = Resolver(
                path,
                in_file,
                imports_of(file_refs.get(path, [])),
                lambda name: self.by_name.get(name, []),
            )
            for definition in in_file:
                source = key_to_node[(path, definition.symbol)]
                for call in dict.fromkeys(calls_of(refs_by_node.get(source, []))):
                    found = resolver.resolve(definition.symbol, call)
                    if found is not None:
                        target = key_to_node[(found.path, found.symbol)]
                        if target != source:
                            edges.add((source, target))
                owner = definition.symbol.rsplit(".", 1)[0] if "." in definition.symbol else None
                if owner is not None and (path, owner) in key_to_node:
                    edges.add((source, key_to_node[(path, owner)]))  # a method makes its class
        self.edges = sorted(edges)
        self.neighbours: dict[int, set[int]] = {}
        for source, target in self.edges:
            self.neighbours.setdefault(source, set()).add(target)
            self.neighbours.setdefault(target, set()).add(source)
        self.importance = _importance(len(self.definitions), self.edges)


def _importance(count: int, edges: list[tuple[int, int]]) -> np.ndarray:
    """PageRank over the definition graph, log-scaled to [0, 1]."""
    if count == 0:
        return np.zeros(0)
    rank = np.full(count, 1.0 / count)
    if not edges:
        return np.zeros(count)
    sources = np.fromiter((s for s, _ in edges), dtype=np.int64, count=len(edges))
    targets = np.fromiter((t for _, t in edges), dtype=np.int64, count=len(edges))
    out_degree = np.bincount(sources, minlength=count).astype(float)
    for _ in range(ITERATIONS):
        share = np.where(out_degree > 0, rank / np.maximum(out_degree, 1.0), 0.0)
        flow = np.bincount(targets, weights=share[sources], minlength=count)
        dangling = rank[out_degree == 0].sum()
        rank = (1 - DAMPING) / count + DAMPING * (flow + dangling / count)
    scaled = np.log1p(rank * count)  # 1.0 ≈ average importance
    top = float(scaled.max())
    return scaled / top if top > 0 else scaled


class _Cache:
    """One graph per index, rebuilt in the background when the index changed (at most every
    REBUILD_SECONDS): building resolves every call of the index (seconds at 100k chunks),
    which no query should wait for: until the first build is done, a large index's queries
    get no graph (a small one's first query waits, see SYNC_BUILD_CHUNKS)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        # Keyed by the indexer itself (weakly): an id could be reused by a later index.
        self.graphs: weakref.WeakKeyDictionary[
            Indexer, tuple[tuple[int, int], float, DefinitionGraph]
        ] = weakref.WeakKeyDictionary()
        self.building: weakref.WeakKeyDictionary[Indexer, Future[None]] = (
            weakref.WeakKeyDictionary()
        )
        # One long-lived worker: the store opens a reader connection per thread, so a thread
        # per build would leave one connection behind per rebuild.
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="codeqa-graph")

    def get(self, indexer: Indexer, wait: bool = False) -> DefinitionGraph | None:
        try:
            generation = indexer.store.generation()
        except Exception:
            return None
        key = indexer
        with self.lock:
            cached = self.graphs.get(key)
            fresh = cached is not None and (
                cached[0] == generation or time.monotonic() - cached[1] < REBUILD_SECONDS
            )
            build = self.building.get(key)
            if not fresh and build is None:
                build = self.building[key] = self.pool.submit(self._build, indexer, key, generation)
            # A small index's graph builds in well under a second: the first query waits
            # for it, so results do not depend on timing (benchmarks, tests).
            wait = wait or (cached is None and generation[0] <= SYNC_BUILD_CHUNKS)
        if wait and build is not None:
            build.result()
            with self.lock:
                cached = self.graphs.get(key)
        return cached[2] if cached is not None else None

    def _build(self, indexer: Indexer, key: Indexer, generation: tuple[int, int]) -> None:
        try:
            graph = DefinitionGraph(indexer.store.graph_rows())
        except Exception:  # a closed index or a bug: this query path simply has no graph
            log.warning("building the definition graph failed", exc_info=True)
            graph = None
        with self.lock:
            if graph is not None:
                self.graphs[key] = (generation, time.monotonic(), graph)
            self.building.pop(key, None)


_cache = _Cache()


def graph_for(indexer: Indexer, wait: bool = False) -> DefinitionGraph | None:
    """The indexer's definition graph; with `wait`, the one for the index as it is now."""
    return _cache.get(indexer, wait)


def adjust(
    indexer: Indexer, info: QueryInfo, fused: list[tuple[str, float]], chunks: dict[str, Chunk]
) -> list[tuple[str, float]]:
    """The searcher's hook: `fused` (chunk id, score), best first, re-scored by structure."""
    if not fused:
        return fused
    scores = dict(fused)
    if PAGERANK_WEIGHT or NEIGHBOUR_BOOST:
        graph = graph_for(indexer)
        if graph is not None:
            _graph_features(graph, info, scores, chunks)
    if not QueryPriors(info.text).asks_for_declarations:
        _declarations_below_implementations(scores, chunks)
    return sorted(scores.items(), key=lambda item: -item[1])


def delegates_placed(ranked: Sequence[tuple[Chunk, float]]) -> list[tuple[Chunk, float]]:
    """`ranked` (the second stage's) with each delegate below its target
    (`delegates_below_targets`): after the priors, which weigh a thin target less than its
    delegate, a top-level function."""
    scores = {chunk.id: score for chunk, score in ranked}
    chunks = {chunk.id: chunk for chunk, _ in ranked}
    delegates_below_targets(scores, chunks)
    return [(chunks[doc], score) for doc, score in sorted(scores.items(), key=lambda i: -i[1])]


def _graph_features(
    graph: DefinitionGraph, info: QueryInfo, scores: dict[str, float], chunks: dict[str, Chunk]
) -> None:
    best = max(scores.values())
    if PAGERANK_WEIGHT:
        for doc, score in scores.items():
            node = graph.node_of.get(doc)
            if node is not None and score > 0:
                scores[doc] = score * (1.0 + PAGERANK_WEIGHT * float(graph.importance[node]))
    if NEIGHBOUR_BOOST and info.identifiers:
        named: set[int] = set()
        for ident in info.identifiers:
            found = graph.by_name.get(ident.rsplit(".", 1)[-1], [])
            if 0 < len(found) <= MAX_NAMED:
                named.update(graph.node_of[d.id] for d in found if d.id in graph.node_of)
        near = (
            set().union(*(graph.neighbours.get(n, set()) for n in named)) - named
            if named
            else set()
        )
        for doc in scores:
            if graph.node_of.get(doc) in near:
                scores[doc] += NEIGHBOUR_BOOST * abs(best)


def _declarations_below_implementations(scores: dict[str, float], chunks: dict[str, Chunk]) -> None:
    implementations = _best_by_name(
        scores, chunks, lambda c: not c.declaration and c.kind != "module"
    )
    for doc, score in scores.items():
        chunk = chunks.get(doc)
        if chunk is None or not chunk.declaration or chunk.kind == "module":
            continue
        ceiling = implementations.get(chunk.name)
        if ceiling is not None and score >= ceiling:
            scores[doc] = _just_below(ceiling)


def delegates_below_targets(scores: dict[str, float], chunks: dict[str, Chunk]) -> None:
    """Moves each delegate (`delegates.forwards_to`) whose target, a method of the same name,
    is a candidate just below the best such target, and to at most `DELEGATE_SHARE` of its
    own score. In place."""
    delegates = {doc: name for doc, chunk in chunks.items() if (name := forwards_to(chunk))}
    if not delegates:
        return
    wanted = set(delegates.values())
    targets = _best_by_name(
        scores, chunks, lambda c: c.kind == "method" and not c.declaration and c.name in wanted
    )
    for doc, name in delegates.items():
        ceiling = targets.get(name)
        if ceiling is not None and doc in scores:
            score = scores[doc]
            scores[doc] = min(score * DELEGATE_SHARE, _just_below(ceiling)) if score > 0 else score


def _best_by_name(
    scores: dict[str, float], chunks: dict[str, Chunk], counts: Callable[[Chunk], bool]
) -> dict[str, float]:
    """The best score per definition name among the candidates that `counts`."""
    best: dict[str, float] = {}
    for doc, score in scores.items():
        chunk = chunks.get(doc)
        if chunk is not None and counts(chunk):
            best[chunk.name] = max(best.get(chunk.name, score), score)
    return best


def _just_below(ceiling: float) -> float:
    """A score just under `ceiling`, so the moved chunk follows the one it depends on."""
    return ceiling - 1e-6 * max(abs(ceiling), 1e-9)
