"""`hash`: a numpy-only embedder hashing code-aware tokens into a fixed dimension.

Why it exists: it is always available (no model, no network), deterministic across
processes (no salted `hash()`), and fast enough for tests. Its vectors are a lexical
signal, not a semantic one; `local` is the real default when installed.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from codeqa_lsp.index.embedders.base import l2_normalize
from codeqa_lsp.index.tokens import tokenize

DEFAULT_DIM = 384


@lru_cache(maxsize=65_536)
def _bucket(token: str, dim: int) -> tuple[int, float]:
    digest = hashlib.blake2b(token.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    value = int.from_bytes(digest, "little")
    return value % dim, (1.0 if (value >> 63) & 1 else -1.0)


class HashEmbedder:
    """Signed feature hashing of tokens with sublinear term frequency (1 + log tf)."""

    name = "hash"

    def __init__(self, dim: int = DEFAULT_DIM) -> None:
        self.dim = dim
        self.model = f"token-hash-v1-{dim}"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            counts = Counter(tokenize(text))
            if not counts:
                out[row, 0] = 1.0  # a fixed direction for token-less text, never NaN
                continue
            for token, tf in counts.items():
                index, sign = _bucket(token, self.dim)
                out[row, index] += sign * (1.0 + math.log(tf))
        return l2_normalize(out)
