"""Run something once activity has stopped: the one debounce the index layer uses.

Vector saves wait for the editor to be quiet (`vector_saves.py`), and the local embedder
closes OpenVINO once no batch has come for a while (`embedders/local.py`). Both want the
same thing: one pending daemon timer, re-armed when it fires early instead of a new timer
per event (a watcher storm of 1,000 updates must not start 1,000 threads).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable


class QuietTimer:
    """Calls `action` once `quiet` seconds pass without a `touch()`, or `max_wait` seconds
    after the first touch since the last call, whichever comes first. `action` runs on the
    timer's thread, outside this object's lock, so it may take its owner's locks."""

    def __init__(
        self, action: Callable[[], None], quiet: float, max_wait: float = math.inf
    ) -> None:
        self.action = action
        self.quiet = quiet
        self.max_wait = max_wait
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None  # at most one pending
        self._first = 0.0  # monotonic time of the first touch since the last call
        self._last = 0.0

    def touch(self) -> None:
        with self._lock:
            self._last = time.monotonic()
            if self._timer is None:
                self._first = self._last
                self._arm(self._due() - self._last)

    def cancel(self) -> None:
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None

    def _due(self) -> float:
        return min(self._last + self.quiet, self._first + self.max_wait)

    def _arm(self, wait: float) -> None:
        self._timer = threading.Timer(max(0.0, wait), self._fire)
        self._timer.daemon = True
        self._timer.start()

    def _fire(self) -> None:
        with self._lock:
            if threading.current_thread() is not self._timer:
                return  # cancelled or replaced (a Timer runs its function in its own thread)
            wait = self._due() - time.monotonic()
            if wait > 0:  # touched since the timer was set: wait for quiet again
                self._arm(wait)
                return
            self._timer = None
        self.action()
