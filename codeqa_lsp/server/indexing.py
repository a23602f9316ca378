"""Background indexing per workspace folder: progress, cancel, save queue, re-index.

Each folder owns one engine `CodeBase` and one single-thread *writer* executor. Everything
that writes to a folder's index (full index runs, `update_file`, `remove_file`, re-opening
with new settings, closing) runs on that writer, so writes are serialised without locks: a
save that arrives during a full index is queued behind it and applied right after, never
lost. Saves are debounced per file on the event loop (a formatter that saves twice produces
one update), then collected in the folder's `pending` map (latest action per file wins) and
applied by one drain job.

Reads (hover, search, ask) never touch the writer: they use `folder.workspace` directly from
the read/work pools; the engine's store is WAL SQLite, so they keep answering mid-index.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from lsprotocol import types

from codeqa_lsp.config import Settings
from codeqa_lsp.index.model import IndexProgress, IndexReport
from codeqa_lsp.server.convert import uri_to_path
from codeqa_lsp.server.progress import ProgressSnapshot, ProgressTracker

if TYPE_CHECKING:
    from codeqa_lsp.engine import CodeBase
    from codeqa_lsp.server.app import CodeQAServer

logger = logging.getLogger(__name__)

Action = Literal["update", "remove"]

DEBOUNCE_SECONDS = 0.2
PROGRESS_INTERVAL_SECONDS = 0.1
_IGNORED_PARTS = {".git", ".hg", ".svn"}
# Opening a workspace imports the whole engine (and the provider SDKs) on first use; two
# folders opening at once in their own writer threads would race through those imports.
_OPEN_LOCK = threading.Lock()


@dataclass(eq=False)
class Folder:
    """One workspace folder and the state of its index."""

    uri: str
    root: Path
    name: str
    slot: int  # 0 for the first folder ever opened: it may use `indexDir` as is
    writer: ThreadPoolExecutor
    workspace: CodeBase | None = None
    error: str | None = None
    indexing: bool = False
    cancel: threading.Event | None = None
    last_indexed: float | None = None
    last_report: IndexReport | None = None
    progress: ProgressSnapshot | None = None  # the running index's latest phase/counts/ETA
    index_task: asyncio.Task[None] | None = None
    timers: dict[str, asyncio.TimerHandle] = field(default_factory=dict)
    pending: dict[str, Action] = field(default_factory=dict)
    in_flight: int = 0
    drain_scheduled: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)

    def relpath(self, path: Path) -> str | None:
        try:
            return path.resolve().relative_to(self.root).as_posix()
        except (ValueError, OSError):
            return None

    @property
    def backlog(self) -> int:
        return len(self.timers) + len(self.pending) + self.in_flight


class FolderManager:
    """All folders of the session; the only place that starts or stops indexing."""

    def __init__(self, server: CodeQAServer) -> None:
        self.server = server
        self.folders: list[Folder] = []
        self._slots = 0

    # -- lookup -------------------------------------------------------------------------------
    def ready(self) -> list[tuple[Folder, CodeBase]]:
        return [(f, f.workspace) for f in self.folders if f.workspace is not None]

    def folder_for_path(self, path: Path) -> Folder | None:
        best: Folder | None = None
        for folder in self.folders:
            if folder.relpath(path) is not None and (
                best is None or len(folder.root.parts) > len(best.root.parts)
            ):
                best = folder
        return best

    async def wait_open(self, folders: list[Folder] | None = None, timeout: float = 120.0) -> None:
        """Wait until one of `folders` (default: all) has an open index, or failed to open it.

        A question asked while the editor is still starting, or while a settings change
        re-opens the index, should wait the second the index takes to open, not fail with
        "no workspace folder". It polls the folder state, which the writer thread sets.
        """
        pending = list(folders if folders is not None else self.folders)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while pending and loop.time() < deadline:
            if any(f.workspace is not None or f.error is not None for f in pending):
                return
            await asyncio.sleep(0.05)

    def folder_for_uri(self, uri: str) -> tuple[Folder, Path] | None:
        path = uri_to_path(uri)
        if path is None:
            return None
        folder = self.folder_for_path(path)
        return (folder, path) if folder is not None else None

    # -- folders --------------------------------------------------------------------------------
    def add_folder(self, uri: str, name: str) -> Folder | None:
        path = uri_to_path(uri)
        if path is None or not path.is_dir():
            self.server.warn(f"codeqa: workspace folder {uri} is not a local directory; not indexed")
            return None
        root = path.resolve()
        for existing in self.folders:
            if existing.root == root:
                return existing
        folder = Folder(
            uri=uri, root=root, name=name or root.name, slot=self._slots,
            writer=ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"codeqa-index-{root.name}"),
        )
        self._slots += 1
        self.folders.append(folder)
        return folder

    async def remove_folder(self, uri: str) -> None:
        path = uri_to_path(uri)
        folder = next((f for f in self.folders if path and f.root == path.resolve()), None)
        if folder is None:
            return
        self.folders.remove(folder)
        await self._close(folder)

    def settings_for(self, folder: Folder) -> Settings:
        """A fixed `indexDir` serves the first folder; later folders get a subdirectory."""
        settings = self.server.settings
        if settings.index_dir and folder.slot > 0:
            digest = hashlib.sha1(str(folder.root).encode()).hexdigest()[:8]
            sub = Path(settings.index_dir).expanduser() / f"{folder.root.name}-{digest}"
            return settings.replace(index_dir=str(sub))
        return settings

    # -- indexing -------------------------------------------------------------------------------
    def start_all(self, force: bool = False) -> None:
        for folder in self.folders:
            self.start_index(folder, force=force)

    def apply_settings(self, settings: Settings) -> None:
        """New settings: every folder re-opens its index with them and re-indexes."""
        self.start_all()

    def start_index(self, folder: Folder, force: bool = False) -> None:
        previous = folder.index_task
        if previous is not None and not previous.done() and folder.cancel is not None:
            folder.cancel.set()  # the new run starts once the old one has stopped
        folder.index_task = asyncio.get_running_loop().create_task(
            self._index(folder, previous, force)
        )

    async def _index(self, folder: Folder, previous: asyncio.Task[None] | None, force: bool) -> None:
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
                    title=f"Indexing {folder.name}", cancellable=True, percentage=0, message="scanning"
                ),
            )
        folder.indexing = True
        folder.progress = None
        end_message = "not indexed"
        try:
            report = await loop.run_in_executor(
                folder.writer, self._run_index, folder, force, self._reporter(folder, token), cancel
            )
            folder.last_report = report
            folder.last_indexed = time.time()
            end_message = (
                f"{report.chunks_total} chunks from {report.files_seen} files in {report.seconds:.1f} s"
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

    def _reporter(self, folder: Folder, token: str | None) -> Any:
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
            if not phase_changed and now - last_sent[0] < PROGRESS_INTERVAL_SECONDS and progress.done < progress.total:
                return
            last_sent[0], last_phase[0] = now, progress.phase
            value = types.WorkDoneProgressReport(percentage=snapshot.percentage, message=snapshot.message)
            ls.call_soon(ls.work_done_progress.report, token, value)

        return report

    def _open(self, folder: Folder) -> CodeBase:
        """(writer thread) The folder's workspace, re-opened when the settings changed."""
        from codeqa_lsp.engine import CodeBase

        settings = self.settings_for(folder)
        current = folder.workspace
        if current is not None and current.settings == settings:
            return current
        folder.error = None  # waiters now wait for this open, not an earlier failure
        started = time.monotonic()
        with _OPEN_LOCK:
            # Open the new one before retiring the old: questions keep being answered
            # (with the old settings) until the swap, and the old index closes only once
            # the calls it is serving have finished (CodeBase.close waits for them), in a
            # thread of its own so this re-index does not wait for a slow answer.
            folder.workspace = CodeBase(folder.root, settings)
        ls = self.server  # a query that loses the shared index says so at once (thread-safe)
        folder.workspace.set_notice_listener(lambda message: ls.call_soon(ls.warn, f"codeqa: {message}"))
        logger.info("opened the index of %s in %.2f s", folder.root, time.monotonic() - started)
        if current is not None:
            threading.Thread(target=current.close, name="codeqa-close-old-index", daemon=True).start()
        return folder.workspace

    def _run_index(self, folder: Folder, force: bool, progress: Any, cancel: threading.Event) -> IndexReport:
        """(writer thread) One full index run (warm start: only changed files)."""
        workspace = self._open(folder)
        if force:
            self._drop_all(workspace, cancel)
        return workspace.index(progress=progress, cancel=cancel)

    @staticmethod
    def _drop_all(workspace: CodeBase, cancel: threading.Event) -> None:
        """(writer thread) Drop every file from the index so the run re-chunks them all.

        Goes through the public `remove_file` so the SQLite rows and the vectors stay
        consistent; re-embedding is mostly served by the embedding cache.
        """
        for rel in sorted({chunk.path for chunk in workspace.chunks()}):
            if cancel.is_set():
                return
            workspace.remove_file(rel)

    # -- saves and watched files --------------------------------------------------------------------
    def file_changed(self, path: Path, action: Action) -> None:
        """(event loop) Debounce a save / watched-file event, then queue it for the writer."""
        folder = self.folder_for_path(path)
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

    def _ignored(self, folder: Folder, rel: str) -> bool:
        """VCS internals and the index's own files (when it lives inside the folder)."""
        if _IGNORED_PARTS.intersection(rel.split("/")):
            return True
        index_dir = self.settings_for(folder).index_dir
        if index_dir:
            index_rel = folder.relpath(Path(index_dir).expanduser())
            if index_rel and index_rel != "." and (rel == index_rel or rel.startswith(index_rel + "/")):
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
            folder.writer.submit(self._drain, folder)
        except RuntimeError:  # writer shut down (folder removed / server exiting)
            logger.warning("dropping update of %s: folder closed", rel)

    def _drain(self, folder: Folder) -> None:
        """(writer thread) Apply every queued update; runs after any index in progress."""
        while True:
            with folder.lock:
                if not folder.pending:
                    folder.drain_scheduled = False
                    folder.in_flight = 0
                    return
                batch, folder.pending = folder.pending, {}
                folder.in_flight = len(batch)
            workspace = folder.workspace
            if workspace is None:
                try:
                    workspace = self._open(folder)
                except Exception:
                    logger.exception("cannot open the index of %s; %d updates dropped", folder.root, len(batch))
                    continue
            reconcile = False
            for rel, action in batch.items():
                try:
                    reconcile |= self._apply(workspace, folder.root / rel, rel, action)
                except Exception:
                    logger.exception("applying %s of %s failed", action, rel)
                finally:
                    with folder.lock:
                        folder.in_flight -= 1
            if reconcile:
                self._reconcile(folder, workspace)

    @staticmethod
    def _apply(workspace: CodeBase, path: Path, rel: str, action: Action) -> bool:
        """(writer thread) One file's change; True when a directory changed as a whole.

        A `git checkout` or a deleted folder may arrive as one event for a directory; the
        files under it are then found by a warm index run (a scan: only changes processed).
        """
        if path.is_dir():
            return True
        if action == "remove" or not path.exists():
            report = workspace.remove_file(rel)
            logger.debug("remove %s: %s", rel, report)
            return report.chunks_removed == 0  # maybe a directory that held indexed files
        logger.debug("update %s: %s", rel, workspace.update_file(rel))
        return False

    @staticmethod
    def _reconcile(folder: Folder, workspace: CodeBase) -> None:
        try:
            cancel = folder.cancel if folder.cancel is not None and not folder.cancel.is_set() else None
            report = workspace.index(cancel=cancel)
            logger.info("reconciled %s after a directory change: %d files changed, %d removed",
                        folder.root, report.files_changed, report.files_removed)
        except Exception:
            logger.exception("reconciling %s failed", folder.root)

    # -- status ---------------------------------------------------------------------------------
    def status(self) -> dict[str, Any]:
        """(any thread) The `codeqa.status` result, summed over folders."""
        settings = self.server.settings
        files = chunks = embedded = 0
        skipped: Counter[str] = Counter()
        last: float | None = None
        embedder: str = settings.embedder
        for folder, workspace in self.ready():
            try:
                status = workspace.status()
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
        return {
            "folders": [str(f.root) for f in self.folders],
            "files": files,
            "chunks": chunks,
            "embedded": embedded,
            "coverage": 1.0 if chunks == 0 else round(embedded / chunks, 4),
            "embedder": embedder,
            "provider": settings.provider,
            "model": settings.model,
            "indexing": any(f.indexing for f in self.folders),
            "progress": next((f.progress.to_json() for f in self.folders if f.indexing and f.progress), None),
            "lastIndexed": last,
            "skipped": dict(skipped),
            "pendingUpdates": sum(f.backlog for f in self.folders),
            "errors": {str(f.root): f.error for f in self.folders if f.error},
        }

    # -- shutting down ------------------------------------------------------------------------------
    async def close_all(self) -> None:
        folders, self.folders = list(self.folders), []
        await asyncio.gather(*(self._close(f) for f in folders), return_exceptions=True)

    async def _close(self, folder: Folder) -> None:
        """Cancel indexing, flush debounced saves, persist and close the index."""
        if folder.cancel is not None:
            folder.cancel.set()
        for rel, timer in list(folder.timers.items()):
            timer.cancel()
            folder.timers.pop(rel, None)
            with folder.lock:
                folder.pending.setdefault(rel, "update")
        loop = asyncio.get_running_loop()
        try:
            await loop.run_in_executor(folder.writer, self._drain, folder)
            await loop.run_in_executor(folder.writer, self._close_workspace, folder)
        except Exception:
            logger.exception("closing %s failed", folder.root)
        finally:
            folder.writer.shutdown(wait=False)

    @staticmethod
    def _close_workspace(folder: Folder) -> None:
        workspace, folder.workspace = folder.workspace, None
        if workspace is not None:
            workspace.close()

    def abort_all(self) -> None:
        for folder in self.folders:
            if folder.cancel is not None:
                folder.cancel.set()
            folder.writer.shutdown(wait=False, cancel_futures=True)
