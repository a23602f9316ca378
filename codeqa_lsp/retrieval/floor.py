"""Deciding whether the best results are good enough to answer from (`confident`).

Search always returns its best candidates; a question about something the codebase does
not contain still gets *some* ranking. Answering from it would be a confident-sounding
hallucination, so the searcher flags such responses and says why.

Two independent pieces of evidence, either of which is enough:

* Dense: the best cosine similarity reaches the embedder's floor. Cosines are not
  comparable across embedders (MiniLM puts unrelated text near 0.1-0.2, the hashing
  embedder near 0), so each embedder has its own floor, calibrated on the evaluation sets
  as the value that separates questions asked of their own corpus from the same questions
  asked of another corpus (see `bench/quality.py --calibrate` and BENCHMARKS.md).
  `Settings.min_score` overrides it.
* Lexical: the top BM25 result contains most of the query's meaningful terms (at least
  `MIN_TERMS_MATCHED` of them and `MIN_TERM_SHARE` of all). A name the user typed and the
  code contains is evidence even when the embedder does not understand the question.

A definition found by the exact-symbol fast path is always evidence.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from codeqa_lsp.chunking.model import Chunk
from codeqa_lsp.index.tokens import query_terms, tokenize
from codeqa_lsp.retrieval.priors import QueryPriors, is_non_code, path_kind

# Floors by embedder name, calibrated 2026-11-21 on the four question sets: each question
# asked of its own corpus (positives) and of the other corpora (hard negatives: same domain,
# e.g. HTTP questions to express asked of requests). Top-1 cosine, share judged confident:
#   local (MiniLM@256), floor 0.40: own corpus 0.85, other corpus 0.22 (0.45: 0.64 / 0.09)
#   hash,               floor 0.33: own corpus ~0.4, other corpus ~0.1 (0.35: 0.30 / 0.04)
# Off-topic questions (nothing about code) sit far below either floor. The lexical test
# adds in-corpus questions naming the code's own terms (0.25-0.28 of them; 0.00 across
# corpora). `openai` is not calibrated here (no network): its text-embedding-3 cosines run
# lower than MiniLM's, so it gets a lower, conservative guess; `minScore` overrides.
# Re-measured 2026-11-23 (local, full pipeline: `confident` of the hybrid response; own
# corpus / other corpora / the 32 off-topic questions of shared/eval/offtopic):
#   0.40 → 89/100, 57/300, 0/32;  0.38 → 92/100, 76/300, 0/32;
#   0.37 → 96/100, 90/300, 0/32;  0.35 → 98/100, 113/300, 0/32.
# The off-topic questions' best cosine tops out at 0.31, so 0.38 clears the target (>= 90%
# of real questions confident) with the smallest rise in cross-corpus confidence.
DENSE_FLOORS: dict[str, float] = {"local": 0.38, "hash": 0.33, "openai": 0.30}
DEFAULT_DENSE_FLOOR = 0.35
MIN_TERMS_MATCHED = 2
MIN_TERM_SHARE = 0.6


@dataclass(frozen=True)
class Verdict:
    confident: bool
    reason: str  # empty when confident


def dense_floor(embedder_name: str, min_score: float | None = None) -> float:
    if min_score is not None:
        return min_score
    return DENSE_FLOORS.get(embedder_name, DEFAULT_DENSE_FLOOR)


def lexical_evidence(query: str, chunk: Chunk) -> tuple[int, int]:
    """(meaningful query terms found in the chunk, meaningful query terms)."""
    terms = query_terms(query)
    have = set(tokenize(f"{chunk.path} {chunk.symbol} {chunk.text}"))
    return sum(1 for t in terms if t in have), len(terms)


def judge(
    query: str,
    top_bm25: Chunk | None,
    top_cosine: float | None,
    floor: float,
    exact_symbol: bool = False,
) -> Verdict:
    """The verdict for one response; `top_cosine` is None when the dense arm did not run."""
    if exact_symbol:
        return Verdict(True, "")
    if top_cosine is not None and top_cosine >= floor:
        return Verdict(True, "")
    found, total = (0, 0) if top_bm25 is None else lexical_evidence(query, top_bm25)
    needed = max(min(MIN_TERMS_MATCHED, total), 1)
    if total and found >= needed and found / total >= MIN_TERM_SHARE:
        return Verdict(True, "")
    parts = []
    if top_cosine is None:
        parts.append("no embeddings yet (keyword search only)")
    else:
        parts.append(f"best semantic similarity {top_cosine:.2f} is below the floor {floor:.2f}")
    if top_bm25 is None:
        parts.append("no keyword match")
    else:
        parts.append(f"the best keyword match contains {found} of {total} query terms")
    return Verdict(False, "no good source: " + "; ".join(parts))


def code_verdict(
    query: str,
    bm25: Sequence[tuple[Chunk, float]] | None,
    dense: Sequence[tuple[Chunk, float]] | None,
    head: Sequence[Chunk],
    floor: float,
    named_exists: bool,
    held_first: bool = False,
) -> Verdict:
    """Confidence from code evidence only: a LICENSE, CI file or changelog that matches
    best never makes a question about behaviour confident (unless it asks about them,
    `QueryPriors`), and a ranking whose `head` (first results) is only such files is not
    confident. `bm25` / `dense` are the arms' lists, None for an arm that did not run.
    `held_first`: the first result writes the message the query pastes (`literals.py`), a
    source whatever the arms make of the message's words (moshi's `Expected BEGIN_OBJECT
    but was STRING at path $`, cosine 0.37 under the floor, 3 of 6 terms in BM25's best)."""
    allowed = QueryPriors(query).factors

    def counts(chunk: Chunk) -> bool:
        return not is_non_code(chunk.path) or allowed.get(path_kind(chunk.path), 1.0) >= 1.0

    top_cosine: float | None = None
    if dense is not None:
        cosines = [s for c, s in dense if counts(c)]
        top_cosine = cosines[0] if cosines else (0.0 if dense else None)
    top_bm25 = None if bm25 is None else next((c for c, _ in bm25 if counts(c)), None)
    if head and not any(counts(c) for c in head):
        return Verdict(
            False,
            "no good source: the best matches are not code "
            f"({', '.join(dict.fromkeys(c.path for c in head))})",
        )
    return judge(query, top_bm25, top_cosine, floor, exact_symbol=named_exists or held_first)
