"""`FolderManager`: the only place that starts or stops a folder's indexing.

It composes the parts, each in its own module: the folder registry and the "which folder
serves this file" rule (folders.py), full index runs with progress (index_runs.py), the
debounced save queue (save_queue.py) and the status wire format (status.py). What stays
here is the folder life cycle: adding, re-opening on new settings, and closing at shutdown
(flush queued saves, persist, close) or aborting when the client vanished.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codeqa_lsp.config import Settings
from codeqa_lsp.server.folders import Action, Folder, FolderRegistry
from codeqa_lsp.server.index_runs import IndexRuns
from codeqa_lsp.server.save_queue import SaveQueue
from codeqa_lsp.server.status import status_json

if TYPE_CHECKING:
    from codeqa_lsp.server.host import IndexingHost

logger = logging.getLogger(__name__)


class FolderManager(FolderRegistry):
    """All folders of the session (lookups inherited from `FolderRegistry`) and their life cycle."""

    def __init__(self, server: IndexingHost) -> None:
        super().__init__(lambda: server.settings)
        self.server = server
        self.runs = IndexRuns(server, self)
        self.saves = SaveQueue(self)

    # -- folders ----------------------------------------------------------------------------------
    def add_folder(self, uri: str, name: str) -> Folder | None:
        folder = self.register(uri, name)
        if folder is None:
            self.server.warn(
                f"codeqa: workspace folder {uri} is not a local directory; not indexed"
            )
            return None
        server = self.server  # a query that loses the shared index says so at once (thread-safe)
        folder.notices = lambda message: server.call_soon(server.warn, f"codeqa: {message}")
        folder.reindex = lambda: server.call_soon(self.start_index, folder)
        return folder

    async def remove_folder(self, uri: str) -> None:
        folder = self.unregister(uri)
        if folder is not None:
            await self._close(folder)

    # -- indexing ---------------------------------------------------------------------------------
    def start_all(self, force: bool = False) -> None:
        for folder in self.folders:
            self.runs.start(folder, force=force)

    def start_index(self, folder: Folder, force: bool = False) -> None:
        self.runs.start(folder, force=force)

    def apply_settings(self, settings: Settings) -> None:
        """New settings: every folder re-opens its index with them and re-indexes."""
        self.start_all()

    def file_changed(self, path: Path, action: Action) -> None:
        """(event loop) A save or watched-file event; debounced and queued (save_queue.py)."""
        self.saves.file_changed(path, action)

    def status(self) -> dict[str, Any]:
        """(any thread) The `codeqa.status` result (status.py)."""
        return status_json(self, self.server.settings)

    # -- shutting down ----------------------------------------------------------------------------
    async def close_all(self) -> None:
        folders, self.folders = list(self.folders), []
        await asyncio.gather(*(self._close(f) for f in folders), return_exceptions=True)

    async def _close(self, folder: Folder) -> None:
        """Cancel indexing, flush debounced saves, persist and close the index."""
        folder.closed = True
        if folder.cancel is not None:
            folder.cancel.set()
        self.saves.flush_timers(folder)
        loop = asyncio.get_running_loop()
        try:
            await loop.run_in_executor(folder.writer, self.saves.drain, folder)
            await loop.run_in_executor(folder.writer, folder.close_codebase)
        except Exception:
            logger.exception("closing %s failed", folder.root)
        finally:
            folder.writer.shutdown(wait=False)

    def abort_all(self) -> None:
        for folder in self.folders:
            folder.closed = True
            if folder.cancel is not None:
                folder.cancel.set()
            folder.writer.shutdown(wait=False, cancel_futures=True)
