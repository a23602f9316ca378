"""Saves and watched-file events become index updates: debounced, queued, never lost.

Saves are debounced per file on the event loop (a formatter that saves twice produces one
update), then collected in the folder's `pending` map (latest action per file wins) and
applied by one drain job on the folder's writer thread. A save that arrives during a full
index therefore waits behind it and is applied right after.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING

from codeqa_lsp.server.folders import Action, Folder, FolderRegistry

if TYPE_CHECKING:
    from codeqa_lsp.engine import CodeBase

logger = logging.getLogger(__name__)

DEBOUNCE_SECONDS = 0.2
_IGNORED_PARTS = {".git", ".hg", ".svn"}


class SaveQueue:
    """Per-folder debounce timers and pending updates, drained on the folder's writer."""

    def __init__(self, registry: FolderRegistry) -> None:
        self.registry = registry

    def file_changed(self, path: Path, action: Action) -> None:
        """(event loop) Debounce a save / watched-file event, then queue it for the writer."""
        folder = self.registry.folder_for_path(path)
        if folder is None:
            return
        rel = folder.relpath(path)
        if rel is None or rel == "." or self._ignored(folder, rel):
            return
        timer = folder.timers.pop(rel, None)
        if timer is not None:
            timer.cancel()
        loop = asyncio.get_running_loop()
        folder.timers[rel] = loop.call_later(DEBOUNCE_SECONDS, self._enqueue, folder, rel, action)

    def flush_timers(self, folder: Folder) -> None:
        """(event loop, closing) Turn debounced saves into pending updates right away."""
        for rel, timer in list(folder.timers.items()):
            timer.cancel()
            folder.timers.pop(rel, None)
            with folder.lock:
                folder.pending.setdefault(rel, "update")

    def _ignored(self, folder: Folder, rel: str) -> bool:
        """VCS internals and the index's own files (when it lives inside the folder)."""
        if _IGNORED_PARTS.intersection(rel.split("/")):
            return True
        index_dir = self.registry.settings_for(folder).index_dir
        if index_dir:
            index_rel = folder.relpath(Path(index_dir).expanduser())
            if (
                index_rel
                and index_rel != "."
                and (rel == index_rel or rel.startswith(index_rel + "/"))
            ):
                return True
        return False

    def _enqueue(self, folder: Folder, rel: str, action: Action) -> None:
        folder.timers.pop(rel, None)
        with folder.lock:
            folder.pending[rel] = action
            if folder.drain_scheduled:
                return
            folder.drain_scheduled = True
        try:
            folder.writer.submit(self.drain, folder)
        except RuntimeError:  # writer shut down (folder removed / server exiting)
            logger.warning("dropping update of %s: folder closed", rel)

    def drain(self, folder: Folder) -> None:
        """(writer thread) Apply every queued update; runs after any index in progress."""
        while True:
            with folder.lock:
                if not folder.pending:
                    folder.drain_scheduled = False
                    folder.in_flight = 0
                    return
                batch, folder.pending = folder.pending, {}
                folder.in_flight = len(batch)
            codebase = folder.codebase
            if codebase is None:
                try:
                    codebase = folder.open_codebase(self.registry.settings_for(folder))
                except Exception:
                    logger.exception(
                        "cannot open the index of %s; %d updates dropped", folder.root, len(batch)
                    )
                    continue
            reconcile = False
            for rel, action in batch.items():
                try:
                    reconcile |= _apply(codebase, folder.root / rel, rel, action)
                except Exception:
                    logger.exception("applying %s of %s failed", action, rel)
                finally:
                    with folder.lock:
                        folder.in_flight -= 1
            if reconcile:
                _reconcile(folder, codebase)


def _apply(codebase: CodeBase, path: Path, rel: str, action: Action) -> bool:
    """(writer thread) One file's change; True when a directory changed as a whole.

    A `git checkout` or a deleted folder may arrive as one event for a directory; the
    files under it are then found by a warm index run (a scan: only changes processed).
    """
    if path.is_dir():
        return True
    if action == "remove" or not path.exists():
        report = codebase.remove_file(rel)
        logger.debug("remove %s: %s", rel, report)
        return report.chunks_removed == 0  # maybe a directory that held indexed files
    logger.debug("update %s: %s", rel, codebase.update_file(rel))
    return False


def _reconcile(folder: Folder, codebase: CodeBase) -> None:
    try:
        cancel = folder.cancel if folder.cancel is not None and not folder.cancel.is_set() else None
        report = codebase.index(cancel=cancel)
        logger.info(
            "reconciled %s after a directory change: %d files changed, %d removed",
            folder.root,
            report.files_changed,
            report.files_removed,
        )
    except Exception:
        logger.exception("reconciling %s failed", folder.root)
