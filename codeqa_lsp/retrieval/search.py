"""Hybrid search: BM25 and dense arms in parallel, fused, with an exact-symbol fast path.

The pipeline for one query:

1. analyse the query (identifiers it names, navigation or question; `query.py`);
2. run the BM25 arm and, when any chunk is embedded, the dense arm, in parallel threads
   (SQLite, the embedder and hnswlib all release the GIL, so the two overlap); a short
   question's BM25 arm adds the code-vocabulary terms of its phrases (`expansion.py`) and,
   once the dense arm has answered, the words of its first chunks (`feedback.py`);
3. fuse the candidate lists (`fusion.py`; the method was chosen by measurement) and
   apply the priors (`priors.py`: tests, changelogs and thin accessors rarely answer);
4. for a question, the first results holding more of its rarer words gain (`coverage.py`);
   class- and module-level evidence: the members of a class or file that ranks high gain
   (`classes.py`), then a file's preamble gives way (`preamble.py`); a nested function's
   enclosing function just above it, and the nested one folded into it (`enclosing.py`); a
   setter's reader above it (`setters.py`);
5. exact-symbol fast path (`named.py`): definitions the query names (constants too,
   `constants.py`) are put first for a navigation query (`where is parse_args`) and boosted for
   a question that mentions them, as are definitions named after what the question does to them
   (`compounds.py`); a question about their uses (`who calls parse_args`) gets the code that
   uses them next, with the lines of the uses (`uses.py`); in a short bug report the helpers a
   named definition calls gain (`reports.py`); a function that only calls another gives its
   place among the first results to it (`delegates.py`);
6. judge confidence (`floor.py`) and report the share of chunks embedded.

`mode` runs a single arm alone, unfused and without the fast path, so the benchmark can
compare the arms against the full pipeline through the same code.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from functools import cache, partial
from typing import TYPE_CHECKING, Literal

from codeqa_lsp.chunking.model import Chunk
from codeqa_lsp.config import Settings
from codeqa_lsp.index.filters import SearchFilters, chunk_passes
from codeqa_lsp.index.tokens import query_terms, token_set
from codeqa_lsp.retrieval import graph as structure
from codeqa_lsp.retrieval.arms import Arms, DenseSide
from codeqa_lsp.retrieval.bound import users_before_bindings, with_bound_users
from codeqa_lsp.retrieval.classes import members_of_strong_owners
from codeqa_lsp.retrieval.compounds import compounds_lifted
from codeqa_lsp.retrieval.coverage import coverage_lifted
from codeqa_lsp.retrieval.delegates import targets_lead_forwarders
from codeqa_lsp.retrieval.duplicates import distinct_places
from codeqa_lsp.retrieval.enclosing import enclosers_placed, functions_defined_in
from codeqa_lsp.retrieval.expansion import EXPANSION_WEIGHT, expansion_terms
from codeqa_lsp.retrieval.feedback import feedback_for, feedback_terms
from codeqa_lsp.retrieval.floor import Verdict, code_verdict, dense_floor
from codeqa_lsp.retrieval.fusion import FusionConfig, added_scores, fuse, fusion_for
from codeqa_lsp.retrieval.issue_text import strip_boilerplate
from codeqa_lsp.retrieval.literals import NO_LITERALS, Literals, find_literals, literal_scores
from codeqa_lsp.retrieval.mentions import Evidence, PathResolver, find_mentions, resolve
from codeqa_lsp.retrieval.model import SearchResponse, search_hits
from codeqa_lsp.retrieval.named import Definitions, named_definitions, named_first, with_named
from codeqa_lsp.retrieval.preamble import preambles_placed
from codeqa_lsp.retrieval.priors import QueryPriors
from codeqa_lsp.retrieval.project import name_terms, text_without_name
from codeqa_lsp.retrieval.query import (
    LONG_QUERY_TERMS,
    QueryInfo,
    analyze,
    best_named_per_file,
    is_report,
    salient_terms,
)
from codeqa_lsp.retrieval.reports import callees_of_named_lifted
from codeqa_lsp.retrieval.rerank import (
    LONG_QUERY_WEIGHTS,
    SHORT_QUERY_WEIGHTS,
    Weights,
    failing_frame_first,
    normalized_files,
    rerank,
)
from codeqa_lsp.retrieval.setters import readers_lead_setters
from codeqa_lsp.retrieval.uses import Used, asks_for_uses, uses_led, with_subject

if TYPE_CHECKING:
    from codeqa_lsp.index.indexer import Indexer

# `keyword`: the pipeline without the query embedding, served while the embedder cannot
# answer (was the raw `bm25` arm: 100 questions 0.73 / 0.633 against 0.67 / 0.521, 2026-11-26).
# `bm25` and `dense` are one arm, unprocessed, for measuring the arms against the pipeline.
SearchMode = Literal["hybrid", "keyword", "bm25", "dense"]
MODES: tuple[SearchMode, ...] = ("hybrid", "keyword", "bm25", "dense")
_PIPELINE = ("hybrid", "keyword")

# How many candidates each arm contributes to fusion. Fusion can only reorder what the
# arms return; 50 keeps a relevant chunk that one arm ranks low within reach at ~1 ms cost.
CANDIDATES = 50
# The BM25 arm goes deeper: its candidates beyond the dense top list get their real cosine
# (`_complete_cosines`), so a keyword hit at BM25 rank 60 that is semantically close can
# still rise. Measured on the 100 questions: local +0.01 hit@5 and MRR@10 (CoSQA even);
# hash -0.01 hit@5, +0.01 MRR@10. Single-arm modes keep `CANDIDATES`.
BM25_CANDIDATES = 100
# Whole-file BM25 candidates (files) consulted per query, and how many of the best files
# that no chunk candidate comes from get their best-matching chunks added ("lifted";
# `query.LIFT_CHUNKS_PER_FILE` each).
FILE_CANDIDATES = 50
FILE_LIFT = 10
# Chunks holding a quoted message's (or a raised error's) words that join the candidates.
LITERAL_CANDIDATES = 20
# A ranking whose first results are all non-code files (LICENSE, CI, changelog) is not
# confident, whatever their scores.
NON_CODE_HEAD = 3


class HybridSearcher:
    """Searches one `Indexer`. Thread-safe: queries may run from several threads at once."""

    def __init__(
        self, indexer: Indexer, settings: Settings, fusion: FusionConfig | None = None
    ) -> None:
        self.indexer = indexer
        self.settings = settings
        # None: the fusion measured best for this embedder (see fusion.py).
        self.fusion = fusion or fusion_for(indexer.embedder.name)
        self.feedback = feedback_for(indexer.embedder.name)
        self._pool: ThreadPoolExecutor | None = None
        self._resolver: tuple[tuple[int, ...], PathResolver] | None = None
        self._pool_lock = threading.Lock()
        self._name_terms: frozenset[str] | None = None  # the project's name (`project.py`)

    def search(
        self,
        query: str,
        top_k: int | None = None,
        filters: SearchFilters | None = None,
        mode: SearchMode = "hybrid",
    ) -> SearchResponse:
        top_k = top_k or self.settings.top_k
        if mode not in MODES:
            raise ValueError(f"unknown search mode {mode!r}; expected one of {', '.join(MODES)}")
        query = query.strip()
        coverage = self.indexer.coverage()
        if not query:
            return SearchResponse(query=query, coverage=coverage, reason="empty query")
        limit = max(CANDIDATES, top_k)
        arms = self._run_arms(query, limit, filters, mode, coverage)
        info = analyze(query)
        uses = mode in _PIPELINE and not arms.long_query and asks_for_uses(query)
        if uses:
            info = with_subject(info)  # `who calls getpreferredencoding` names a definition
        named_exists = False  # the query names a definition the index has (confidence)
        used: Used = {}  # a question about uses: the lines of each use
        holders: frozenset[str] = frozenset()  # candidates holding the query's literals
        kept: frozenset[str] = frozenset()  # nested functions kept below their enclosers

        if mode in _PIPELINE:
            # A pasted issue quotes code and output everywhere; literals are a question's
            # evidence (`literals.py` has the measurement), and a single pasted line's, however
            # many terms its runtime values add (attrs's `ValueError: No mandatory attributes
            # ...` ends in a 400-character repr; user pass, not an evaluation set).
            # A name's definitions are read once per search, whichever step asks for them
            # (a pasted error's type, the fast path, enclosing functions, uses).
            definitions = cache(partial(self._definitions, filters=filters))
            literals = (
                NO_LITERALS
                if arms.long_query and "\n" in query.strip()
                else find_literals(query, info.identifiers, lambda name: bool(definitions(name)))
            )
            ranked, exact_ids, named_exists = self._hybrid(
                info, arms, filters, literals, definitions
            )
            evidence = self._evidence(query)
            ranked, holders = self._second_stage(
                query, ranked, arms, filters, literals, evidence, uses
            )
            if not arms.long_query:  # a pasted issue wants files (the `swebench` work)
                if not (literals.pasted or uses):  # the question's words (`coverage.py`)
                    ranked = coverage_lifted(ranked, query)
                writers = holders if literals.pasted else frozenset()
                ranked = members_of_strong_owners(ranked, writers=writers)
                ranked = ranked if uses else preambles_placed(ranked)  # a use is a use
                nested = functions_defined_in(self.indexer.definitions_in_paths)
                ranked, kept = enclosers_placed(
                    ranked, definitions, holders, token_set(query), nested
                )
                ranked = ranked if literals.pasted else readers_lead_setters(ranked, query)
            if exact_ids and arms.report:
                ranked = callees_of_named_lifted(ranked, exact_ids)  # the API's helpers
            ranked = failing_frame_first(ranked, evidence, arms.long_query)
            if exact_ids and info.is_navigation:
                ranked = named_first(ranked, exact_ids, info.identifiers)
            if uses:
                lookup = partial(self.indexer.bm25_terms, filters=filters)
                ranked, used = uses_led(ranked, exact_ids, info.identifiers, lookup, definitions)
            else:  # a forwarder is a use of what it calls: a question about uses keeps it
                ranked = targets_lead_forwarders(ranked, definitions, exact_ids, holders)
            ranked = distinct_places(ranked, {*exact_ids, *kept}, arms.long_query)
        else:
            chosen = arms.bm25 if mode == "bm25" else (arms.dense or [])
            ranked, exact_ids = [(chunk, score) for chunk, score in chosen], set()

        hits = search_hits(ranked[:top_k], arms.bm25, arms.dense, arms.cosines, exact_ids, used)
        held_first = bool(ranked) and ranked[0][0].id in holders
        verdict = self._verdict(query, arms, mode, ranked, named_exists, held_first)
        if not hits:
            verdict = type(verdict)(False, verdict.reason or "no results")
        return SearchResponse(
            query=query,
            hits=hits,
            confident=verdict.confident,
            coverage=coverage,
            reason=verdict.reason,
        )

    def _verdict(
        self,
        query: str,
        arms: Arms,
        mode: SearchMode,
        ranked: list[tuple[Chunk, float]],
        named_exists: bool,
        held_first: bool,
    ) -> Verdict:
        return code_verdict(
            query,
            bm25=arms.bm25 if mode != "dense" else None,
            dense=arms.dense if mode != "bm25" else None,
            head=[c for c, _ in ranked[:NON_CODE_HEAD]],
            floor=dense_floor(self.indexer.embedder.name, self.settings.min_score),
            named_exists=named_exists,
            held_first=held_first,
        )

    # -- arms --------------------------------------------------------------------------------
    def _executor(self) -> ThreadPoolExecutor:
        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="codeqa-search")
            return self._pool

    def _run_arms(
        self,
        query: str,
        limit: int,
        filters: SearchFilters | None,
        mode: SearchMode,
        coverage: float,
    ) -> Arms:
        want_dense = mode not in ("bm25", "keyword") and coverage > 0
        want_bm25 = mode != "dense"
        terms = query_terms(query)
        long_query = len(terms) > LONG_QUERY_TERMS
        report = is_report(len(terms), long_query)
        # The embedder reads only its first 256 tokens: of a pasted issue, the title and
        # what follows once the template's comments and environment listings are gone.
        dense_text = strip_boilerplate(query) if long_query else query
        if mode == "hybrid" and not long_query:  # "how does cobra ...": the project
            dense_text = text_without_name(query, self._project_name_terms())
        bm25_limit = max(limit, BM25_CANDIDATES) if mode in _PIPELINE else limit
        # A question's dense arm also gives the BM25 list of its feedback words.
        fed_limit = bm25_limit if mode == "hybrid" and not long_query else 0
        dense_future: Future[DenseSide] | None = None
        if want_dense and want_bm25:
            dense_future = self._executor().submit(
                self._dense_side, query, dense_text, limit, filters, fed_limit
            )
        if long_query:
            terms = self._salient(query, terms)
        bm25 = self.indexer.bm25_terms(terms, bm25_limit, filters) if want_bm25 else []
        extra = expansion_terms(query) if mode in _PIPELINE and not long_query else []
        if extra:
            expanded = self.indexer.bm25_terms(extra, bm25_limit, filters)
            bm25 = added_scores(bm25, expanded, EXPANSION_WEIGHT, bm25_limit)
            terms = [*terms, *extra]  # whole-file evidence (second stage) counts them too
        dense: list[tuple[Chunk, float]] | None = None
        if dense_future is not None:
            dense, fed = dense_future.result()
            if fed and self.feedback is not None:
                bm25 = added_scores(bm25, fed, self.feedback.weight, bm25_limit)
        elif want_dense:
            dense = self.indexer.dense(dense_text, limit, filters)
        arms = Arms(
            bm25=_passing(bm25, filters),
            dense=None if dense is None else _passing(dense, filters),
            terms=terms,
            long_query=long_query,
            report=report,
        )
        if arms.dense is not None:
            arms.cosines = {c.id: score for c, score in arms.dense}
            if mode == "hybrid":
                arms.cosines.update(self._complete_cosines(dense_text, arms))
        return arms

    def _project_name_terms(self) -> frozenset[str]:
        if self._name_terms is None:
            self._name_terms = name_terms(self.indexer.root)
        return self._name_terms

    def _salient(self, query: str, terms: list[str]) -> list[str]:
        """A long pasted text's BM25 terms: the salient ones (by IDF over files, code-shaped
        and title terms first; `query.salient_terms`)."""
        counts, total = self.indexer.file_document_counts(terms)
        return salient_terms(query, terms, counts, total) or terms

    def _dense_side(
        self,
        query: str,
        dense_text: str,
        limit: int,
        filters: SearchFilters | None,
        fed_limit: int,
    ) -> DenseSide:
        """The dense arm and, when `fed_limit`, the BM25 list (that long) of the words its
        first chunks lend (`feedback.py`), in the search pool beside the BM25 arm."""
        dense = self.indexer.dense(dense_text, limit, filters)
        fb, sure = self.feedback, self.fusion.dense_confidence
        if not dense or not fed_limit or fb is None or (sure and dense[0][1] >= sure.high):
            return dense, []  # no feedback wanted, or the dense arm is sure (`feedback.py`)
        words = feedback_terms(query, [c for c, _ in dense], self.indexer.file_document_counts, fb)
        return dense, self.indexer.bm25_terms(words, fed_limit, filters) if words else []

    def _complete_cosines(self, query: str, arms: Arms) -> dict[str, float]:
        """Cosines for BM25 candidates outside the dense arm's top list.

        Measured: fusing with the true cosine of every candidate, instead of treating "not
        in the dense top 50" as "unrelated", lifts hit@5 on the question sets by several
        points: a keyword hit that is also semantically close is exactly the answer we
        want. Costs one small matrix product; chunks without a vector yet (progressive
        indexing) simply get none.
        """
        missing = [c for c, _ in arms.bm25 if c.id not in arms.cosines]
        vector = self.indexer.embed_query(query) if missing else None
        if vector is None:
            return {}
        cosines = self.indexer.cosines_for([c.id for c in missing], vector)
        return {c.id: s for c, s in zip(missing, cosines, strict=True) if s is not None}

    # -- fusion and the fast path --------------------------------------------------------------
    def _hybrid(
        self,
        info: QueryInfo,
        arms: Arms,
        filters: SearchFilters | None,
        literals: Literals,
        definitions: Definitions,
    ) -> tuple[list[tuple[Chunk, float]], set[str], bool]:
        """Fused ranking, the ids of the named definitions put first or boosted, and whether
        the query names any definition the index has (confidence)."""
        chunks = {c.id: c for c, _ in arms.bm25}
        chunks.update({c.id: c for c, _ in arms.dense or []})
        dense = sorted(arms.cosines.items(), key=lambda item: -item[1])
        # Path priors are applied by the second stage (`rerank.py`), with the other features.
        lists = {"bm25": [(c.id, s) for c, s in arms.bm25], "dense": dense}
        config = self.fusion.for_query(lists)  # this query's weights, resolved once
        arms.bm25_share = config.weight("bm25")
        fused = fuse(lists, config)
        # -- structure hook (retrieval/graph.py): declarations below implementations, graph
        fused = structure.adjust(self.indexer, info, fused, chunks)
        # Compounds and constants for questions only: a pasted issue names dozens of identifiers,
        # and a pasted output line's dotted values (`'http.response.body'`) name nothing.
        question = not arms.long_query
        fused = compounds_lifted(fused, info, chunks) if question and not literals.pasted else fused
        lookup = partial(self.indexer.bm25_terms, filters=filters) if question else None
        found = named_definitions(info, definitions, lookup, self._project_name_terms())
        # An error the question says is raised is asked about where it is raised, not where
        # its class is defined (`literals.py`).
        named = [
            c
            for c in found
            if c.symbol.rsplit(".", 1)[-1] not in literals.raised and not literals.prints(c.name)
        ]
        if not named:
            return [(chunks[i], s) for i, s in fused], set(), bool(found)
        for chunk in named:
            chunks.setdefault(chunk.id, chunk)
        named_ids = [c.id for c in named]
        order = with_named(fused, named_ids, info.is_navigation)
        return [(chunks[doc], score) for doc, score in order], set(named_ids), True

    def _second_stage(
        self,
        query: str,
        ranked: list[tuple[Chunk, float]],
        arms: Arms,
        filters: SearchFilters | None,
        literals: Literals,
        evidence: Evidence,
        uses: bool,
    ) -> tuple[list[tuple[Chunk, float]], frozenset[str]]:
        """File-level evidence, mentions (`evidence`), literals, then the reranker
        (`rerank.py`); with the ids of the candidates holding the query's literals. `uses`:
        the question asks who uses a name (`uses.py`)."""
        files = normalized_files(self.indexer.file_bm25(arms.terms, FILE_CANDIDATES))
        present = {c.path for c, _ in ranked}
        strong = [p for p, s in sorted(files.items(), key=lambda i: -i[1])[:FILE_LIFT]]
        wanted = [p for p in dict.fromkeys([*evidence.paths, *strong]) if p not in present]
        candidates = list(ranked)
        known = {c.id for c, _ in candidates}
        lifted = self._lifted(wanted, arms.terms, evidence, filters)
        if literals:
            terms = query_terms(" ".join(literals.search_terms()))
            lifted += [c for c, _ in self.indexer.bm25_terms(terms, LITERAL_CANDIDATES, filters)]
        for chunk in lifted:
            if chunk.id not in known:
                known.add(chunk.id)
                candidates.append((chunk, 0.0))
        weights = LONG_QUERY_WEIGHTS if arms.long_query else self._short_weights(arms)
        if arms.long_query and literals:  # one long pasted line (see `search`)
            weights = replace(weights, literal=SHORT_QUERY_WEIGHTS.literal)
        priors = QueryPriors(query, arms.long_query, output=literals.pasted, any_size=uses)
        # Short questions want a definition: the file term counts only the rest of its file
        # (`rerank.rest_of_files`); a pasted issue wants files: whole-file evidence stays whole.
        paths = list({c.path for c, _ in candidates if c.path in files})
        sizes = {} if arms.long_query else self.indexer.file_sizes(paths)
        # Library code writes messages; a test asserting one, an example printing it and a
        # guide quoting it do not, unless the question asks for tests or examples (go-playground/
        # validator: three tests holding `Key: 'User.Email' Error:Field validation for ...`
        # ranked above `fieldError.Error`; user pass, not an evaluation set).
        writers = [c for c, _ in candidates if priors.writes_messages(c)] if literals else []
        held = literal_scores({c.id: c.text for c in writers}, literals)
        lookup = partial(self.indexer.bm25_terms, filters=filters)
        bound = with_bound_users(candidates, held, literals, lookup)
        candidates, held = bound.candidates, bound.credit  # where it is raised (`bound.py`)
        raised = frozenset(literals.raised)  # error classes below the code raising them
        ranked = rerank(candidates, files, evidence, priors, weights, sizes, held, raised)
        if not priors.asks_for_declarations:  # a delegate below its target, priors applied
            ranked = structure.delegates_placed(ranked)
        return users_before_bindings(ranked, bound.links), frozenset(held)

    def _short_weights(self, arms: Arms) -> Weights:
        """Whole-file BM25 is BM25 evidence again: trust it as much as fusion trusted the
        BM25 arm for this query. With the local embedder fusion lowers BM25's weight when
        the dense arm is confident (`fusion.DenseConfidence`); an undiscounted file term
        brought BM25 back in through the side door. CoSQA dev (local, one function per file,
        so file BM25 = chunk BM25): hybrid nDCG@10 0.568 with a fixed file weight, below the
        dense arm alone (0.596); the 100 questions are in BENCHMARKS.md. The hashing
        embedder's fixed fusion weights leave its file weight as measured."""
        confidence = self.fusion.dense_confidence
        most = confidence.bm25_high if confidence is not None else self.fusion.weight("bm25")
        used = arms.bm25_share if arms.bm25_share is not None else most
        share = used / most if most > 0 else 1.0
        return replace(SHORT_QUERY_WEIGHTS, file=SHORT_QUERY_WEIGHTS.file * min(1.0, share))

    def _evidence(self, query: str) -> Evidence:
        mentions = find_mentions(query)
        if not mentions:
            return Evidence(paths={}, functions={})
        return resolve(mentions, self._path_resolver())

    def _path_resolver(self) -> PathResolver:
        """The indexed paths by suffix, built once per index generation: rebuilding it for
        every query that mentions a file cost ~90 ms at 100k chunks (7k files; profile of
        `bench/speed.py --latency`'s large tree), the slowest queries of the 100."""
        generation = self.indexer.paths_generation()
        cached = self._resolver
        if cached is None or cached[0] != generation:
            cached = (generation, PathResolver(self.indexer.indexed_paths()))
            self._resolver = cached
        return cached[1]

    def _lifted(
        self, paths: list[str], terms: list[str], evidence: Evidence, filters: SearchFilters | None
    ) -> list[Chunk]:
        """Chunks of files the arms missed but file evidence points at: the definitions a
        traceback frame names there, then in each file the definitions whose names share the
        most query terms (metadata only: a BM25 query restricted to these files cost 0.7-2 s
        at 24k chunks, because FTS5 walks every match before the path filter)."""
        if not paths:
            return []
        out: list[Chunk] = []
        for name in evidence.functions:
            out.extend(c for c in self.indexer.definitions(name) if c.path in evidence.paths)
        out.extend(
            self.indexer.get_chunks(
                best_named_per_file(self.indexer.definitions_in_paths(paths), terms)
            )
        )
        return [c for c in out if chunk_passes(c, filters)]

    def _definitions(self, name: str, filters: SearchFilters | None) -> list[Chunk]:
        return [c for c in self.indexer.definitions(name) if chunk_passes(c, filters)]

    def close(self) -> None:
        with self._pool_lock:
            if self._pool is not None:
                self._pool.shutdown(wait=False)
                self._pool = None


def _passing(
    ranked: Sequence[tuple[Chunk, float]], filters: SearchFilters | None
) -> list[tuple[Chunk, float]]:
    return [(c, s) for c, s in ranked if chunk_passes(c, filters)]
