"""When the vector file is written: now, or once shortly after a burst of saves.

The hnswlib file of a large index is tens of megabytes; an editor that saves on every
keystroke-pause must not rewrite it for each save, and a crash must not lose more than a
moment's work. Kept apart from `indexer.py` because it is the only timer-driven part of it.
"""

from __future__ import annotations

import logging
import threading
import time

from codeqa_lsp.index.vectors import VectorStore

log = logging.getLogger(__name__)

SAVE_MIN_INTERVAL = 1.0  # debounce for vector saves after single-file updates


class VectorSaves:
    """Saves `vectors` when dirty: at once (`save`) or debounced (`save_soon`)."""

    def __init__(self, vectors: VectorStore, min_interval: float = SAVE_MIN_INTERVAL) -> None:
        self.vectors = vectors
        self.min_interval = min_interval
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None
        self._last_save = 0.0
        self._closed = False

    def save(self) -> None:
        """Write the vector file now if it changed (cancels a pending debounced save)."""
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            if self.vectors.dirty:
                self.vectors.save()
            self._last_save = time.monotonic()

    def save_soon(self) -> None:
        """Save now, unless a save just happened: then once, shortly (bursts of saves in the
        editor must not rewrite a large vector file for every keystroke-save)."""
        with self._lock:
            if not self.vectors.dirty or self._timer is not None or self._closed:
                return
            wait = self._last_save + self.min_interval - time.monotonic()
            if wait > 0:
                self._timer = threading.Timer(wait, self._on_timer)
                self._timer.daemon = True
                self._timer.start()
                return
        self.save()

    def close(self) -> None:
        """The final save; later `save_soon` calls do nothing."""
        with self._lock:
            self._closed = True
        self.save()

    def _on_timer(self) -> None:
        with self._lock:
            self._timer = None
            if self._closed:
                return
        try:
            self.save()
        except OSError as exc:
            log.error("saving vectors failed: %s", exc)
