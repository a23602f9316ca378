"""What the searcher and the answerer read from a local index (`ChunkReader`'s methods).

A mixin of `Indexer`, which owns the store, the vector file and the embedder these read
through; kept in its own module so the indexer's write path (index runs, saves, crash
recovery) stays small. Every method is safe from any thread (the store gives each thread its
own read connection; the vector store locks).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

import numpy as np

from codeqa_lsp.chunking.model import Chunk
from codeqa_lsp.config import Settings
from codeqa_lsp.index.embedders import Embedder, EmbedderError
from codeqa_lsp.index.filters import SearchFilters
from codeqa_lsp.index.store import Store, label_for
from codeqa_lsp.index.vectors import VectorStore

log = logging.getLogger(__name__)


class IndexReads:
    settings: Settings
    store: Store
    vectors: VectorStore
    _base_embedder: Embedder
    _embed_query_cached: Callable[[str], np.ndarray]

    def chunks(self, path: str | None = None, language: str | None = None) -> list[Chunk]:
        return self.store.chunks(path=path, language=language)

    def get_chunks(self, ids: Sequence[str]) -> list[Chunk]:
        return self.store.get_chunks(ids)

    def definitions(self, name: str) -> list[Chunk]:
        return self.store.definitions(name)

    def chunk_text(self, rel_path: str, text: str) -> list[Chunk]:
        from codeqa_lsp.chunking.chunker import chunk_source

        return chunk_source(rel_path, text, language=None, max_tokens=self.settings.chunk_tokens)

    def file_hash(self, rel_path: str) -> str | None:
        return self.store.file_hash(rel_path)

    def coverage(self) -> float:
        chunks = self.store.chunk_count()
        return 1.0 if chunks == 0 else min(1.0, len(self.vectors) / chunks)

    # -- retrieval arms ------------------------------------------------------------------
    def bm25(
        self, query: str, limit: int, filters: SearchFilters | None = None
    ) -> list[tuple[Chunk, float]]:
        return self.store.bm25(query, limit, filters)

    def bm25_terms(
        self, terms: Sequence[str], limit: int, filters: SearchFilters | None = None
    ) -> list[tuple[Chunk, float]]:
        """The BM25 arm over chosen query terms (a long query's salient ones)."""
        return self.store.bm25_terms(terms, limit, filters)

    def definitions_in_paths(self, paths: Sequence[str]) -> list[tuple[str, str, str]]:
        return self.store.definitions_in_paths(paths)

    def file_bm25(self, terms: Sequence[str], limit: int) -> list[tuple[str, float]]:
        return self.store.file_bm25(terms, limit)

    def file_document_counts(self, terms: Sequence[str]) -> tuple[dict[str, int], int]:
        return self.store.file_document_counts(terms)

    def file_sizes(self, paths: Sequence[str]) -> dict[str, int]:
        return self.store.file_sizes(paths)

    def indexed_paths(self) -> list[str]:
        return self.store.indexed_paths()

    def paths_generation(self) -> tuple[int, ...]:
        """Changes whenever `indexed_paths` may have (what caches of it are keyed by)."""
        return self.store.generation()

    def embed_query(self, query: str) -> np.ndarray | None:
        """The query's vector (not counted as indexing work); None if the embedder fails."""
        try:
            return self._embed_query_cached(query)
        except EmbedderError as exc:
            log.warning("query embedding failed: %s", exc)
            return None

    def _embed_query_uncached(self, query: str) -> np.ndarray:
        vector = np.asarray(self._base_embedder.embed([query]), dtype=np.float32)[0]
        vector.setflags(write=False)  # shared by every caller through the cache
        return vector

    def cosines_for(self, chunk_ids: Sequence[str], vector: np.ndarray) -> list[float | None]:
        """Each chunk's cosine with `vector` (its best window's), None for one not embedded
        yet (progressive indexing): lets a search score candidates the dense arm did not
        return."""
        return self.vectors.best_cosines([label_for(i) for i in chunk_ids], vector)

    def dense(
        self, query: str, limit: int, filters: SearchFilters | None = None
    ) -> list[tuple[Chunk, float]]:
        vector = self.embed_query(query)
        return [] if vector is None else self.dense_by_vector(vector, limit, filters)

    def dense_by_vector(
        self, vector: np.ndarray, limit: int, filters: SearchFilters | None = None
    ) -> list[tuple[Chunk, float]]:
        allowed = (
            None if filters is None or filters.is_empty() else self.store.labels_matching(filters)
        )
        hits = self.vectors.query(vector, limit, allowed)
        by_label = self.store.chunks_by_label([label for label, _ in hits])
        return [(by_label[label], score) for label, score in hits if label in by_label]
