"""Query expansion for the BM25 arm: the words code uses for what a user asks about.

A question and the code that answers it often share no word: users describe a concern in
everyday phrases, while identifiers and docstrings use the field's own terms. The dense
arm is meant to bridge that, but a small embedder often does not: `make demo`'s question
about keeping credentials out of the index reached the module that decides it at cosine
0.19 (MiniLM), below forty unrelated chunks, and shares none of its words with it. So a
short question's BM25 arm also runs the code-vocabulary terms of the phrases it contains,
as a second BM25 query whose score is added at `EXPANSION_WEIGHT` of the original's.

The table (`code_vocabulary.json`, data beside this module so that a search over this
project does not find the table itself) is general programming vocabulary, written from
what code calls things, not from the evaluation questions. Only phrases that are
unambiguous in a question about code are in it (a bare "key" is a dict key as often as a
credential, so it is not).

Tried and dropped (2026-11-25, local, the 100 questions, hybrid hit@5 / MRR@10 against
0.86 / 0.748 in the same session): the table's job done by the embedder instead, each
content word of the question adding the repository's words nearest to it (MiniLM vectors of
single words, over every word in 2 to 20% of the chunks). Cosine >= 0.6, two per word:
0.83 / 0.725; >= 0.75, one per word: 0.84 / 0.720. MiniLM's nearest words are associations
("listeners" -> "adding", "emitted"), not the code's names for the same thing.

The table also holds the abbreviations code writes for a word a question spells out (a
message is `msg`, comma-separated values `csv`, a comparison `cmp`): spdlog's `msg` and
pflag's `readAsCSV` were out of reach of "how does the async logger pass messages to the
background thread" and "how is a string slice flag parsed from comma separated values".
Measured (2026-11-27, local, same session; the 100 questions hybrid hit@5 / MRR@10 against
0.87 / 0.740, hash 0.77 / 0.630; the tryout 0.82 / 0.655): 50 abbreviations, including
request/req, response/resp, error/err, string/str, value/val, index/idx: 0.87 / 0.738, hash
0.77 / 0.620, tryout 0.84 / 0.675; without those 17 commonest: 0.87 / 0.740, hash 0.76 /
0.625 (click-02 2 -> 8: "command line" -> cli, argv in a CLI library), tryout 0.84 / 0.660;
also without command line, argument(s), parameter(s), environment, directory, source,
index (the table as shipped): the 100 questions identical (local and hash), CoSQA 0.600 =
0.600, the tryout 0.84 / 0.660 (spdlog's two questions into the top 5), a user pass's 81
probes 37 first / 64 in the top 5 -> 37 / 65.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path

from codeqa_lsp.index.tokens import STOPWORDS, token_set, tokenize

# Added BM25 score = EXPANSION_WEIGHT × the expansion query's BM25 score (1.0 makes it one
# BM25 query over both sets of terms). Measured: see `search.py` where it is used.
EXPANSION_WEIGHT = 1.0

_VOCABULARY = Path(__file__).with_name("code_vocabulary.json")
_WORD = re.compile(r"[A-Za-z]+")


@lru_cache(maxsize=1)
def vocabulary() -> dict[str, tuple[str, ...]]:
    """Phrase (lowercase words joined by one space) → the code's words for it."""
    raw = json.loads(_VOCABULARY.read_text(encoding="utf-8"))
    return {phrase: tuple(words) for phrase, words in raw["phrases"].items()}


def expansion_terms(query: str) -> list[str]:
    """Code-vocabulary tokens for the phrases `query` contains, minus its own tokens.

    Phrases are matched on plain words with stopwords kept ("kept out" needs its "out")."""
    table = vocabulary()
    longest = max((len(p.split()) for p in table), default=0)
    words = [w.lower() for w in _WORD.findall(query)]
    own = token_set(query)
    found: dict[str, None] = {}
    for size in range(longest, 0, -1):
        for start in range(len(words) - size + 1):
            for term in table.get(" ".join(words[start : start + size]), ()):
                for token in tokenize(term):
                    if token not in own and token not in STOPWORDS:
                        found.setdefault(token, None)
    return list(found)
