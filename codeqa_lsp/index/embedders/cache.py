"""Embedding cache: diskcache keyed by (embedder, model, dim, sha256 of the text).

Why: chunk ids change when a file moves or a sibling is edited in ways that keep a
definition's text; and after a crash the vector file may lag SQLite. Either way the
vector is one cache lookup away, so re-indexing unchanged code makes zero embedding calls.
The cache is size-bounded (least recently stored entries are evicted first).
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)


class EmbeddingCache:
    def __init__(self, directory: Path, size_limit: int, namespace: str) -> None:
        import diskcache

        directory.mkdir(parents=True, exist_ok=True)
        self.namespace = namespace
        self._cache: diskcache.Cache | None
        try:
            self._cache = diskcache.Cache(
                str(directory),
                size_limit=size_limit,
                eviction_policy="least-recently-stored",
                cull_limit=0,  # culled explicitly after each batch (see put_many)
            )
        except Exception as exc:  # a corrupt cache only costs speed: work without it
            log.warning(
                "embedding cache at %s unusable (%s); continuing without it", directory, exc
            )
            self._cache = None

    def _key(self, text: str) -> str:
        return (
            f"{self.namespace}|{hashlib.sha256(text.encode('utf-8', 'surrogatepass')).hexdigest()}"
        )

    def get_many(self, texts: Sequence[str], dim: int) -> list[np.ndarray | None]:
        if self._cache is None:
            return [None] * len(texts)
        out: list[np.ndarray | None] = []
        for text in texts:
            try:
                raw = self._cache.get(self._key(text))
            except Exception:
                raw = None
            vector = np.frombuffer(raw, dtype=np.float32) if isinstance(raw, bytes) else None
            out.append(vector if vector is not None and vector.shape == (dim,) else None)
        return out

    def put_many(self, texts: Sequence[str], vectors: np.ndarray) -> None:
        if self._cache is None:
            return
        try:
            # One transaction per batch (a commit per entry costs ~0.5 ms), then an explicit
            # cull: diskcache measures its size from the database file, which only shrinks
            # when a write commits, so culling inside the transaction would empty the cache.
            with self._cache.transact():
                for text, vector in zip(texts, vectors, strict=True):
                    self._cache.set(self._key(text), np.asarray(vector, dtype=np.float32).tobytes())
            self._cache.cull()
        except Exception as exc:
            log.warning("embedding cache write failed (%s)", exc)

    def volume(self) -> int:
        return int(self._cache.volume()) if self._cache is not None else 0

    def close(self) -> None:
        if self._cache is not None:
            self._cache.close()
