"""Plain records the indexer reports to its callers (CLI progress bars, LSP progress)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class IndexProgress:
    """Emitted while indexing; `done`/`total` count files in "chunk", chunks in "embed"
    (first windows) and "windows" (long chunks' later windows, `index/embedding.py`)."""

    phase: str  # "scan" | "chunk" | "embed" | "windows" | "save"
    done: int
    total: int
    message: str = ""

    @property
    def percentage(self) -> int:
        return 100 if self.total <= 0 else min(100, int(100 * self.done / self.total))


ProgressCallback = Callable[[IndexProgress], None]


@dataclass
class IndexReport:
    """What one `index` / `reconcile` run did."""

    files_seen: int = 0
    files_changed: int = 0
    files_removed: int = 0
    chunks_total: int = 0
    chunks_added: int = 0
    chunks_removed: int = 0
    embedded: int = 0  # chunks whose first window was sent to the embedder (cache misses)
    # Chunks whose later windows were sent to the embedder (`index/embedding.py`).
    windows_embedded: int = 0
    # When every chunk had its first vector (dense search over the whole workspace), in
    # seconds from the start of the run; None when the run stopped before that.
    dense_ready_seconds: float | None = None
    skipped: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0
    cancelled: bool = False
    rebuilt_reason: str | None = None  # set when a corrupt/mismatched index was rebuilt
    embed_error: str | None = None  # the embedder failed; keyword search still works
    write_error: str | None = (
        None  # the disk refused writes mid-run (full); what was committed stays
    )
    notice: str | None = None  # say once to the user (e.g. the shared index fell back to local)


@dataclass(frozen=True)
class UpdateReport:
    """What `update_file` / `remove_file` did for one file."""

    path: str
    chunks_added: int = 0
    chunks_removed: int = 0
    chunks_kept: int = 0
    embedded: int = 0
    skipped_reason: str | None = None


@dataclass(frozen=True)
class IndexStatus:
    root: str
    files: int
    chunks: int
    embedded: int
    languages: dict[str, int]
    embedder: str
    embedding_model: str
    dimension: int
    last_updated: float | None
    skipped: dict[str, int]
    index_dir: str
    size_bytes: int

    @property
    def coverage(self) -> float:
        return 1.0 if self.chunks == 0 else self.embedded / self.chunks
