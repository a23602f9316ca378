"""Full index runs of a folder: `$/progress` with cancel, warm starts, forced re-index.

A run executes on the folder's writer thread, so saves that arrive meanwhile queue up
behind it (save_queue.py) instead of being lost. Starting a run while one is going cancels
the old one and starts once it has stopped, so a burst of settings changes ends with one
index built with the last settings.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from lsprotocol import types

from codeqa_lsp.index.model import IndexProgress, IndexReport
from codeqa_lsp.server.folders import Folder, FolderRegistry
from codeqa_lsp.server.progress import ProgressTracker

if TYPE_CHECKING:
    from codeqa_lsp.engine import CodeBase
    from codeqa_lsp.server.host import IndexingHost

logger = logging.getLogger(__name__)

PROGRESS_INTERVAL_SECONDS = 0.1

Reporter = Callable[[IndexProgress], None]


class IndexRuns:
    """Starts, reports and cancels each folder's index runs."""

    def __init__(self, server: IndexingHost, registry: FolderRegistry) -> None:
        self.server = server
        self.registry = registry

    def start(self, folder: Folder, force: bool = False) -> None:
        previous = folder.index_task
        if previous is not None and not previous.done() and folder.cancel is not None:
            folder.cancel.set()  # the new run starts once the old one has stopped
        folder.index_task = asyncio.get_running_loop().create_task(
            self._index(folder, previous, force)
        )

    async def _index(
        self, folder: Folder, previous: asyncio.Task[None] | None, force: bool
    ) -> None:
        if previous is not None:
            with contextlib.suppress(BaseException):
                await previous
        ls = self.server
        loop = asyncio.get_running_loop()
        cancel = threading.Event()
        folder.cancel = cancel
        token = await self._create_progress(f"index-{folder.name}")
        if token is not None:
            ls.progress_cancellers[token] = cancel
            ls.work_done_progress.begin(
                token,
                types.WorkDoneProgressBegin(
                    title=f"Indexing {folder.name}",
                    cancellable=True,
                    percentage=0,
                    message="scanning",
                ),
            )
        folder.indexing = True
        folder.progress = None
        end_message = "not indexed"
        try:
            if folder.closed:  # shut down while waiting for the progress token: not a failure
                logger.info("not indexing %s: the folder is closing", folder.root)
                return
            report = await loop.run_in_executor(
                folder.writer, self._run_index, folder, force, self._reporter(folder, token), cancel
            )
            folder.last_report = report
            folder.last_indexed = time.time()
            end_message = (
                f"{report.chunks_total} chunks from {report.files_seen} files in "
                f"{report.seconds:.1f} s"
            )
            if report.cancelled:
                end_message += " (cancelled)"
            if report.rebuilt_reason:
                logger.warning("index of %s was rebuilt: %s", folder.root, report.rebuilt_reason)
            if report.notice:
                ls.warn(f"codeqa: {report.notice}")
            logger.info("indexed %s: %s", folder.root, end_message)
        except Exception as exc:
            logger.exception("indexing %s failed", folder.root)
            folder.error = str(exc)
            end_message = f"Indexing failed: {exc}"
            ls.warn(f"codeqa: indexing {folder.name} failed: {exc}")
        finally:
            folder.indexing = False
            folder.progress = None
            if token is not None:
                ls.progress_cancellers.pop(token, None)
                ls.work_done_progress.end(token, types.WorkDoneProgressEnd(message=end_message))

    async def _create_progress(self, prefix: str) -> str | None:
        ls = self.server
        if not ls.supports_progress():
            return None
        token = ls.new_token(prefix)
        try:
            await ls.work_done_progress.create_async(token)
        except Exception as exc:
            logger.warning("window/workDoneProgress/create failed: %s", exc)
            return None
        return token

    def _reporter(self, folder: Folder, token: str | None) -> Reporter:
        """A thread-safe, throttled progress callback for the engine: every phase with its
        counts and ETA goes to `folder.progress` (for `codeqa.status`) and to `$/progress`."""
        ls = self.server
        tracker = ProgressTracker()
        last_sent = [0.0]
        last_phase = [""]

        def report(progress: IndexProgress) -> None:
            snapshot = tracker.update(progress)
            folder.progress = snapshot
            if token is None:
                return
            now = time.monotonic()
            phase_changed = progress.phase != last_phase[0]
            if (
                not phase_changed
                and now - last_sent[0] < PROGRESS_INTERVAL_SECONDS
                and progress.done < progress.total
            ):
                return
            last_sent[0], last_phase[0] = now, progress.phase
            value = types.WorkDoneProgressReport(
                percentage=snapshot.percentage, message=snapshot.message
            )
            ls.call_soon(ls.work_done_progress.report, token, value)

        return report

    def _run_index(
        self, folder: Folder, force: bool, progress: Reporter, cancel: threading.Event
    ) -> IndexReport:
        """(writer thread) One full index run (warm start: only changed files)."""
        codebase = folder.open_codebase(self.registry.settings_for(folder))
        if force:
            _drop_all(codebase, cancel)
        return codebase.index(progress=progress, cancel=cancel)


def _drop_all(codebase: CodeBase, cancel: threading.Event) -> None:
    """(writer thread) Drop every file from the index so the run re-chunks them all.

    Goes through the public `remove_file` so the SQLite rows and the vectors stay
    consistent; re-embedding is mostly served by the embedding cache.
    """
    for rel in sorted({chunk.path for chunk in codebase.chunks()}):
        if cancel.is_set():
            return
        codebase.remove_file(rel)
