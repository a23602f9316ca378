"""Hostile query text through the real pipeline (SQLite FTS5, hnswlib, the `hash` embedder):
every query gets an answer. Each text below once made a pattern backtrack over it, n² steps:
a 200,000-character one held a search thread for 45 s to four minutes, so a megabyte pasted
into a request would have held it for hours. No wall-clock limit here (the benchmarks time
things); a regression shows as a test that takes minutes."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.retrieval.searchers import hash_searcher
from tests.retrieval.test_literals import FILES

SIZE = 200_000

HOSTILE = {
    # `_ACRONYM_THEN_WORD` (query.py) and Ruby's frame path (frames.py) inside one long word.
    "capitals": "A" * SIZE,
    "camel case": "aB" * (SIZE // 2),
    "backticks": "`a" * (SIZE // 2),
    "quotes": "'a" * (SIZE // 2),
    "brackets": "(a" * (SIZE // 2),
    # Go's frame pattern split a long dotted word every way.
    "dotted": "a." * (SIZE // 2),
    # A navigation's trailing blanks.
    "padded navigation": "where is parse defined" + " " * SIZE + "?x",
    "kind words": "Foo class " * (SIZE // 10),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_hostile_query_gets_an_answer(tmp_path: Path, name: str) -> None:
    with hash_searcher(tmp_path, FILES) as searcher:
        response = searcher.search(HOSTILE[name])
    # Nothing in the workspace answers noise: an answer, and an honest one.
    assert not response.confident, response.reason
