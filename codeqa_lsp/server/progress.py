"""Index progress as the editors show it: every phase named, with counts and an ETA.

The indexer reports phases with their own units (`chunk` counts files, `embed` counts
chunks, `windows` counts the long chunks whose later windows it embeds after every chunk's
first, `index/embedding.py`); an editor wants one bar that only moves forward and a message
that says what is happening. This turns the stream of `IndexProgress` into that, for
`$/progress` and the `codeqa.status` command (which the VS Code status bar and the Neovim
statusline read).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from codeqa_lsp.index.model import IndexProgress

# Share of the overall bar each phase spans. Embedding dominates a cold index: on attrs
# (issue 14) chunking 100 files took seconds and embedding their chunks about two minutes,
# so chunking gets the first fifth and embedding almost all the rest. Long chunks' later
# windows are about a third of the embedding work on code with long functions (click/src:
# 46k of 131k tokens), so they get the last part of it.
PHASE_SPANS: dict[str, tuple[int, int]] = {
    "scan": (0, 0),
    "chunk": (0, 20),
    "embed": (20, 75),
    "windows": (75, 99),
    "save": (99, 100),
}
# An ETA from the first batches is noise (model warm-up, cache hits): wait for this many
# seconds of a phase, or this share of its work, before estimating.
ETA_MIN_SECONDS = 2.0
ETA_MIN_FRACTION = 0.05

_UNITS = {
    "chunk": ("chunking", "files"),
    "embed": ("embedding", "chunks"),
    "windows": ("embedding later windows of", "long chunks"),
}


def format_duration(seconds: float) -> str:
    """`45 s`, `3 min 05 s`, `1 h 02 min`: short enough for a status line."""
    whole = max(0, round(seconds))
    if whole < 60:
        return f"{whole} s"
    minutes, sec = divmod(whole, 60)
    if minutes < 60:
        return f"{minutes} min {sec:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


@dataclass(frozen=True)
class ProgressSnapshot:
    """What one progress update shows (also the `progress` field of `codeqa.status`)."""

    phase: str
    done: int
    total: int
    percentage: int
    eta_seconds: float | None
    message: str

    def to_json(self) -> dict[str, Any]:
        return {
            "phase": self.phase,
            "done": self.done,
            "total": self.total,
            "percentage": self.percentage,
            "etaSeconds": None if self.eta_seconds is None else round(self.eta_seconds, 1),
            "message": self.message,
        }


class ProgressTracker:
    """Stateful: remembers when each phase started so it can estimate the time left."""

    def __init__(self, clock: Any = time.monotonic) -> None:
        self._clock = clock
        self._phase: str | None = None
        self._phase_started = 0.0
        self._phase_first_done = 0
        self._percentage = 0

    def update(self, progress: IndexProgress) -> ProgressSnapshot:
        now = self._clock()
        if progress.phase != self._phase:
            self._phase = progress.phase
            self._phase_started = now
            self._phase_first_done = progress.done
        eta = self._eta(progress, now - self._phase_started)
        low, high = PHASE_SPANS.get(progress.phase, (self._percentage, self._percentage))
        fraction = 1.0 if progress.total <= 0 else min(1.0, progress.done / progress.total)
        if progress.phase == "scan":
            fraction = 0.0
        # Never backwards: a bar that jumps back looks broken (and VS Code ignores it).
        self._percentage = max(self._percentage, int(low + (high - low) * fraction))
        return ProgressSnapshot(
            progress.phase,
            progress.done,
            progress.total,
            self._percentage,
            eta,
            self._message(progress, eta),
        )

    def _eta(self, progress: IndexProgress, elapsed: float) -> float | None:
        if progress.phase not in _UNITS or progress.total <= 0 or progress.done >= progress.total:
            return None
        worked = progress.done - self._phase_first_done
        if worked <= 0 or (
            elapsed < ETA_MIN_SECONDS and worked < ETA_MIN_FRACTION * progress.total
        ):
            return None
        return (progress.total - progress.done) * elapsed / worked

    @staticmethod
    def _message(progress: IndexProgress, eta: float | None) -> str:
        if progress.phase == "scan":
            return "scanning files"
        if progress.phase == "save":
            return "saving the index"
        verb, unit = _UNITS.get(progress.phase, (progress.phase, "items"))
        text = f"{verb} {unit} {progress.done}/{progress.total}"
        if eta is not None:
            text += f", about {format_duration(eta)} left"
        return text
