"""Near copies of a better-ranked result say nothing new: fold them.

Repositories carry the same definition several times over: documentation examples in one
variant per Python version or style (typer's `docs_src/options/version/tutorial003_py310.py`
and `tutorial003_an_py310.py` took four of the first five results for "how to add a
--version option with a callback"), sinks that differ in one line (spdlog's daily and hourly
file sinks), samples next to the library, versioned manuals, vendored copies. A result with
the same name and kind as one ranked above it in another file, sharing `NEAR_COPY` of its
distinct words, is dropped, so the first results are distinct places. Twins within one file
are deliberate and stay (the OpenAI SDK's `Completions.create` and `AsyncCompletions.create`).

Measured 2026-11-26 (local, same session, against no folding): the 100 questions unchanged
(no rank moved), CoSQA hybrid nDCG@10 0.5992 -> 0.5997, the held-out tryout questions hit@5
0.80 -> 0.82 and MRR@10 0.634 -> 0.636 (spdlog's "keep only a fixed number of old output
files" and MediatR's "request exception handlers" from rank 7 into the top 5). A share of 0.7
measured the same on all three. Not for a pasted bug report (`distinct_places`): it wants
files, and the bug may be in either copy; so SWE-bench's file rankings do not change.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from codeqa_lsp.chunking.model import Chunk
from codeqa_lsp.retrieval.enclosing import fold_nested

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+")
NEAR_COPY = 0.8  # Jaccard share of distinct words (see the module docstring)
# Only the first results are read; comparing further down costs time for nothing.
FOLD_WITHIN = 20


def fold_near_copies(
    ranked: Sequence[tuple[Chunk, float]], keep: set[str] | frozenset[str] = frozenset()
) -> list[tuple[Chunk, float]]:
    """`ranked` without each result that is a near copy (same name and kind, another file,
    `NEAR_COPY` of its distinct words shared) of one ranked above it; ids in `keep` stay."""
    out: list[tuple[Chunk, float]] = []
    shown: dict[tuple[str, str], list[Chunk]] = {}
    words: dict[str, frozenset[str]] = {}

    def words_of(chunk: Chunk) -> frozenset[str]:
        if chunk.id not in words:
            words[chunk.id] = frozenset(_WORD.findall(chunk.text))
        return words[chunk.id]

    def copies(chunk: Chunk, other: Chunk) -> bool:
        if chunk.path == other.path:
            return False  # twins in one file are deliberate (a sync and an async client)
        mine, theirs = words_of(chunk), words_of(other)
        return len(mine & theirs) >= NEAR_COPY * len(mine | theirs)

    for position, (chunk, score) in enumerate(ranked):
        if position >= FOLD_WITHIN:
            out.extend(ranked[position:])
            break
        earlier = shown.setdefault((chunk.name, chunk.kind), [])
        if chunk.id not in keep and any(copies(chunk, other) for other in earlier):
            continue
        earlier.append(chunk)
        out.append((chunk, score))
    return out


def distinct_places(
    ranked: Sequence[tuple[Chunk, float]], keep: set[str], long_query: bool
) -> list[tuple[Chunk, float]]:
    """The ranking with what repeats a higher result folded into it: nested functions and
    later parts of a split definition (`enclosing.fold_nested`), and near copies in other
    files unless the query is a pasted report (there either copy may hold the bug)."""
    ranked = fold_nested(ranked, keep=keep)
    return ranked if long_query else fold_near_copies(ranked, keep=keep)
