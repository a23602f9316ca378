"""Query coverage: among the first results, the ones holding more of the question's words gain.

BM25 sums the weights of the query words a chunk holds, so one rare word repeated in a short
chunk can outweigh several words the question spends on what it means; the dense arm reads
meaning, not words. When the answer and its neighbours rank close, the one that holds the
most of the question's distinctive words is most often the one asked about (pugixml's
`strconv_escape` for "which function decodes ... numeric character references"). So once
the second stage has scored the candidates, each of the first `WITHIN` gains `WEIGHT` times
its coverage: the share of the question's words (stemmed as the index stems them, so
"decodes" meets `decode`) that it holds, each word weighted by how rare it is among those
`WITHIN` (log(1 + n / (1 + holders))): a word every candidate holds separates none of them.
A method also holds the words of its class's docstring when the class is among them: a class
docstring says what its methods do ("nothing exists on disk until the first write" for
click's lazy `File.convert`), which is the class-level evidence `classes.py` acts on next.

Measured 2026-11-27 against the same code without it (hybrid hit@5 / MRR@10, same session;
every rank compared per question), at the weight chosen, 0.1 (0.2 in brackets):
- the 100 questions, local: 0.88 / 0.7435 -> 0.88 / 0.7439 (rxjs-20 4 -> 3, click-20
  4 -> 5) [0.88 / 0.7505: express-01 and rxjs-09 2 -> 1, rxjs-18 3 -> 2, click-16 1 -> 2];
  hash 0.79 / 0.6597 -> 0.79 / 0.6647 [0.6655]; confidence unchanged (0.94 local, 0/32
  off-topic); CoSQA nDCG@10 0.5997 -> 0.6025 [0.6003]; SWE-bench (hash) unchanged;
- the tryout (held out): 0.865 / 0.705 -> 0.876 / 0.716 [0.876 / 0.715];
- user probes written blind by helper sessions (not an evaluation set), first / top 5: the
  1,200 of the ten earlier passes 596 / 950 -> 609 / 950 [611 / 954]; two passes written
  after this step (240 probes, 20 repositories) 112 / 191 -> 114 / 190 [115 / 186].
The given sets split (the 100 questions' MRR@10 wants 0.2, CoSQA 0.1) and the held-out ones
favour 0.1 in the first five: at 0.2 the new passes lost five answers from the first five,
where long functions or a class's methods held more of the question's words. 0.15: the 100
questions 0.88 / 0.7505 (hash 0.6647), the probes 609 / 953, the new passes 114 / 188.
Variants (the probes; the 100 questions' local MRR@10; the tryout's; at 0.2):
- the same at the very end of the pipeline: 612 / 953, 0.7572, 0.710, but re-sorting there
  undid the placements made for a reason (a setter below the code that reads it, a pasted
  message's user above its binding);
- here without the class docstring: 607 / 956, 0.7622, 0.709, but a method whose words are
  its class's lost its place to a function that merely shares the question's words;
- weight 0.25 / 0.3: MRR@10 0.7572 / 0.7567, but the hash 100 questions' hit@5 0.79 ->
  0.78; the first 30 instead of 50: MRR@10 0.7589, but CoSQA 0.598 (below its dense arm
  alone, 0.5986), the tryout 0.710 and the probes 609 / 958;
- the repository's file frequencies as the words' weights instead of the candidates': 608 /
  950, 0.7522; a longer chunk's coverage discounted (BM25's b = 0.5 over the candidates'
  mean length): 610 / 950, 0.7495; the code-vocabulary words of the question's phrases
  (`expansion.py`) counted too: probes and tryout identical, MRR@10 0.7555 (rxjs-11 2 -> 1);
- every word alike, exact tokens only (offline over the final top 30): the probes 605 / 955,
  a smaller gain. The share of a chunk's *name* in the question had been tried before and
  lost (`rerank.py`).
Cost: ~3 ms per query at 100k chunks, tokenizing 50 chunks (BENCHMARKS.md, the latency
A/B). Not for a pasted issue (it wants files, and its hundred words make every chunk cover a
little), a pasted message (the literal steps place its writer) or a question about uses
(those come in the order of the uses).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from codeqa_lsp.chunking.model import Chunk
from codeqa_lsp.index.stems import STEMMER
from codeqa_lsp.index.tokens import query_terms, tokenize
from codeqa_lsp.retrieval.classes import type_home

WITHIN = 50  # results re-scored (see the module docstring)
WEIGHT = 0.1  # the coverage term's weight against the second stage's scores (~0..1; see above)


def coverage_lifted(ranked: Sequence[tuple[Chunk, float]], query: str) -> list[tuple[Chunk, float]]:
    """`ranked` with its first `WITHIN` results re-scored by their coverage of `query`."""
    head, rest = list(ranked[:WITHIN]), list(ranked[WITHIN:])
    terms = query_terms(query)
    if len(head) < 2 or not terms or WEIGHT <= 0:
        return list(ranked)
    held = [words_held(chunk.text, terms) for chunk, _ in head]
    class_docs = {(type_home(c), c.symbol): c.doc for c, _ in head if c.kind == "class" and c.doc}
    for place, (chunk, _) in enumerate(head):
        if chunk.kind == "method" and "." in chunk.symbol:
            doc = class_docs.get((type_home(chunk), chunk.symbol.rsplit(".", 1)[0]))
            if doc:
                held[place] |= words_held(doc, terms)
    holders = {t: sum(t in h for h in held) for t in terms}
    weights = {t: math.log(1 + len(head) / (1 + holders[t])) for t in terms}
    total = sum(weights.values())
    lifted = [
        (chunk, score + WEIGHT * sum(weights[t] for t in h) / total)
        for (chunk, score), h in zip(head, held, strict=True)
    ]
    lifted.sort(key=lambda item: -item[1])  # stable: ties keep the pipeline's order
    return lifted + rest


def words_held(text: str, terms: Sequence[str]) -> set[str]:
    """The query `terms` whose stem one of `text`'s tokens has (`decodes` meets `decode`)."""
    tokens = set(tokenize(text))
    found = {t for t in terms if t in tokens}
    missing = [t for t in terms if t not in found]
    if not missing:
        return found
    wanted = {t: set(stems) for t, stems in STEMMER.terms(missing).items()}
    # Porter only rewrites a word's end: a token with one of these stems starts with all of
    # the stem but its last letter, so only those tokens need stemming.
    prefixes = tuple({s[:-1] or s for stems in wanted.values() for s in stems})
    near = [token for token in tokens if token.startswith(prefixes)] if prefixes else []
    have = {s for stems in STEMMER.terms(near).values() for s in stems}
    return found | {t for t, stems in wanted.items() if stems & have}
