"""Keeping the shared on-disk index fresh for an MCP client, without ever blocking a call.

Two mechanisms, both on the engine facade:

- **Background index**: at start (and after a large change such as a branch switch) one
  daemon thread runs `CodeBase.index()`: chunks every changed file first (keyword search
  covers the tree within seconds), then embeds (semantic search joins as `coverage` grows).
  Calls keep being answered from whatever the index holds meanwhile; `state()` says so.
- **Reconcile before each call**: when no background run is going, a call first walks the
  tree (names, sizes and mtimes only; no file is read) and compares it with what the index
  recorded. Up to `SYNC_CHANGE_LIMIT` changed or removed files are re-indexed in the call
  itself, so an agent that edits a file and searches right after finds its edit; more than
  that starts a background run instead.

Why not a file watcher: it needs a new dependency (watchdog or watchfiles), one inotify
watch per directory (the default per-user limit is often 8,192, exhausted by large trees
with `node_modules`), and it still needs the walk at start-up to catch changes made while
the server was down. Costs measured by `bench/bench_mcp_freshness.py` on a 3,000-file
tree (15k chunks), as ratios to one hybrid search in the same run (CPU; load avg ~17 on 2
cores): the quick check 0.55x, re-indexing one edited file 1.0x, a full walk 7.2x, and
`CodeBase.index()` on the unchanged tree 10.5x (bench/results/mcp_freshness.json).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from codeqa_lsp.chunking.ignore import WorkspaceFilter
from codeqa_lsp.chunking.scanner import scan
from codeqa_lsp.engine import CodeBase
from codeqa_lsp.index.embedders import EmbedderError
from codeqa_lsp.index.model import IndexProgress, IndexReport

log = logging.getLogger(__name__)

# A change set this large (a branch switch, a code generator, `git pull`) is re-indexed in
# the background rather than inside a call. The 3,000-file benchmark indexes at 23-35 ms per
# file with the hash embedder on the loaded 2-core machine (more with MiniLM), so 25 files
# keep a call's extra latency under about a second.
SYNC_CHANGE_LIMIT = 25
# The quick check cannot see a new file in a directory that held nothing indexable, nor a
# changed ignore file; a full walk every this often bounds how long such a change goes unseen.
# Measured (bench/bench_mcp_freshness.py, 3,000 files): a full walk costs ~7x a search in CPU,
# the quick check ~0.5x; at one call every few seconds this keeps the average below 1x.
FULL_SCAN_SECONDS = 30.0


@dataclass(frozen=True)
class Progress:
    indexing: bool
    phase: str
    done: int
    total: int


@dataclass(frozen=True)
class RefreshOutcome:
    seconds: float
    updated: int = 0
    removed: int = 0
    deferred: bool = False  # too many changes: handed to a background run
    skipped: bool = False  # a background run is going: it will pick the changes up


class IndexKeeper:
    """Owns the background index thread and the per-call reconcile of one `CodeBase`."""

    def __init__(self, workspace: CodeBase) -> None:
        self.workspace = workspace
        # Until the embedder has answered once, searches use keyword search alone: otherwise
        # the first call after start would wait for the model (torch MiniLM took 5-50 s to
        # load here; a remote endpoint may not answer at all). The answer is asked for at
        # `start`, beside the index run, not after it: onnxruntime answers in ~0.2 s, while
        # a warm start's index run re-reads the tree first (0.6 s for typer's 755 files, 2.4 s
        # for 7,000), and an agent's first searches come in that time.
        workspace.keyword_only = True
        # An index saved by an earlier run serves searches while this run checks the tree.
        self.resumed = bool(workspace.indexed_files())
        self._warming: threading.Thread | None = None
        self._lock = threading.Lock()  # guards the fields below
        self._refresh_lock = threading.Lock()  # one reconcile at a time
        self._thread: threading.Thread | None = None
        self._cancel = threading.Event()
        self._progress = Progress(False, "idle", 0, 0)
        self._rerun = False
        self.last_report: IndexReport | None = None
        self.last_indexed: float | None = None
        self.last_error: str | None = None
        # Files the scanner lists but the indexer refuses on reading (secret content,
        # binary, generated...): remembered by (size, mtime) so each call does not re-read them.
        self._refused: dict[str, tuple[int, float]] = {}
        self._snapshot: _Snapshot | None = None

    # -- background runs -----------------------------------------------------------------
    def start(self) -> None:
        """Start a background index run, or ask the running one to go once more."""
        with self._lock:
            if self._warming is None:
                self._warming = threading.Thread(
                    target=self._warm_query_embedder, name="codeqa-mcp-warm", daemon=True
                )
                self._warming.start()
            if self._thread is not None and self._thread.is_alive():
                self._rerun = True
                return
            self._progress = Progress(True, "starting", 0, 0)
            self._thread = threading.Thread(target=self._run, name="codeqa-mcp-index", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        while not self._cancel.is_set():
            try:
                report = self.workspace.index(progress=self._on_progress, cancel=self._cancel)
            except Exception as exc:  # the server keeps answering from what is indexed
                log.exception("background index failed")
                with self._lock:
                    self.last_error = f"indexing failed: {type(exc).__name__}: {exc}"
                    self._progress = Progress(False, "idle", 0, 0)
                    self._thread = None
                return
            if not report.embed_error and not report.cancelled and self.workspace.keyword_only:
                self._warm_query_embedder()
            with self._lock:
                self.last_report = report
                self.last_indexed = time.time()
                self.resumed = self.resumed or not report.cancelled  # the next runs re-check
                self.last_error = (
                    f"embeddings failed: {report.embed_error}" if report.embed_error else None
                )
                if self._rerun and not report.cancelled:
                    self._rerun = False
                    continue
                self._progress = Progress(False, "idle", 0, 0)
                self._thread = None
                return

    def _on_progress(self, progress: IndexProgress) -> None:
        if progress.phase == "embed" and progress.done > 0:
            self.workspace.keyword_only = False  # the embedder works and is loaded
        with self._lock:
            self._progress = Progress(True, progress.phase, progress.done, progress.total)

    def _warm_query_embedder(self) -> None:
        """Embed one query here, in the background, so no call waits for the model load.

        Hybrid search is switched on only if it works: a failing embedder keeps the
        server on keyword search (each query would otherwise wait for its timeout)."""
        try:
            works = self.workspace.warm_up()
        except Exception:  # never fatal: keyword search keeps serving
            log.warning("warming the query embedder failed", exc_info=True)
            works = False
        if works:
            self.workspace.keyword_only = False
        else:
            log.warning("the query embedder does not answer; serving keyword search only")

    def progress(self) -> Progress:
        with self._lock:
            return self._progress

    def indexing(self) -> bool:
        return self.progress().indexing

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the background run to end (tests, shutdown); True if it did."""
        with self._lock:
            thread = self._thread
        if thread is not None:
            thread.join(timeout)
            return not thread.is_alive()
        return True

    def stop(self) -> None:
        self._cancel.set()
        self.wait(timeout=30)

    # -- per-call reconcile --------------------------------------------------------------
    def refresh(self, full: bool = False) -> RefreshOutcome:
        """Bring the index in line with the tree before a call; cheap when nothing changed.

        Usually a quick check: one `stat` per file and directory the last walk listed. A
        full walk (`scan`, which applies every ignore and secret-name rule) runs when a
        listed directory changed (a file was created, deleted or renamed in it), when an
        atomic save replaced a file, or every `FULL_SCAN_SECONDS` (new ignore rules, new
        files in directories that held nothing indexable)."""
        started = time.perf_counter()
        if self.indexing():
            return RefreshOutcome(time.perf_counter() - started, skipped=True)
        with self._refresh_lock:
            snapshot, root = self._snapshot, self.workspace.root
            if (
                full
                or snapshot is None
                or time.monotonic() - snapshot.taken > FULL_SCAN_SECONDS
                or _directories_changed(root, snapshot)
            ):
                changed, removed, sizes = self._walk()
            else:
                changed, removed, sizes = _stat_listed(root, snapshot)
            if len(changed) + len(removed) > SYNC_CHANGE_LIMIT:
                self._snapshot = None  # the background run re-lists everything
                self.start()
                return RefreshOutcome(time.perf_counter() - started, deferred=True)
            workspace = self.workspace
            for path in removed:
                workspace.remove_file(path)
                self._forget(path)
            for path in changed:
                try:
                    report = workspace.update_file(path)
                except EmbedderError as exc:  # stored for keyword search; vectors come later
                    self.last_error = f"embeddings failed: {exc}"
                    continue
                self._remember(path, sizes[path], refused=report.skipped_reason is not None)
            return RefreshOutcome(time.perf_counter() - started, len(changed), len(removed))

    def _walk(self) -> tuple[list[str], list[str], dict[str, tuple[int, float]]]:
        """Full check: list the tree with the scanner's rules, compare with the index."""
        workspace = self.workspace
        root = workspace.root
        result = scan(root, workspace.settings, WorkspaceFilter(root, workspace.settings))
        known = workspace.indexed_files()
        sizes = {f.rel_path: (f.size, f.mtime) for f in result.files}
        changed = [
            p
            for p, state in sizes.items()
            if known.get(p) != state and self._refused.get(p) != state
        ]
        removed = sorted(known.keys() - sizes.keys())
        self._refused = {p: s for p, s in self._refused.items() if p in sizes}
        directories = {"", *(p.rsplit("/", 1)[0] if "/" in p else "" for p in sizes)}
        self._snapshot = _Snapshot(
            time.monotonic(), dict(sizes), _directory_mtimes(root, directories)
        )
        return changed, removed, sizes

    def _remember(self, path: str, state: tuple[int, float], refused: bool) -> None:
        if refused:
            self._refused[path] = state
        else:
            self._refused.pop(path, None)
        if self._snapshot is not None:
            self._snapshot.files[path] = state

    def _forget(self, path: str) -> None:
        self._refused.pop(path, None)
        if self._snapshot is not None:
            self._snapshot.files.pop(path, None)


@dataclass
class _Snapshot:
    """What the last full walk listed: files and their parent directories, by stat."""

    taken: float  # time.monotonic()
    files: dict[str, tuple[int, float]]  # rel path -> (size, mtime) as last processed
    directories: dict[str, int]  # rel dir ("" = root) -> st_mtime_ns


def _directory_mtimes(root: Path, directories: set[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for rel in directories:
        try:
            out[rel] = os.stat(root / rel).st_mtime_ns
        except OSError:
            continue  # vanished meanwhile: the next check sees the difference
    return out


def _directories_changed(root: Path, snapshot: _Snapshot) -> bool:
    """A file created, deleted or renamed in a listed directory changes its mtime."""
    prefix = f"{root}{os.sep}"
    for rel, mtime in snapshot.directories.items():
        try:
            if os.stat(prefix + rel).st_mtime_ns != mtime:
                return True
        except OSError:
            return True
    return False


def _stat_listed(
    root: Path, snapshot: _Snapshot
) -> tuple[list[str], list[str], dict[str, tuple[int, float]]]:
    """Quick check: which listed files changed or disappeared (no directory is read)."""
    changed: list[str] = []
    removed: list[str] = []
    sizes: dict[str, tuple[int, float]] = {}
    prefix = f"{root}{os.sep}"  # string joins: building a Path per file doubled this loop's cost
    for rel, state in snapshot.files.items():
        try:
            info = os.stat(prefix + rel)
        except FileNotFoundError:
            removed.append(rel)
            continue
        except OSError:
            continue  # unreadable now: leave it to the next full walk
        current = (info.st_size, info.st_mtime)
        if current != state:
            changed.append(rel)
            sizes[rel] = current
    return changed, removed, sizes
