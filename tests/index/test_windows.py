"""Windows of long chunks (`embedders/windows.py`): where they are cut, and what they buy
with the real MiniLM on onnxruntime over a real index."""

from __future__ import annotations

import re
import threading
from pathlib import Path

import pytest

from codeqa_lsp.config import Settings
from codeqa_lsp.index.embedders.local import LocalEmbedder
from codeqa_lsp.index.embedders.windows import (
    MIN_WINDOW_TOKENS,
    WINDOW_STRIDE,
    WINDOWS,
    window_starts,
    window_texts,
)
from codeqa_lsp.index.indexer import Indexer
from codeqa_lsp.index.model import IndexProgress
from codeqa_lsp.index.store import label_for
from tests.local_model import needs_local_model, write_workspace


def test_a_text_that_fits_has_no_later_windows() -> None:
    assert window_starts(256, 256) == []
    assert window_starts(257, 256) == [WINDOW_STRIDE]
    # A last window with almost nothing left is not worth a vector.
    assert window_starts(2 * WINDOW_STRIDE + MIN_WINDOW_TOKENS, 256) == [WINDOW_STRIDE]
    assert len(window_starts(100_000, 256)) == WINDOWS - 1


def test_later_windows_keep_the_header_line() -> None:
    text = "src/a.py · parse · function\n" + " ".join(f"w{i}" for i in range(400))
    # One token per word after the header (offsets as a tokenizer reports them).
    body = len(text.split("\n", 1)[0]) + 1
    offsets = [(0, 0)] + [(m.start(), m.end()) for m in re.finditer(r"w\d+", text[body:])]
    offsets = [(0, 0)] + [(body + a, body + b) for a, b in offsets[1:]]
    texts = window_texts(text, offsets, 256)
    assert texts[0] == text and len(texts) == 2
    assert texts[1] == f"src/a.py · parse · function\n{text[offsets[WINDOW_STRIDE][0] :]}"
    assert texts[1].split("\n", 1)[1].startswith(f"w{WINDOW_STRIDE - 1} ")


LONG_FUNCTION = (
    "def load_settings(path):\n"
    '    """Read the settings file and fill in defaults."""\n'
    + "".join(f"    value_{i} = raw.get('option_{i}', DEFAULTS['option_{i}'])\n" for i in range(14))
    + "    message = EmailMessage()\n"
    "    message['Subject'] = 'settings reloaded'\n"
    "    with smtplib.SMTP('localhost') as server:\n"
    "        server.send_message(message)  # mail the administrator about the reload\n"
)
SHORT_FILES = {
    "colors.py": "def blend(a, b):\n    return tuple((x + y) / 2 for x, y in zip(a, b))\n",
    "paths.py": "def home_dir():\n    return os.path.expanduser('~')\n",
    "timing.py": "def elapsed(start):\n    return time.monotonic() - start\n",
}


@needs_local_model
def test_the_dense_arm_finds_what_a_long_function_does_past_the_first_window(
    tmp_path: Path,
) -> None:
    root = write_workspace(tmp_path / "ws", {"settings.py": LONG_FUNCTION, **SHORT_FILES})
    indexer = Indexer(root, Settings(embedder="local", index_dir=str(tmp_path / "idx")))
    try:
        assert indexer.index().embedded == 4
        (chunk,) = indexer.chunks("settings.py")
        windows = LocalEmbedder().windows([chunk.embed_text()])[0]
        assert len(windows) > 1 and "smtplib" in windows[1]
        assert len(indexer.vectors) == 4 and len(indexer.vectors.live_labels()) == 4
        query = "email the administrator when the configuration is reloaded"
        vector = indexer.embed_query(query)
        assert vector is not None
        first_window_only = float(LocalEmbedder().embed([chunk.embed_text()])[0] @ vector)
        (best,) = indexer.cosines_for([chunk.id], vector)
        assert best is not None and best > first_window_only + 0.05
        top, score = indexer.dense(query, 1)[0]
        assert top.id == chunk.id and score == pytest.approx(best, abs=1e-4)
        # Editing the function replaces its windows too: a short version has one vector.
        (root / "settings.py").write_text("def load_settings(path):\n    return {}\n")
        indexer.update_file("settings.py")
        assert len(indexer.vectors) == 4
        (short,) = indexer.chunks("settings.py")
        assert indexer.cosines_for([short.id, chunk.id], vector)[1] is None
    finally:
        indexer.close()


@needs_local_model
def test_every_chunk_gets_its_first_vector_before_any_later_window(tmp_path: Path) -> None:
    """Two passes (`index/embedding.py`): coverage is complete before the later windows are
    embedded, and a run stopped between the passes leaves them owed to the next run, which
    embeds only those."""
    root = write_workspace(tmp_path / "ws", {"settings.py": LONG_FUNCTION, **SHORT_FILES})
    settings = Settings(embedder="local", index_dir=str(tmp_path / "idx"))
    indexer = Indexer(root, settings)
    stop = threading.Event()
    phases: list[tuple[str, int, int]] = []

    def progress(p: IndexProgress) -> None:
        phases.append((p.phase, p.done, p.total))
        if p.phase == "windows":
            # Every chunk has its first vector by the time later windows start.
            assert indexer.coverage() == 1.0
            stop.set()

    try:
        report = indexer.index(progress=progress, cancel=stop)
        assert report.cancelled and report.embedded == 4 and report.windows_embedded == 0
        assert report.dense_ready_seconds is not None
        assert ("windows", 0, 1) in phases
        (chunk,) = indexer.chunks("settings.py")
        vector = indexer.embed_query("email the administrator when the configuration is reloaded")
        assert vector is not None
        first_window_only = indexer.cosines_for([chunk.id], vector)[0]
        assert indexer.vectors.owed_windows() == {label_for(chunk.id)}
    finally:
        indexer.close()
    # The next run (a new process) owes nothing new but the long chunk's windows.
    indexer = Indexer(root, settings)
    try:
        assert indexer.vectors.owed_windows() == {label_for(chunk.id)}
        report = indexer.index()
        assert report.embedded == 0 and report.windows_embedded == 1
        assert not indexer.vectors.owed_windows()
        (best,) = indexer.cosines_for([chunk.id], vector)
        assert first_window_only is not None and best is not None
        assert best > first_window_only + 0.05
        assert indexer.index().windows_embedded == 0
    finally:
        indexer.close()
