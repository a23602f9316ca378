"""Debounced vector saves: a burst of editor saves writes the vector file once, and a save
after `close()` never happens (the connections and files may be gone by then)."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np

from codeqa_lsp.index.vector_saves import VectorSaves
from codeqa_lsp.index.vectors import VectorStore

IDENTITY = {"embedder": "hash", "model": "m"}


def _counting(directory: Path) -> tuple[VectorStore, list[int], threading.Event]:
    """A real store whose `save` also counts calls that wrote something."""
    store = VectorStore(directory, 8, IDENTITY)
    writes: list[int] = []
    wrote = threading.Event()
    real_save = store.save

    def save() -> None:
        real_save()
        writes.append(len(store))
        wrote.set()

    store.save = save  # type: ignore[method-assign]
    return store, writes, wrote


def _add(store: VectorStore, label: int) -> None:
    store.add([label], np.ones((1, 8), dtype=np.float32) * label)


def test_a_burst_of_saves_writes_once_shortly_after(tmp_path: Path) -> None:
    store, writes, wrote = _counting(tmp_path)
    saves = VectorSaves(store, min_interval=2.0)
    _add(store, 1)
    saves.save_soon()  # nothing saved yet: writes at once
    assert writes == [1]
    wrote.clear()
    for label in range(2, 6):  # a burst right after: deferred to one timer
        _add(store, label)
        saves.save_soon()
    assert writes == [1]
    assert wrote.wait(timeout=30)
    assert writes == [1, 5]
    reloaded = VectorStore(tmp_path, 8, IDENTITY)
    assert reloaded.load() is None
    assert reloaded.live_labels() == {1, 2, 3, 4, 5}


def test_close_saves_and_cancels_the_pending_timer(tmp_path: Path) -> None:
    store, writes, _ = _counting(tmp_path)
    saves = VectorSaves(store, min_interval=60.0)
    _add(store, 6)
    saves.save()  # a save "just happened": the next save_soon waits for a timer
    _add(store, 7)
    saves.save_soon()
    assert writes == [1]
    saves.close()
    assert writes == [1, 2]
    _add(store, 8)
    saves.save_soon()  # after close: ignored
    assert writes == [1, 2]
