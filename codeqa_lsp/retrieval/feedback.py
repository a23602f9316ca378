"""Pseudo-relevance feedback: the dense arm's best chunks lend their words to the BM25 arm.

A question that paraphrases the code ("an invalid percent-escape in a captured URL segment")
shares few words with it, so BM25 ranks whatever shares the generic ones ("URL", "status").
The dense arm often does recognise the code (express's `decode_param` third), but fusion
weighs BM25 in, and the answer sinks. The dense arm's first chunks know the code's own words
(`decodeURIComponent`, `URIError`, `param`), so BM25 searches those too: the words that are
frequent in the first `chunks` dense results and rare in the repository (tf x idf over
files) are run as a second BM25 query whose score is added at `weight` of the question's.
Not when the dense arm is sure: at the top cosine where the search's fusion gives BM25 its
least weight anyway (`fusion.DenseConfidence.high`, 0.70 for MiniLM; a fusion without that
point, as a remote model's, always gets feedback), the words of chunks the dense arm already
ranks right only stir the BM25 list.
Classic feedback (Rocchio, RM3) takes the lexical arm's own first results; here the semantic
arm's are used, because BM25's first results are what went wrong.

Measured on the 100 questions, local hybrid hit@5 / MRR@10, with the MRR@10 of requests,
click, express and rxjs, and CoSQA dev hybrid nDCG@10 (2026-11-25, same run; 3 chunks,
weight 0.3, 30 candidate words unless said; the dense arm alone: CoSQA 0.5982):
                           100q           requests click express rxjs    CoSQA
  off                      0.86 / 0.720   0.696  0.755  0.804  0.625   0.5991
  10 terms, sure 0.70      0.87 / 0.741   0.802  0.797  0.788  0.575   0.6024  (default)
  10 terms, always         0.87 / 0.741   (the same: no question reaches 0.70) 0.5996
  5 terms, sure 0.70       0.86 / 0.753   0.818  0.775  0.807  0.614   0.5981
  5 terms, sure 0.60       0.86 / 0.746   0.791  0.775  0.807  0.613   0.5984
  5 terms, always          0.86 / 0.753                                0.5953
  10 terms, weight 0.2     0.86 / 0.744   0.805  0.780  0.787  0.606
  10 terms, 2 chunks       0.85 / 0.733   0.756  0.840  0.764  0.571
  10 terms, only when the top cosine is >= 0.45
                           0.87 / 0.735   0.786  0.735  0.828  0.593
  (earlier sweep, 10 terms: weight 0.4 → 0.86 / 0.735, 0.6 → 0.86 / 0.719; 20 terms → 0.85
  / 0.709; the first chunks of both arms → 0.85 / 0.725; 60 candidate words → 0.87 / 0.744.)
  Ten terms: click-16 from a miss to rank 1, express-06 from a miss to 5, click-07 from 5 to
  1; express-04 (10) and rxjs-13 (7) drop out of the first ten, and rxjs loses 0.05 MRR@10
  (answers at rank 1 move to 2 or 3). Five terms lose less on rxjs and gain more MRR@10, but
  miss the hit@5 gain, keep express level with the dense arm alone (0.84 = 0.84) and leave
  CoSQA at or below it; ten do better on every target of issue 12, so ten it is.
  The hashing embedder's dense arm is a blurred keyword match, so its first chunks bring no
  new vocabulary: hash 0.77 / 0.630 → 0.77 / 0.622 (10 terms). Feedback is off for it.
Pasted issues (long queries) already carry the code's words and go without.

Cost, at 100k chunks (the large tree, MiniLM queries, query vectors cached; 10 terms):
retrieval p50 / p95 12.3 / 20.2 ms without feedback, 19.0 / 25.7 ms with it, same run; the
word choice takes ~2.5 ms (tokenizing three chunks, 30 FTS5 counts) and their BM25 query
~3.5 ms. Both run in the search pool right after the dense arm, beside the question's own
BM25 query. Re-measured 2026-11-26 (idle, the MiniLM index of that tree): the 30 FTS5 counts
took 5.7 ms of a 6.2 ms word choice; counted from the sparse postings' list lengths instead
(`TextSearch.file_document_counts`, the same numbers) the word choice takes 1.8 ms and a
search p50 / p95 22.2 / 30.2 -> 16.9 / 24.5 ms, same session.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from codeqa_lsp.chunking.model import Chunk
from codeqa_lsp.index.tokens import STOPWORDS, token_set, tokenize


@dataclass(frozen=True)
class Feedback:
    chunks: int = 3  # the dense arm's first chunks read
    terms: int = 10  # words added to the BM25 query
    weight: float = 0.3  # their BM25 score, relative to the question's
    # Words of the feedback chunks whose file frequency is looked up (by tf, most first):
    # one FTS5 count each, ~0.07 ms at 7,000 files.
    pool: int = 30


# None: no feedback. Embedders not named (remote models) are semantic: they get local's.
FEEDBACK_BY_EMBEDDER: dict[str, Feedback | None] = {"local": Feedback(), "hash": None}

DocumentCounts = Callable[[Sequence[str]], tuple[dict[str, int], int]]


def feedback_for(embedder_name: str) -> Feedback | None:
    return FEEDBACK_BY_EMBEDDER.get(embedder_name, Feedback())


def feedback_terms(
    query: str, dense: Sequence[Chunk], counts: DocumentCounts, feedback: Feedback
) -> list[str]:
    """The words of the first `feedback.chunks` dense results that are frequent in them and
    rare in the index (tf x idf; `counts(terms)` gives the files holding each term and the
    number of files), minus the query's own words; best first, at most `feedback.terms`."""
    own = token_set(query)
    weights: dict[str, float] = {}
    for chunk in dense[: feedback.chunks]:
        words = [
            t
            for t in tokenize(chunk.text)
            if len(t) > 2 and not t.isdigit() and t not in STOPWORDS and t not in own
        ]
        for word, count in Counter(words).items():
            # Each chunk counts once, whatever its size.
            weights[word] = weights.get(word, 0.0) + count / len(words)
    pool = sorted(weights, key=lambda word: -weights[word])[: feedback.pool]
    if not pool:
        return []
    files, total = counts(pool)
    scored = {
        word: weights[word] * math.log((total + 1) / (files[word] + 0.5))
        for word in pool
        if files.get(word, 0) > 0
    }
    return sorted(scored, key=lambda word: -scored[word])[: feedback.terms]
