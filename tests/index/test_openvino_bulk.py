"""OpenVINO for bulk embedding: it serves batches and never a question, it sends nothing over
the network, and when it is missing or broken onnxruntime embeds everything instead."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from codeqa_lsp.index.embedders import local, openvino_bulk
from codeqa_lsp.index.embedders.local import LocalEmbedder
from tests.index.test_local_model import MIN_COSINE, REFERENCE_SNIPPETS, reference
from tests.local_model import LOCAL_MODEL_MARKS

pytestmark = LOCAL_MODEL_MARKS


def cosines_to_reference(vectors: np.ndarray) -> np.ndarray:
    expected = reference()
    return (vectors * expected).sum(axis=1) / np.linalg.norm(expected, axis=1)


def test_batches_go_to_openvino_and_a_question_never_does() -> None:
    embedder = LocalEmbedder()
    assert embedder.variant == "fp32" and embedder.bulk
    embedder.embed(["where is the retry budget reset"])
    assert not embedder._bulk_tried  # a question stays on onnxruntime: OpenVINO not opened
    vectors = embedder.embed(REFERENCE_SNIPPETS)
    assert embedder._bulk is not None and embedder._bulk.precision in ("bf16", "f32")
    assert cosines_to_reference(vectors).min() >= MIN_COSINE["openvino"]


def test_batch_widths_are_padded_without_changing_the_vectors() -> None:
    """Widths are rounded up to `WIDTH_STEP` tokens with masked padding: a text padded far
    past its length (a batch-mate of 250 tokens) keeps its vector."""
    embedder = LocalEmbedder()
    short = REFERENCE_SNIPPETS[1]
    with_short = embedder.embed([short, "x = 1"])
    with_long = embedder.embed([short, "word " * 250])
    assert float(with_short[0] @ with_long[0]) >= 0.9999


def test_importing_openvino_sends_no_telemetry(tmp_path: Path) -> None:
    """`import openvino` alone would load its telemetry (an event sent at import, opt-out)
    and write a consent folder under the home directory; the runner refuses both."""
    home = tmp_path / "home"
    home.mkdir()
    path = LocalEmbedder().cached_model_path()
    LocalEmbedder().embed(["build the cached graph first"])  # onnxruntime builds it
    script = (
        "import json, sys\n"
        "from codeqa_lsp.index.embedders.openvino_bulk import BulkRunner\n"
        f"BulkRunner(__import__('pathlib').Path({str(path)!r}), 1)\n"
        "print(json.dumps({name: sys.modules.get(name) is not None for name in "
        "('openvino', 'openvino_telemetry', 'openvino.tools.ovc')}))\n"
    )
    env = {**os.environ, "HOME": str(home), "USERPROFILE": str(home)}
    run = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stderr
    loaded = json.loads(run.stdout.strip().splitlines()[-1])
    assert loaded == {"openvino": True, "openvino_telemetry": False, "openvino.tools.ovc": False}
    assert list(home.iterdir()) == []  # no ~/intel consent or client-id files


def test_without_openvino_onnxruntime_embeds_everything(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setitem(sys.modules, "openvino", None)  # not importable
    embedder = LocalEmbedder()
    assert not embedder.bulk
    vectors = embedder.embed(REFERENCE_SNIPPETS)
    assert embedder._bulk is None
    assert cosines_to_reference(vectors).min() >= MIN_COSINE["fp32"]
    # Found at start but failing to import later (a half-removed install): the same, logged.
    installed = LocalEmbedder()
    installed.bulk = True
    with caplog.at_level(logging.INFO, logger="codeqa_lsp.index.embedders.openvino_bulk"):
        again = installed.embed(REFERENCE_SNIPPETS)
    assert installed._bulk_tried and installed._bulk is None
    assert any("not installed" in r.getMessage() for r in caplog.records)
    assert np.allclose(vectors, again, atol=1e-6)


def test_a_graph_openvino_refuses_is_one_warning_and_onnxruntime(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A broken install or a CPU the plugin does not support fails at compile time: one
    line, then the same numerics from onnxruntime (never a failed index)."""

    def refuse(self: object, model_path: Path, threads: int) -> None:
        raise RuntimeError("Exception from src/plugins/intel_cpu: unsupported\nsecond line")

    monkeypatch.setattr(openvino_bulk.BulkRunner, "__init__", refuse)
    embedder = LocalEmbedder()
    with caplog.at_level(logging.WARNING, logger="codeqa_lsp.index.embedders.openvino_bulk"):
        vectors = embedder.embed(REFERENCE_SNIPPETS)
        again = embedder.embed(REFERENCE_SNIPPETS)
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "could not compile" in warnings[0] and "\n" not in warnings[0]
    assert np.allclose(vectors, again, atol=1e-6)
    assert cosines_to_reference(vectors).min() >= MIN_COSINE["fp32"]


def test_only_fp32_runs_on_openvino() -> None:
    """The int8 graphs are onnxruntime's (OpenVINO's CPU plugin refuses ffn-int8's per-token
    quantisation), so they never try it."""
    for variant in ("ffn-int8", "int8"):
        assert not LocalEmbedder(variant=variant).bulk


def test_two_threads_embedding_batches_at_once_get_the_vectors_they_get_alone() -> None:
    """The server indexes and embeds a saved file's chunks on different threads: each thread
    has its own inference request on the one compiled model."""
    embedder = LocalEmbedder()
    batches = [
        [f"def handler_{n}(event):\n    return event.get('key_{n}')\n" for n in range(12)],
        [
            f"class Store{n}:\n    def save(self, row):\n        self.rows.append(row)\n"
            for n in range(9)
        ],
    ]
    alone = [embedder.embed(batch) for batch in batches]
    results: dict[int, np.ndarray] = {}

    def run(i: int) -> None:
        for _ in range(3):
            results[i] = embedder.embed(batches[i])

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert all(not thread.is_alive() for thread in threads)
    for i in range(2):
        assert np.allclose(results[i], alone[i], atol=1e-6)


def test_an_idle_runner_is_closed_and_reopened_with_the_same_vectors(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A language server would otherwise hold OpenVINO's ~210 MB from its first index to
    its exit; after `BULK_IDLE_SECONDS` without a batch it is dropped, and the next batch
    opens it again."""
    monkeypatch.setattr(local, "BULK_IDLE_SECONDS", 0.3)
    embedder = LocalEmbedder()
    before = embedder.embed(REFERENCE_SNIPPETS)
    first = embedder._bulk
    assert first is not None
    deadline = time.monotonic() + 30
    while embedder._bulk is not None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert embedder._bulk is None and not embedder._bulk_tried
    after = embedder.embed(REFERENCE_SNIPPETS)
    assert embedder._bulk is not None and embedder._bulk is not first
    assert np.allclose(after, before, atol=1e-6)
