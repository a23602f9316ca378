"""`SearchFilters` and what a filter means.

They live in the index layer because the index applies them inside its own queries (SQLite
`WHERE` clauses, Postgres conditions, the hnswlib label filter); retrieval and the fronts
build them. `chunk_passes` is the one definition of a filter's meaning, used for candidates
that do not come from an index query (the exact-symbol fast path) and as the reference the
stores are tested against.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import pathspec

from codeqa_lsp.chunking.model import Chunk, ChunkKind


@dataclass(frozen=True)
class SearchFilters:
    languages: tuple[str, ...] = ()
    path_globs: tuple[str, ...] = ()  # gitignore-style globs over workspace-relative paths
    kinds: tuple[ChunkKind, ...] = ()

    def is_empty(self) -> bool:
        return not (self.languages or self.path_globs or self.kinds)


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
