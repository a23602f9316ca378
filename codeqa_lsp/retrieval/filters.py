"""Applying `SearchFilters` to chunks.

The index arms filter inside their own queries where they can; this predicate is the one
definition of what a filter means, used for candidates that do not come from an arm (the
exact-symbol fast path) and as the reference the arms are tested against.
"""

from __future__ import annotations

from functools import lru_cache

import pathspec

from codeqa_lsp.chunking.model import Chunk
from codeqa_lsp.retrieval.model import SearchFilters


@lru_cache(maxsize=256)
def path_spec(globs: tuple[str, ...]) -> pathspec.PathSpec:
    """gitignore-style globs (`src/`, `*.py`, `lib/**/router*`) as one matcher."""
    return pathspec.PathSpec.from_lines("gitignore", globs)


def chunk_passes(chunk: Chunk, filters: SearchFilters | None) -> bool:
    if filters is None or filters.is_empty():
        return True
    if filters.languages and chunk.language not in filters.languages:
        return False
    if filters.kinds and chunk.kind not in filters.kinds:
        return False
    return not filters.path_globs or path_spec(filters.path_globs).match_file(chunk.path)
