"""`Indexer`: one workspace's persistent index (SQLite + hnswlib + embedding cache).

The two stores are kept consistent without a distributed transaction: a chunk's vector
label is derived from its content id, chunks and their FTS rows change in one SQLite
transaction per file, and the vector file is saved atomically. After a crash the two may
disagree about *which* chunks have vectors, never about what a label means; opening drops
vectors whose chunk is gone and `index()` embeds chunks without a vector (usually from the
embedding cache, so without calling the model).

Threads: `index()` / `update_file()` run in a worker while `bm25`, `dense`, `definitions`
and `status` are served from other threads. Writers are serialized by the store's write
lock (held per file, never across a whole index); readers use their own SQLite
connections in WAL mode and are never blocked by writers.
"""

from __future__ import annotations

import errno
import hashlib
import logging
import os
import shutil
import sqlite3
import threading
import time
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path, PurePosixPath

import platformdirs

from codeqa_lsp.chunking.model import Chunk
from codeqa_lsp.config import Settings
from codeqa_lsp.index.embedders import CountingEmbedder, Embedder, create_embedder
from codeqa_lsp.index.embedders.cache import EmbeddingCache
from codeqa_lsp.index.embedding import ChunkVectors
from codeqa_lsp.index.model import (
    IndexProgress,
    IndexReport,
    IndexStatus,
    ProgressCallback,
    UpdateReport,
)
from codeqa_lsp.index.reads import IndexReads
from codeqa_lsp.index.store import (
    IndexReadOnly,
    Store,
    StoreCorrupt,
    StoreUnwritable,
    is_unwritable,
)
from codeqa_lsp.index.vector_saves import VectorSaves
from codeqa_lsp.index.vectors import VectorStore

log = logging.getLogger(__name__)

DB_NAME = "index.sqlite"
CLOSE_WAIT_SECONDS = 30.0  # close() waits this long for a running index() to stop
FILES_PER_TRANSACTION = 32  # full index: files stored per SQLite transaction (commit cost)


def default_index_dir(root: Path) -> Path:
    """`$XDG_CACHE_HOME/codeqa-lsp/<sha256(root)[:16]>` (platformdirs honours XDG)."""
    digest = hashlib.sha256(str(root).encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return Path(platformdirs.user_cache_dir("codeqa-lsp")) / digest


class Indexer(IndexReads):
    def __init__(self, root: Path, settings: Settings) -> None:
        self.root = root.resolve()
        self.settings = settings
        self.index_dir = settings.configured_index_dir or default_index_dir(self.root)
        self.index_dir.mkdir(parents=True, exist_ok=True)
        self._base_embedder: Embedder = create_embedder(settings)
        self.embedder = CountingEmbedder(self._base_embedder)
        identity = {"embedder": self.embedder.name, "model": self.embedder.model}
        space = f"{self.embedder.name}|{self.embedder.model}|{self.embedder.dim}"
        cache_dir = (
            self.index_dir / "embedding-cache"
            if settings.index_dir
            else Path(platformdirs.user_cache_dir("codeqa-lsp")) / "embedding-cache"
        )
        self.cache = EmbeddingCache(cache_dir, settings.embedding_cache_bytes, namespace=space)
        self._rebuilt_reason: str | None = None
        self.read_only_reason: str | None = (
            None  # set when the index could only be opened read-only
        )
        self.store = self._open_store()
        owner = self.store.get_meta("root")
        if owner is not None and owner != str(self.root) and self.read_only_reason is None:
            # A fixed indexDir reused for another workspace: its paths mean other files.
            self.store.close()
            self._wipe_store(f"index dir belonged to {owner}; rebuilt for {self.root}")
            self.store = self._open_store()
        self._write_meta("root", str(self.root))
        self.vectors = VectorStore(self.index_dir, self.embedder.dim, identity)
        self._saves = VectorSaves(self.vectors)
        reason = self.vectors.load()
        if reason:
            self._note_rebuild(f"vectors discarded: {reason}")
        previous = self.store.get_meta("embedder")
        if previous not in (None, space) and not len(self.vectors):
            # Vectors from two models are never mixed: each embedder has its own vector file.
            self._note_rebuild(
                f"embedder changed from {previous} to {space}; re-embedding everything"
            )
        self._write_meta("embedder", space)
        if self.read_only_reason is None:
            self._check_chunking()
        self._index_lock = threading.Lock()
        self._closed = False
        self._stopping = threading.Event()  # set by close(): a running index() winds down
        from codeqa_lsp.chunking.scanner import WorkspaceFilter

        self._filter = WorkspaceFilter(self.root, settings)
        self._embedding = ChunkVectors(
            self.store, self.vectors, self._saves, self.embedder, self.cache, self._should_stop
        )
        self._embed_query_cached = lru_cache(maxsize=256)(self._embed_query_uncached)
        if self.store.counts()[0] and self.read_only_reason is None:
            self._drop_orphan_vectors()

    def _write_meta(self, key: str, value: str) -> None:
        """Metadata written on open; a disk that filled up since leaves the index read-only."""
        if self.read_only_reason is not None:
            return
        try:
            self.store.set_meta(key, value)
        except sqlite3.OperationalError as exc:
            if not is_unwritable(exc):
                raise
            self.read_only_reason = str(exc)
            log.warning(
                "index %s cannot be written (%s); read-only until space returns",
                self.index_dir,
                exc,
            )

    def check_writable(self) -> None:
        """Raise IndexReadOnly (one line) when this index was opened read-only."""
        if self.read_only_reason is not None:
            raise IndexReadOnly(
                f"the index at {self.index_dir} cannot be written ({self.read_only_reason}); the "
                "previous index is still searchable — free space (or fix permissions) and run again"
            )

    # -- opening and recovery ------------------------------------------------------------
    def _open_store(self) -> Store:
        db = self.index_dir / DB_NAME
        try:
            return Store(db)
        except StoreUnwritable as exc:
            # Disk full or a read-only file: keep serving the previous index, never wipe it.
            self.read_only_reason = str(exc)
            log.warning("index %s cannot be written (%s); opened read-only", self.index_dir, exc)
            return Store(db, read_only=True)
        except StoreCorrupt as exc:
            self._wipe_store(f"index database unusable ({exc}); rebuilt from the files")
            return Store(db)

    def _wipe_store(self, reason: str) -> None:
        self._note_rebuild(reason)
        db = self.index_dir / DB_NAME
        for suffix in ("", "-wal", "-shm", "-journal"):
            path = db.with_name(db.name + suffix)
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)

    def _note_rebuild(self, reason: str) -> None:
        log.warning("index %s: %s", self.index_dir, reason)
        self._rebuilt_reason = (
            reason if self._rebuilt_reason is None else f"{self._rebuilt_reason}; {reason}"
        )

    def _drop_orphan_vectors(self) -> None:
        """Vectors whose chunk is no longer in SQLite (a crash between the two saves)."""
        with self.store.write_lock:
            orphans = self.vectors.live_labels() - set(self.store.all_labels())
            if orphans and self.vectors.delete(orphans):
                log.info("dropped %d vectors without a chunk", len(orphans))
                self._saves.save()

    # -- indexing ------------------------------------------------------------------------
    def index(
        self, progress: ProgressCallback | None = None, cancel: threading.Event | None = None
    ) -> IndexReport:
        """Reconcile the index with the files on disk; only changed files are re-chunked and
        only chunks without a vector are embedded. Cancelling keeps what was done.

        Two passes: first every changed file is chunked and stored (BM25 then covers the whole
        workspace within seconds), then the chunks without a vector are embedded, so dense
        search joins progressively (`coverage()`)."""
        if self.read_only_reason is not None:
            # Search and ask keep working on the previous index; `codeqa index` reports it
            # (check_writable) and the next run completes once space returns.
            log.warning(
                "index %s is read-only (%s); not updated", self.index_dir, self.read_only_reason
            )
            return IndexReport(
                chunks_total=self.store.counts()[0], rebuilt_reason=self._rebuilt_reason
            )
        try:
            return self._index_run(progress, cancel)
        except (sqlite3.OperationalError, OSError) as exc:
            if isinstance(exc, OSError) and exc.errno not in (
                errno.ENOSPC,
                errno.EDQUOT,
                errno.EROFS,
                errno.EACCES,
            ):
                raise
            if isinstance(exc, sqlite3.OperationalError) and not is_unwritable(exc):
                raise
            # A full disk mid-run: every committed file stays indexed and searchable; the
            # next run picks up the rest (unchanged files are skipped by hash).
            reason = f"{exc.strerror or exc}" if isinstance(exc, OSError) else str(exc)
            log.warning(
                "index %s: writing failed (%s); kept what was committed", self.index_dir, reason
            )
            return IndexReport(chunks_total=self.store.counts()[0], write_error=reason)

    def _index_run(
        self, progress: ProgressCallback | None, cancel: threading.Event | None
    ) -> IndexReport:
        from codeqa_lsp.chunking.scanner import WorkspaceFilter, scan

        started = time.monotonic()
        emit = progress or (lambda _p: None)
        with self._index_lock:
            report = IndexReport(rebuilt_reason=self._rebuilt_reason)
            self._rebuilt_reason = None
            emit(IndexProgress("scan", 0, 0, "scanning files"))
            self._filter = WorkspaceFilter(
                self.root, self.settings
            )  # ignore files may have changed
            result = scan(self.root, self.settings, self._filter)
            report.skipped.update(result.skipped)
            report.files_seen = len(result.files)
            known = self.store.files()
            for path in sorted(known.keys() - {f.rel_path for f in result.files}):
                report.chunks_removed += self.remove_file(path).chunks_removed
                report.files_removed += 1
            changed = [
                f.rel_path
                for f in result.files
                if (old := known.get(f.rel_path)) is None or old[:2] != (f.size, f.mtime)
            ]
            del known, result
            done = report.files_seen - len(changed)
            with self.store.bulk_writes():  # BM25 postings compacted at the end
                for start in range(0, len(changed), FILES_PER_TRANSACTION):
                    if self._should_stop(cancel):
                        report.cancelled = True
                        break
                    batch = changed[start : start + FILES_PER_TRANSACTION]
                    for update, _ in self._sync_files(batch, [None] * len(batch)):
                        if update.skipped_reason:
                            report.skipped[update.skipped_reason] += 1
                        elif update.chunks_added or update.chunks_removed:
                            report.files_changed += 1
                        report.chunks_added += update.chunks_added
                        report.chunks_removed += update.chunks_removed
                    done += len(batch)
                    emit(IndexProgress("chunk", done, report.files_seen, batch[-1]))
            if not report.cancelled:
                report.embedded += self._embedding.embed_missing(emit, cancel, report)
            if not report.cancelled and not report.embed_error:
                report.dense_ready_seconds = time.monotonic() - started
                report.windows_embedded += self._embedding.embed_owed_windows(emit, cancel, report)
            emit(IndexProgress("save", 0, 1, "saving"))
            self._drop_orphan_vectors()
            self._saves.save()
            self.store.set_meta("last_updated", repr(time.time()))
            if not report.cancelled:
                self.store.set_meta("skipped", _json_counter(report.skipped))
            report.chunks_total = self.store.counts()[1]
            report.seconds = time.monotonic() - started
            emit(IndexProgress("save", 1, 1, "done"))
            return report

    def _check_chunking(self) -> None:
        """A new chunker (or chunk budget) re-chunks every file on the next `index()`;
        chunks from two chunkers are never mixed in one index."""
        from codeqa_lsp.chunking.chunker import CHUNKER_VERSION

        chunking = f"{CHUNKER_VERSION}|{self.settings.chunk_tokens}"
        previous = self.store.get_meta("chunking")
        if previous == chunking:
            return
        with self.store.transaction() as conn:
            self.store.forget_file_states(conn)
            self.store.set_meta("chunking", chunking, conn)
        if previous is not None:
            # What the embedder reads of a kept chunk may have changed too (`embed_text`):
            # every chunk is embedded again, from the embedding cache where its text is known.
            self.vectors.delete(self.vectors.live_labels())
        if previous is not None:
            self._note_rebuild(
                f"chunking changed from {previous} to {chunking}; re-chunking every file"
            )

    def _should_stop(self, cancel: threading.Event | None) -> bool:
        return self._stopping.is_set() or (cancel is not None and cancel.is_set())

    def _sync_files(
        self, paths: Sequence[str], texts: Sequence[str | None]
    ) -> list[tuple[UpdateReport, list[Chunk]]]:
        """Re-read (or take `text`), re-chunk and store the differences of some files in one
        transaction; returns each file's report and its newly inserted chunks.

        Reading happens under the write lock, so a concurrent `update_file` can never be
        overwritten by an older version of the same file read a moment earlier."""
        outcomes: list[tuple[UpdateReport, list[Chunk]]] = []
        dead_labels: list[int] = []
        with self.store.transaction() as conn:
            for path, text in zip(paths, texts, strict=True):
                update, inserted, dead = self._sync_file(conn, path, text)
                outcomes.append((update, inserted))
                dead_labels.extend(dead)
        self.vectors.delete(dead_labels)
        return outcomes

    def skip_reason(self, rel_path: str) -> str | None:
        """Why the scanner would not index this path (ignore rules, excludes, secret names)."""
        return "outside-root" if _escapes_root(rel_path) else self._filter.skip_reason(rel_path)

    def _sync_file(
        self, conn: sqlite3.Connection, rel_path: str, text: str | None
    ) -> tuple[UpdateReport, list[Chunk], list[int]]:
        from codeqa_lsp.chunking.chunker import chunk_source
        from codeqa_lsp.chunking.scanner import Skip, content_skip_reason, read_source

        # The path rules (ignore files, excludes, secret file names) apply to single-file
        # updates too: a save of `.env` must not sneak past the scanner's checks.
        reason = "outside-root" if _escapes_root(rel_path) else self._filter.skip_reason(rel_path)
        size, mtime, sha = 0, -1.0, ""
        if reason is None and text is not None:
            reason = content_skip_reason(text, self.settings)
            data = text.encode("utf-8", "surrogatepass")
            # mtime -1: an unsaved buffer; the next `index()` re-reads the disk version.
            size, sha = len(data), hashlib.sha256(data).hexdigest()
        elif reason is None:
            source = read_source(self.root, rel_path, self.settings)  # never raises
            if isinstance(source, Skip):
                reason = source.reason
            else:
                text, size, mtime, sha = source.text, source.size, source.mtime, source.sha256
        if reason is not None or text is None:
            dead = self.store.delete_file(conn, rel_path)
            return UpdateReport(rel_path, chunks_removed=len(dead), skipped_reason=reason), [], dead
        now = time.time()
        old = self.store.chunk_ids_for(rel_path, conn)
        if self.store.file_hash(rel_path, conn) == sha:
            self.store.upsert_file(conn, rel_path, size, mtime, sha, now)
            return UpdateReport(rel_path, chunks_kept=len(old)), [], []
        chunks = chunk_source(rel_path, text, language=None, max_tokens=self.settings.chunk_tokens)
        new_ids = {c.id for c in chunks}
        removed = [cid for cid in old if cid not in new_ids]
        # Kept chunks get their new lines and derived columns; a few are replaced whole.
        # (The first of two identical definitions is the one stored, as `insert_chunks` does.)
        still = list({c.id: c for c in reversed(chunks) if c.id in old}.values())
        replaced = {c.id for c in self.store.refresh_kept(conn, still)}
        self.store.delete_chunks(conn, [*removed, *replaced])
        fresh = [c for c in chunks if c.id not in old or c.id in replaced]
        inserted = self.store.insert_chunks(conn, fresh)
        self.store.refresh_file_text(conn, rel_path)
        self.store.upsert_file(conn, rel_path, size, mtime, sha, now)
        kept = len(old) - len(removed)  # the replaced ones too: the same definitions
        update = UpdateReport(rel_path, len(inserted) - len(replaced), len(removed), kept)
        return update, inserted, [old[cid] for cid in [*removed, *replaced]]

    def update_file(self, rel_path: str, text: str | None = None) -> UpdateReport:
        """Re-chunk one file (from disk, or `text` for an unsaved buffer), embed only new
        chunks, drop removed ones: one SQLite transaction, then a (debounced) vector save."""
        [(update, inserted)] = self._sync_files([rel_path], [text])
        embedded = self._embedding.embed_chunks(inserted) if inserted else 0
        self._saves.save_soon()
        if embedded:
            return UpdateReport(
                update.path,
                update.chunks_added,
                update.chunks_removed,
                update.chunks_kept,
                embedded,
                update.skipped_reason,
            )
        return update

    def remove_file(self, rel_path: str) -> UpdateReport:
        with self.store.transaction() as conn:
            dead = self.store.delete_file(conn, rel_path)
        self.vectors.delete(dead)
        self._saves.save_soon()
        return UpdateReport(rel_path, chunks_removed=len(dead))

    # -- reading -------------------------------------------------------------------------
    def status(self) -> IndexStatus:
        files, chunks, languages = self.store.counts()
        last = self.store.get_meta("last_updated")
        size = sum(p.stat().st_size for p in self.index_dir.rglob("*") if p.is_file())
        return IndexStatus(
            root=str(self.root),
            files=files,
            chunks=chunks,
            embedded=min(len(self.vectors), chunks),
            languages=languages,
            embedder=self.embedder.name,
            embedding_model=self.embedder.model,
            dimension=self.embedder.dim,
            last_updated=float(last) if last else None,
            skipped=self.store.get_json("skipped", {}),
            index_dir=str(self.index_dir),
            size_bytes=size,
        )

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._stopping.set()
        # Let a running index() stop at its next batch before the connections go away.
        stopped = self._index_lock.acquire(timeout=CLOSE_WAIT_SECONDS)
        try:
            self._saves.close()
        finally:
            if stopped:
                self._index_lock.release()
            self.store.close()
            self.cache.close()


def _escapes_root(rel_path: str) -> bool:
    path = PurePosixPath(rel_path.replace("\\", "/") if os.sep == "\\" else rel_path)
    return path.is_absolute() or ".." in path.parts or not path.parts


def _json_counter(counter: Counter[str]) -> str:
    import json

    return json.dumps(dict(counter), sort_keys=True)
