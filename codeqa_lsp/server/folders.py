"""The session's workspace folders and the one rule for which folder serves a file.

A folder owns one engine `CodeBase` (its index) and one single-thread *writer* executor;
everything that writes to the index runs on that writer (index_runs.py, save_queue.py), so
writes are serialised without locks. Reads (hover, search, ask) use `folder.codebase`
directly from the server's read/work pools: the store is WAL SQLite, so they keep answering
mid-index.

The variable names say `codebase` for the engine object, never `workspace`: pygls's
`ls.workspace` (open documents) is used in the same handlers and the two must not read alike.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from codeqa_lsp.config import Settings
from codeqa_lsp.index.model import IndexReport
from codeqa_lsp.server.convert import uri_to_path
from codeqa_lsp.server.progress import ProgressSnapshot

if TYPE_CHECKING:
    from codeqa_lsp.engine import CodeBase

logger = logging.getLogger(__name__)

Action = Literal["update", "remove"]

# Opening a codebase imports the whole engine (and the provider SDKs) on first use; two
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
    codebase: CodeBase | None = None
    error: str | None = None
    indexing: bool = False
    cancel: threading.Event | None = None
    last_indexed: float | None = None
    last_report: IndexReport | None = None
    progress: ProgressSnapshot | None = None  # the running index's latest phase/counts/ETA
    index_task: asyncio.Task[None] | None = None
    # Set (on the event loop) when the folder starts closing: an index run that was still
    # waiting for its progress token must not submit work to the retiring writer.
    closed: bool = False
    timers: dict[str, asyncio.TimerHandle] = field(default_factory=dict)
    pending: dict[str, Action] = field(default_factory=dict)
    in_flight: int = 0
    drain_scheduled: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)
    # Where the codebase's between-runs notices go (the shared index lost at query time);
    # called from the querying thread.
    notices: Callable[[str], None] | None = None
    # How the codebase asks for an index run between runs (the shared index lost at query
    # time: the local index takes over the whole tree, with the run's progress); thread-safe.
    reindex: Callable[[], None] | None = None

    def relpath(self, path: Path) -> str | None:
        try:
            return path.resolve().relative_to(self.root).as_posix()
        except (ValueError, OSError):
            return None

    @property
    def backlog(self) -> int:
        return len(self.timers) + len(self.pending) + self.in_flight

    def open_codebase(self, settings: Settings) -> CodeBase:
        """(writer thread) The folder's codebase, re-opened when the settings changed.

        The new one is opened before the old one retires: questions keep being answered (with
        the old settings) until the swap, and the old index closes only once the calls it is
        serving have finished (`CodeBase.close` waits for them), in a thread of its own so a
        re-index does not wait for a slow answer.
        """
        from codeqa_lsp.engine import CodeBase

        current = self.codebase
        if current is not None and current.settings == settings:
            return current
        self.error = None  # waiters now wait for this open, not an earlier failure
        started = time.monotonic()
        with _OPEN_LOCK:
            self.codebase = CodeBase(self.root, settings)
        self.codebase.set_notice_listener(self.notices)
        self.codebase.set_reindex_requester(self.reindex)
        logger.info("opened the index of %s in %.2f s", self.root, time.monotonic() - started)
        if current is not None:
            threading.Thread(
                target=current.close, name="codeqa-close-old-index", daemon=True
            ).start()
        return self.codebase

    def close_codebase(self) -> None:
        """(writer thread) Persist and close the index; the folder has none afterwards."""
        codebase, self.codebase = self.codebase, None
        if codebase is not None:
            codebase.close()


@dataclass(frozen=True)
class Served:
    """A file and the folder whose index answers for it (`FolderRegistry.workspace_for`)."""

    folder: Folder
    codebase: CodeBase
    path: Path
    rel: str | None  # the file's path in `folder`; None when the file lies outside every folder


class FolderRegistry:
    """The folders of the session and every lookup of them; no indexing here."""

    def __init__(self, settings: Callable[[], Settings]) -> None:
        self._settings = settings
        self.folders: list[Folder] = []
        self._slots = 0

    # -- the folder list --------------------------------------------------------------------------
    def register(self, uri: str, name: str) -> Folder | None:
        """A new folder (or the existing one with that root); None when not a local directory."""
        path = uri_to_path(uri)
        if path is None or not path.is_dir():
            return None
        root = path.resolve()
        for existing in self.folders:
            if existing.root == root:
                return existing
        folder = Folder(
            uri=uri,
            root=root,
            name=name or root.name,
            slot=self._slots,
            writer=ThreadPoolExecutor(
                max_workers=1, thread_name_prefix=f"codeqa-index-{root.name}"
            ),
        )
        self._slots += 1
        self.folders.append(folder)
        return folder

    def unregister(self, uri: str) -> Folder | None:
        path = uri_to_path(uri)
        folder = next((f for f in self.folders if path and f.root == path.resolve()), None)
        if folder is not None:
            self.folders.remove(folder)
        return folder

    def settings_for(self, folder: Folder) -> Settings:
        """A fixed `indexDir` serves the first folder; later folders get a subdirectory."""
        settings = self._settings()
        if settings.index_dir and folder.slot > 0:
            digest = hashlib.sha1(str(folder.root).encode()).hexdigest()[:8]
            sub = Path(settings.index_dir).expanduser() / f"{folder.root.name}-{digest}"
            return settings.replace(index_dir=str(sub))
        return settings

    # -- lookup -----------------------------------------------------------------------------------
    def ready(self) -> list[tuple[Folder, CodeBase]]:
        """Folders with an open index, in the order the client listed them."""
        return [(f, f.codebase) for f in self.folders if f.codebase is not None]

    def folder_for_path(self, path: Path) -> Folder | None:
        """The innermost folder containing `path` (open or not), None outside every folder."""
        best: Folder | None = None
        for folder in self.folders:
            if folder.relpath(path) is not None and (
                best is None or len(folder.root.parts) > len(best.root.parts)
            ):
                best = folder
        return best

    def folder_for_uri(self, uri: str) -> tuple[Folder, Path] | None:
        path = uri_to_path(uri)
        if path is None:
            return None
        folder = self.folder_for_path(path)
        return (folder, path) if folder is not None else None

    def workspace_for(self, uri: str) -> Served | None:
        """Which folder's index serves the file at `uri` (hover, code lens, explain).

        The one rule, in order:
        1. the innermost folder containing the file whose index is open (nested folders: the
           inner one; while it is still opening, an open outer folder that contains the file);
        2. a file inside no folder at all (a scratch buffer, a library file) is served by the
           first open folder, with `rel` None: definitions from the user's code still help;
        3. otherwise None: no folder is open, the URI is not a local file, or the file's own
           folders are all still opening (answers from another folder's code would mislead).
        """
        path = uri_to_path(uri)
        if path is None:
            return None
        containing = sorted(
            (f for f in self.folders if f.relpath(path) is not None),
            key=lambda f: len(f.root.parts),
            reverse=True,
        )
        for folder in containing:
            if folder.codebase is not None:
                return Served(folder, folder.codebase, path, folder.relpath(path))
        ready = self.ready()
        if not containing and ready:
            folder, codebase = ready[0]
            return Served(folder, codebase, path, None)
        return None

    def workspace_for_glob(
        self, path_glob: str | None
    ) -> tuple[Folder, CodeBase, str | None] | None:
        """Which folder's index a question (no file, maybe a path filter) goes to.

        With several folders open, a glob whose first segment names a folder (`api/**/*.py`)
        picks it and loses that segment; otherwise the same fallback as `workspace_for`'s
        rule 2, the first open folder, with the glob as given. None when no folder is open.
        """
        ready = self.ready()
        if not ready:
            return None
        if path_glob and len(ready) > 1:
            head, _, rest = path_glob.partition("/")
            for folder, codebase in ready:
                if head == folder.name and rest:
                    return folder, codebase, rest
        folder, codebase = ready[0]
        return folder, codebase, path_glob

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
            if any(f.codebase is not None or f.error is not None for f in pending):
                return
            await asyncio.sleep(0.05)

    async def wait_workspace_for(self, uri: str) -> Served | None:
        """`workspace_for` once the file's own folder has opened (or failed to)."""
        found = self.folder_for_uri(uri)
        await self.wait_open([found[0]] if found is not None else None)
        return self.workspace_for(uri)
