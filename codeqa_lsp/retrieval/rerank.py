"""Second stage: re-score the fused candidates with evidence the arms cannot see alone.

No cross-encoder ships inside a registry package (shared/notes/offline-models.md), so the
second stage is a hand-set linear scorer over features that are cheap to compute for the
fused top ~150 chunks:

* `fused`: the fused score of the two arms (0..1, `fusion.py`);
* `file`: the chunk's file's whole-file BM25 score over the (salient) query terms, divided
  by the best file's (0..1), times the share of the file outside its largest candidate
  (`rest_of_files`; short queries only). Evidence spread over a file's functions (an
  issue that names five methods of one class) lifts each of them, which is what a
  whole-file BM25 gets right;
* `mention`: the query names the chunk's file (traceback frame, `x/y.py`, `pkg.module`);
* `frame`: the chunk defines a function a traceback frame names (last frame strongest);
* `literal`: the chunk holds a message the query quotes, or raises the error it names
  (`literals.py`);
* the path prior (`priors.py`: tests, examples, changelogs, docs down unless asked for);
  then, for the first `priors.THIN_WITHIN` by that score, the thin-method prior (an accessor
  or a one-line forward, `priors.is_thin`).

    score = (fused + W_FILE·file + W_MENTION·mention + W_FRAME·frame + W_LITERAL·literal)
            × prior [× thin]

The weights were set by hand and checked on every set (bench/quality.py, bench/swebench.py;
numbers in the constants' comments), not fitted: a handful of weights over features that
mean the same thing in any repository is what we can trust on code we have not seen.
Tried and dropped: the share of the chunk's name tokens found in the query (weight 0.1:
hash hit@5 0.75 → 0.73 on the 100 questions; 0.25: 0.71). The file term scaled by the
chunk's own fused score (or its square root), so a strong file lifts only its relevant
definitions (2026-11-25, local): hybrid hit@5 0.83-0.84 and MRR@10 0.631-0.651 on the 100
questions for scales 1-3 against 0.84 / 0.643, CoSQA 0.598-0.599 = 0.599: noise, not a gain.
Also tried (2026-11-25, local, the final top 50 of each query): a fitted pairwise (RankNet)
linear scorer over 16 features (final, BM25 and cosine scores and ranks, kind, name and path
overlap, length), each repository scored by weights fitted on the others: hit@5 / MRR@10
requests 0.92 / 0.80 -> 0.88 / 0.76, click 0.92 / 0.82 -> 0.92 / 0.84, express 0.88 / 0.79
-> 0.84 / 0.79, rxjs 0.72 / 0.58 = 0.72 / 0.58, CoSQA 0.600 -> 0.597. And diversity (the
n-th result of one file or class scaled by 0.95^n ... 0.7^n): every factor lost, 0.86 / 0.748
-> 0.86 / 0.745 ... 0.80 / 0.729; the answer's neighbours in its file are rarely noise. And
dense file evidence (2026-11-26, local, the 100 questions against 0.86 / 0.748): each candidate
file scored by the mean of its best 3 chunk cosines (best 2; all its chunks), min-max over the
candidate files, added to the fused score at weight 0.1 / 0.2 / 0.35: 0.87 / 0.751, 0.86 /
0.743, 0.86 / 0.739 (best 2: 0.87 / 0.749, 0.87 / 0.747, 0.86 / 0.746; all: 0.86 / 0.750,
0.86 / 0.738, 0.87 / 0.714). Seven to twenty questions move either way at each weight: noise.
The same for pasted issues (SWE-bench Lite, 48, against Acc@5 0.854 / MRR 0.671; the issue's
embedded text as the query vector): best 3 at 0.1 / 0.3 / 0.5 / 0.8: 0.854 / 0.875 / 0.875 /
0.854, MRR 0.669-0.687 (at 0.5 five instances up, three down); mean of all 0.833, best one
0.854. The long-query weights re-checked on the 48 at the same time (they were set on nine,
hash): file 0.4 / 0.8 / 1.0 / 1.5 -> Acc@5 0.854 / 0.833 / 0.833 / 0.833; mention 0.25 / 1.0
and frame 0.2 / 0.8 -> 0.854 each. One instance either way is noise; nothing changed.
And a doc-summary term (2026-11-27; retrofit's `Retrofit.create`, documented "Create an
implementation of the API endpoints defined by the service interface", ranked 6th for "how
does retrofit create an implementation of a service interface"): the share of the question's
stemmed content words in the first sentence of a chunk's doc (two at least), times the prior,
added at 0.1 / 0.2 / 0.3. The 100 questions, local: 0.87 / 0.740 at 0.1, 0.87 / 0.733 at 0.2
and 0.3 (requests-04 9 -> out, requests-23 1 -> 2); hash 0.77 / 0.630 -> 0.76 / 0.629 at every
weight; CoSQA 0.600 -> 0.602 (0.1), 0.585 (0.3); the tryout at 0.2 0.82 / 0.655 -> 0.82 / 0.660;
a user pass's 49 probes 24 first / 37 in the top 5 -> 26 / 38. The BM25 arm's doc column
already weighs what docs say; a summary adds noise as often as evidence.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from codeqa_lsp.chunking.model import Chunk
from codeqa_lsp.retrieval.mentions import Evidence
from codeqa_lsp.retrieval.priors import THIN_WITHIN, QueryPriors


@dataclass(frozen=True)
class Weights:
    file: float
    mention: float
    frame: float
    literal: float = 0.0


# Short questions, measured on the 100 questions (hash, hybrid hit@5 / MRR@10, same run):
# file 0 → 0.73/0.56, 0.15 → 0.75/0.57, 0.2 → 0.76/0.58, 0.3 → 0.75/0.55.
# literal (2026-11-25, local, the 100 questions): 0 → hit@5 0.84, MRR@10 0.648; 0.15 → 0.84 /
# 0.669; 0.3, 0.5 and 1.0 → 0.84 / 0.682 (six questions that quote a message or ask where an
# error is raised move to rank 1, none moves down). 0.5 sits in the middle of the plateau.
SHORT_QUERY_WEIGHTS = Weights(file=0.2, mention=0.3, frame=0.3, literal=0.5)
# Long queries lean on whole files: SWE-bench Lite, first 9 instances (hash), file Acc@5
# 0.78 before (chunk ranking only) → 1.00, MRR 0.52 → 0.76 (bench/swebench.py).
LONG_QUERY_WEIGHTS = Weights(file=0.6, mention=0.5, frame=0.4)


# "where is HTTPException thrown" (hono) ranked the class, its constructor and getResponse
# above the three functions that throw it, whose `throw new HTTPException` already counts as
# a literal. 2026-11-26: the 100 questions and the tryout rank identically at 0.5 and 0.3
# (their raise questions already had the raisers first); hono's three raisers lead at both.
# 0.3 because the class, demoted, still lifts its methods afterwards (`classes.py`): at 0.5
# a small class's constructor stayed above the one function throwing it
# (tests/retrieval/test_literals.py). The definition is not where the error is raised.
RAISED_DEFINITION_SHARE = 0.3


@dataclass(frozen=True)
class Features:
    fused: float
    file: float
    mention: float
    frame: float
    prior: float
    literal: float = 0.0


def rest_of_files(
    candidates: Sequence[tuple[Chunk, float]], file_sizes: Mapping[str, int] | None
) -> dict[str, float]:
    """Per file, the share outside its largest candidate definition (0..1; files of unknown
    size are left out and count whole).

    Whole-file BM25 is evidence from the *rest* of a file: for a file that is one function it
    is that function's own BM25 score counted a second time. CoSQA dev (one function per
    file, local): the file term put hybrid nDCG@10 at 0.586, below fusion without it (0.598)
    and the dense arm alone (0.596); scaled by this share 0.599 (hash 0.404 → 0.403). The 100
    questions, hit@5/MRR@10: local 0.76/0.58 → 0.75/0.57, hash 0.75/0.58 → 0.76/0.58. One
    factor per file, not per chunk: scaling each chunk by its own share (0.598 on CoSQA)
    reordered definitions inside a file, small helpers over the function asked about (local
    MRR@10 0.58 → 0.56).
    """
    if not file_sizes:
        return {}
    biggest: dict[str, int] = {}
    for chunk, _ in candidates:
        biggest[chunk.path] = max(biggest.get(chunk.path, 0), chunk.end_byte - chunk.start_byte)
    return {
        path: max(0.0, 1.0 - biggest[path] / size)
        for path, size in file_sizes.items()
        if path in biggest and size > 0
    }


def features(
    chunk: Chunk,
    fused: float,
    file_scores: Mapping[str, float],
    evidence: Evidence,
    priors: QueryPriors,
    rest: Mapping[str, float] | None = None,
    literal_scores: Mapping[str, float] | None = None,
) -> Features:
    frame = 0.0
    if evidence.functions:
        last = chunk.symbol.rsplit(".", 1)[-1]
        strength = evidence.functions.get(last, 0.0)
        # A frame names a function of a file it also names; elsewhere the name is a guess.
        frame = strength if chunk.path in evidence.paths else strength * 0.3
    return Features(
        fused=fused,
        file=file_scores.get(chunk.path, 0.0) * (rest or {}).get(chunk.path, 1.0),
        mention=evidence.paths.get(chunk.path, 0.0),
        frame=frame,
        prior=priors.factor(chunk),
        literal=(literal_scores or {}).get(chunk.id, 0.0),
    )


def score(f: Features, w: Weights) -> float:
    evidence = w.file * f.file + w.mention * f.mention + w.frame * f.frame + w.literal * f.literal
    return (f.fused + evidence) * f.prior


def normalized_files(ranked: Sequence[tuple[str, float]]) -> dict[str, float]:
    """Whole-file BM25 scores divided by the best one (0..1)."""
    if not ranked:
        return {}
    top = max(s for _, s in ranked) or 1.0
    return {path: max(0.0, s / top) for path, s in ranked}


def rerank(
    candidates: Sequence[tuple[Chunk, float]],
    file_scores: Mapping[str, float],
    evidence: Evidence,
    priors: QueryPriors,
    weights: Weights,
    file_sizes: Mapping[str, int] | None = None,
    literal_scores: Mapping[str, float] | None = None,
    raised: frozenset[str] = frozenset(),
) -> list[tuple[Chunk, float]]:
    """Candidates (chunk, fused score) re-scored and sorted, best first (stable). `raised`:
    errors the question says are raised; their own definitions (the class and its methods)
    keep `RAISED_DEFINITION_SHARE` of their score, unless they hold the quoted message."""
    rest = rest_of_files(candidates, file_sizes)
    held = literal_scores or {}
    scored = [
        (
            chunk,
            score(features(chunk, fused, file_scores, evidence, priors, rest, held), weights)
            * (RAISED_DEFINITION_SHARE if _raised_definition(chunk, raised, held) else 1.0),
        )
        for chunk, fused in candidates
    ]
    order = sorted(range(len(scored)), key=lambda i: -scored[i][1])
    for i in order[:THIN_WITHIN]:  # a thin accessor below the code doing the work
        chunk, value = scored[i]
        scored[i] = (chunk, value * priors.thin_factor(chunk))
    order = sorted(range(len(scored)), key=lambda i: -scored[i][1])
    return [scored[i] for i in order]


def _raised_definition(chunk: Chunk, raised: frozenset[str], held: Mapping[str, float]) -> bool:
    """Whether `chunk` is the definition of an error the question says is raised (the class
    or one of its methods), not holding the quoted message: an error class's named
    constructors write the messages it is raised with (`SyntaxError::dueToHeaderNotFound`
    returns `new self('The header record does not exist ...')`, thephpleague/csv; user pass,
    not an evaluation set, where the pasted message's writer fell from BM25's first to
    outside the first ten)."""
    return chunk.symbol.split(".")[0] in raised and not held.get(chunk.id)


# A pasted issue's failing function moves first only from this many first places: its file is
# then among the top five files already, so SWE-bench's file Acc@5 cannot change.
FAILING_FRAME_WITHIN = 5


def failing_frame_first(
    ranked: Sequence[tuple[Chunk, float]], evidence: Evidence, long_query: bool = False
) -> list[tuple[Chunk, float]]:
    """`ranked` with the definition of the function a pasted trace failed in first: named
    like the failing frame's function, in its file, the one holding the frame's line when
    several do. A pasted traceback (starlette's lifespan `TypeError`, failing in
    `Router.startup`) otherwise ranked the `__aenter__` methods of the frames above it (their
    names are identifier-shaped, so the fast path boosts them; `startup` is a plain word).
    For a `long_query` (a pasted issue), only from the first `FAILING_FRAME_WITHIN` places.
    Scores stay in descending order."""
    if evidence.failing is None or not ranked:
        return list(ranked)
    path, line, function = evidence.failing
    window = ranked[:FAILING_FRAME_WITHIN] if long_query else ranked
    found = [i for i, (c, _) in enumerate(window) if c.path == path and c.name == function]
    if not found:
        return list(ranked)
    best = min(found, key=lambda i: not ranked[i][0].start_line <= line <= ranked[i][0].end_line)
    chunk = ranked[best][0]
    top = max(score for _, score in ranked)
    return [(chunk, top + 1e-6)] + [item for i, item in enumerate(ranked) if i != best]
