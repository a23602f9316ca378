"""Bulk embedding on OpenVINO: the same fp32 MiniLM graph, with bf16 products where the CPU
multiplies bf16 natively (AMX or AVX-512 BF16).

Why a second runtime: onnxruntime has no bf16 kernels for x86, and its int8 products
(`quantize.py`) still leave attention, layer norms and the casts in fp32. OpenVINO's CPU
plugin runs the whole graph on the matrix units and accumulates in fp32. Measured
2026-11-26 on click/src's 813 texts (581 chunks and their later windows, idle 2-core Xeon
with AMX, batches of 32, best of two, one process):

| runtime | seconds | cosine to onnxruntime fp32 (mean / min) |
|---|---|---|
| onnxruntime fp32 | 14.6-14.9 | 1 |
| onnxruntime ffn-int8 (the default before) | 10.4-10.8 | 0.99919 / 0.99831 |
| OpenVINO bf16 (this module) | 4.0-4.4 | 0.99998 / 0.99997 |
| OpenVINO f32 (a CPU without native bf16) | 12.3-13.3 | 1.00000 |

So bulk embedding is 2.5x faster than the int8 default and closer to the reference
numerics. A text's bf16 vector does not depend on its batch-mates (batches of 8 and 64:
cosine >= 0.99999), and `infer` releases the GIL (a Python thread kept 66% of its idle pace
on the other core during a run). The ffn-int8 graph is refused by OpenVINO's CPU plugin
(its per-token FakeQuantize), so only fp32 runs here.

Why not every call: `import openvino` and compiling the graph take 0.3-0.5 s, while
onnxruntime answers a one-off question in ~0.1 s from a cold start (`codeqa search` must
stay within 1.5x of the hash embedder's time). Small calls therefore stay on onnxruntime
fp32, and which runtime a call uses depends only on its size (`local.BULK_MIN_TEXTS`), so
a question always gets the same vector. Tried and dropped (2026-11-26): opening OpenVINO
in a background thread while an index run chunks, so the open overlaps chunking: click/src
clean indexes 4.80-5.03 s against 4.85-5.12 s without (four alternating runs), noise.

No telemetry: `import openvino` also imports its model-conversion tools, which send a usage
event over the network at import unless the user opted out beforehand (openvino-telemetry,
opt-out; seen with strace here: a DNS lookup from a forked process). Code must not leave
the machine, so those modules are made unimportable (`_refuse_telemetry`): the package
catches the ImportError and loads without them; the runtime never needs them.
"""

from __future__ import annotations

import logging
import sys
import threading
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

# Modules whose import sends telemetry (see the module docstring); None in sys.modules makes
# `import` raise ImportError, which `openvino/__init__.py` catches for the conversion tools.
TELEMETRY_MODULES = ("openvino.tools.ovc", "openvino_telemetry")
# Batch widths are rounded up to this many tokens. click/src's 813 texts in batches of 16
# (2026-11-26, idle, one process, first / second pass): exact widths 4.67 / 4.22 s and
# 554 MB resident, multiples of 32 4.27 / 4.11 s and 459 MB, of 64 4.71 / 4.45 s and 427 MB;
# batches of 8 at 32: 4.31 / 4.31 s and 380 MB (`local.BULK_BATCH_SIZE`).
WIDTH_STEP = 32


def _refuse_telemetry() -> None:
    for name in TELEMETRY_MODULES:
        if name not in sys.modules:
            sys.modules[name] = None  # type: ignore[assignment]


class BulkRunner:
    """A compiled OpenVINO model of the fp32 graph at `model_path`; `run` embeds one padded
    batch (mean-pooled, not normalised: the graph's output, as onnxruntime gives it)."""

    def __init__(self, model_path: Path, threads: int) -> None:
        _refuse_telemetry()
        import openvino as ov

        core = ov.Core()
        capabilities = core.get_property("CPU", "OPTIMIZATION_CAPABILITIES")
        self.precision = "bf16" if "BF16" in capabilities else "f32"
        config = {
            "INFERENCE_PRECISION_HINT": self.precision,
            "INFERENCE_NUM_THREADS": threads,
            "PERFORMANCE_HINT": "LATENCY",
        }
        self._compiled: Any = core.compile_model(str(model_path), "CPU", config)
        self._requests = threading.local()

    def run(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Vectors of one batch. The batch is padded (masked) to a multiple of `WIDTH_STEP`
        tokens: OpenVINO keeps kernels and buffers per input shape, and a few widths instead
        of one per batch cut both the first pass's compile work and the memory."""
        width = -(-ids.shape[1] // WIDTH_STEP) * WIDTH_STEP
        if width != ids.shape[1]:
            pad = ((0, 0), (0, width - ids.shape[1]))
            ids, mask = np.pad(ids, pad), np.pad(mask, pad)
        # One request per thread: a request is not thread-safe, and reusing one keeps its
        # buffers (a new request per batch was 20% slower).
        request = getattr(self._requests, "request", None)
        if request is None:
            request = self._requests.request = self._compiled.create_infer_request()
        result = request.infer({"input_ids": ids, "attention_mask": mask})
        return np.array(result[self._compiled.output(0)], dtype=np.float32)


def open_runner(model_path: Path, threads: int) -> BulkRunner | None:
    """The bulk runner, or None (logged once by the caller's choice) when OpenVINO is not
    installed or refuses the graph: onnxruntime then embeds everything, as before."""
    try:
        return BulkRunner(model_path, threads)
    except ImportError:
        log.info("openvino is not installed; bulk embedding stays on onnxruntime")
    except Exception as exc:  # a broken install or an unsupported CPU: never fatal
        log.warning(
            "OpenVINO could not compile the embedding model (%s: %s); "
            "bulk embedding stays on onnxruntime",
            type(exc).__name__,
            (str(exc).strip().splitlines() or [""])[0],  # OpenVINO's messages run to pages
        )
    return None
