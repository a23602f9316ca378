"""The `codeqa.status` result: the wire format the VS Code status bar and Neovim read.

Kept apart from the folder bookkeeping so the format (PROTOCOL.md) has one home: counts are
summed over every open folder, the progress shown is the first running index's.
"""

from __future__ import annotations

import logging
from collections import Counter
from typing import Any

from codeqa_lsp.config import Settings
from codeqa_lsp.server.folders import FolderRegistry

logger = logging.getLogger(__name__)


def status_json(registry: FolderRegistry, settings: Settings) -> dict[str, Any]:
    """(any thread) The `codeqa.status` result, summed over folders."""
    files = chunks = embedded = 0
    skipped: Counter[str] = Counter()
    last: float | None = None
    embedder: str = settings.embedder
    for folder, codebase in registry.ready():
        try:
            status = codebase.status()
        except Exception as exc:
            logger.warning("status of %s failed: %s", folder.root, exc)
            continue
        files += status.files
        chunks += status.chunks
        embedded += status.embedded
        skipped.update(status.skipped)
        embedder = status.embedder
        stamps = [t for t in (status.last_updated, folder.last_indexed, last) if t is not None]
        last = max(stamps) if stamps else None
    folders = registry.folders
    return {
        "folders": [str(f.root) for f in folders],
        "files": files,
        "chunks": chunks,
        "embedded": embedded,
        "coverage": 1.0 if chunks == 0 else round(embedded / chunks, 4),
        "embedder": embedder,
        "provider": settings.provider,
        "model": settings.model,
        "indexing": any(f.indexing for f in folders),
        "progress": next(
            (f.progress.to_json() for f in folders if f.indexing and f.progress), None
        ),
        "lastIndexed": last,
        "skipped": dict(skipped),
        "pendingUpdates": sum(f.backlog for f in folders),
        "errors": {str(f.root): f.error for f in folders if f.error},
    }
