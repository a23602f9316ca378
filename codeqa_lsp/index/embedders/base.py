"""The embedder protocol and helpers every embedder shares."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np


class EmbedderError(RuntimeError):
    """An embedder cannot work (missing key, refused remote, bad credentials, no model).

    The message is meant for the user as is: it says what is wrong and how to fix it.
    """


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalized float32 vectors of a fixed dimension.

    `name`, `model` and `dim` identify the vector space: the index records them and
    re-embeds everything when they change, so vectors from two models are never mixed.
    """

    @property
    def name(self) -> str: ...

    @property
    def model(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


def window_texts(embedder: object, texts: Sequence[str]) -> list[list[str]]:
    """Per text, what to embed for it: the text alone, or with its later windows when the
    embedder reads a bounded window and says how to cut one (`LocalEmbedder.windows`)."""
    windows = getattr(embedder, "windows", None)
    return [[text] for text in texts] if windows is None else windows(texts)


def l2_normalize(vectors: np.ndarray) -> np.ndarray:
    """Row-normalize to unit length; all-zero rows stay zero instead of becoming NaN."""
    vectors = np.asarray(vectors, dtype=np.float32)
    if vectors.ndim == 1:
        vectors = vectors.reshape(1, -1)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (vectors / norms).astype(np.float32, copy=False)


class CountingEmbedder:
    """Wraps an embedder and counts calls and texts, so tests and benchmarks can assert
    things like "editing one function re-embedded exactly one chunk"."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.name = inner.name
        self.model = inner.model
        self.dim = inner.dim
        self.calls = 0
        self.texts = 0

    def windows(self, texts: Sequence[str]) -> list[list[str]]:
        return window_texts(self.inner, texts)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        self.calls += 1
        self.texts += len(texts)
        vectors = np.asarray(self.inner.embed(texts), dtype=np.float32)
        if vectors.shape != (len(texts), self.dim):
            raise EmbedderError(
                f"embedder {self.name}/{self.model} returned shape {vectors.shape}, "
                f"expected ({len(texts)}, {self.dim})"
            )
        return l2_normalize(vectors)
