"""Debounced vector saves: a burst of editor saves writes the vector file once, after the
burst, and a save after `close()` never happens (the connections and files may be gone)."""

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


def test_a_burst_of_saves_writes_once_after_the_burst(tmp_path: Path) -> None:
    """Nothing is written while updates keep coming; one write once they stop."""
    store, writes, wrote = _counting(tmp_path)
    saves = VectorSaves(store, quiet=0.5, max_wait=60.0)
    for label in range(1, 6):
        _add(store, label)
        saves.save_soon()
        assert writes == []  # not at once: the user may be searching right now
    assert wrote.wait(timeout=30)
    assert writes == [5]
    reloaded = VectorStore(tmp_path, 8, IDENTITY)
    assert reloaded.load() is None
    assert reloaded.live_labels() == {1, 2, 3, 4, 5}


def test_updates_that_never_stop_are_still_saved(tmp_path: Path) -> None:
    """The quiet wait restarts with every update, but not past `max_wait` after the first
    unsaved one: a file watcher that never rests cannot postpone the save for ever."""
    store, writes, wrote = _counting(tmp_path)
    saves = VectorSaves(store, quiet=3600.0, max_wait=0.2)
    label = 0
    while not wrote.is_set():  # an update every 20 ms, far shorter than the quiet wait
        label += 1
        _add(store, label)
        saves.save_soon()
        wrote.wait(timeout=0.02)
        assert label < 5000, "no save while updates kept coming"
    assert len(writes) == 1 and writes[0] >= 1


def test_close_saves_and_cancels_the_pending_timer(tmp_path: Path) -> None:
    store, writes, _ = _counting(tmp_path)
    saves = VectorSaves(store, quiet=60.0, max_wait=60.0)
    _add(store, 6)
    saves.save_soon()  # waits for a quiet minute
    assert writes == []
    saves.close()
    assert writes == [1]
    _add(store, 7)
    saves.save_soon()  # after close: ignored
    assert writes == [1]
