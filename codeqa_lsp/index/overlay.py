"""`OverlayIndexer`: the shared team snapshot for what HEAD shares with it, the local index
for what differs in the working tree.

A client with `store` configured asks git for the nearest published ancestor of HEAD (the
merge-base with the published branch, or older), opens that snapshot, and indexes locally
only the files that differ from it: changed, added or deleted since that commit, untracked
files, then every saved file and dirty buffer the editor sends. Those paths are *shadowed*:
for them only local results count (a file deleted locally shows nothing), for every other
path the shared snapshot answers. Nothing of the unchanged tree is embedded locally.

Failure: if the database is unreachable, slow (statement timeout), hung (no answer at all:
the reader severs the connection, see `snapshot.READ_DEADLINE_SECONDS`) or has no snapshot
for this repository, the overlay says so once and becomes a plain local index. Found at an
index run, the notice goes in that `IndexReport`; found by a query, it goes at once to the
notice listener a front registered (`set_notice_listener`; the language server shows it as
a warning), the query is answered from the local index, and the whole tree is indexed
locally in the background. The next `index()` tries the database again.

Merging: dense scores are cosines of the same embedder on both sides, so they merge as
they are. BM25 scores from FTS5 and `ts_rank` are on different scales, so each side is
divided by its own best score before the lists are merged (the fusion downstream min-max
normalises the arm anyway).
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from codeqa_lsp.chunking.model import Chunk
from codeqa_lsp.index.filters import SearchFilters
from codeqa_lsp.index.indexer import Indexer
from codeqa_lsp.index.model import (
    IndexProgress,
    IndexReport,
    IndexStatus,
    ProgressCallback,
    UpdateReport,
)
from codeqa_lsp.index.pg import dsn, gitinfo
from codeqa_lsp.index.pg.snapshot import SharedSnapshot, open_snapshot
from codeqa_lsp.index.store import label_for

log = logging.getLogger(__name__)


def with_shared_store(local: Indexer, url: str | None) -> Indexer | OverlayIndexer:
    """`local` behind an overlay when `url` names a usable shared store; otherwise `local`
    alone, with a warning (no driver installed, a bad URL): the editor keeps working."""
    if not url:
        return local
    try:
        return OverlayIndexer(local, url)
    except ImportError:
        log.warning(
            "store is set but the PostgreSQL driver is missing (pip install "
            "'codeqa-lsp[postgres]'); using the local index"
        )
    except ValueError as exc:  # dsn.StoreUrlError, already redacted
        log.warning("store unusable (%s); using the local index", exc)
    return local


class OverlayIndexer:
    """Quacks like `Indexer` for retrieval and the engine; anything not defined
    here (embedder, index_dir, chunk_text, embed_query...) is the local indexer's."""

    def __init__(self, local: Indexer, url: str) -> None:
        self.local = local
        self.url = dsn.validate(url)
        self._shared: SharedSnapshot | None = None
        self._shared_chunks = 0
        self._shadowed: set[str] = set()
        self._lock = threading.RLock()
        self._notice: str | None = None
        self._fallback_reason: str | None = None
        self._background: threading.Thread | None = None
        self._listener: Callable[[str], None] | None = None
        self._reindex_requester: Callable[[], None] | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.local, name)

    # -- state ---------------------------------------------------------------------------
    @property
    def shared(self) -> SharedSnapshot | None:
        return self._shared

    def shadowed(self) -> set[str]:
        with self._lock:
            return set(self._shadowed)

    def _shadow(self, paths: Iterable[str]) -> None:
        with self._lock:
            self._shadowed.update(paths)

    def set_notice_listener(self, listener: Callable[[str], None] | None) -> None:
        """`listener(one_line)` is called (from the querying thread; it must not block) when a
        query finds the shared index unusable, instead of waiting for the next index run."""
        self._listener = listener

    def set_reindex_requester(self, requester: Callable[[], None] | None) -> None:
        """`requester()` asks the host for an ordinary index run (the language server's, with
        its progress, status and cancellation) when a query finds the shared index gone and
        the local index must take over the whole tree. Without one (CLI, MCP) the overlay
        indexes in a background thread of its own. Called from the querying thread; it must
        not block."""
        self._reindex_requester = requester

    def _fall_back(self, reason: str, reindex: bool) -> None:
        """Say once that the shared index is unusable and serve from the local index; with
        `reindex`, index the whole tree locally in the background (a query found out)."""
        reason = " ".join(reason.split())  # one line: psycopg messages carry newlines
        announce: str | None = None
        with self._lock:
            shared, self._shared = self._shared, None
            if self._fallback_reason is None:
                self._fallback_reason = reason
                self._notice = f"shared index unavailable ({reason}); using the local index"
                log.warning("%s", self._notice)
                if reindex and self._listener is not None:  # said now, not again at the next run
                    announce, self._notice = self._notice, None
            requester = self._reindex_requester if reindex and shared is not None else None
            if reindex and shared is not None and requester is None:
                self._reindex_in_background()
        if shared is not None:
            shared.close()
        if requester is not None:
            try:
                requester()
            except Exception:
                log.exception("reindex requester failed; indexing in the background")
                with self._lock:
                    self._reindex_in_background()
        if announce is not None and self._listener is not None:
            try:
                self._listener(announce)
            except Exception:
                log.exception("notice listener failed")

    def _reindex_in_background(self) -> None:
        """Index the whole tree locally in a thread of our own, unless one already runs
        (caller holds `_lock`)."""
        if self._background is None or not self._background.is_alive():
            self._background = threading.Thread(
                target=self._reindex_locally, daemon=True, name="codeqa-local-fallback"
            )
            self._background.start()

    def _reindex_locally(self) -> None:
        try:
            self.local.index()
        except Exception:
            log.exception("local fallback index of %s failed", self.local.root)

    # -- indexing ------------------------------------------------------------------------
    def _open_shared(self) -> tuple[SharedSnapshot | None, str | None]:
        """The nearest published snapshot, or (None, why not)."""
        from codeqa_lsp.index.pg.publish import spaces_for, workspace_identity

        try:
            identity = workspace_identity(self.local.root)
            commits = gitinfo.ancestors(self.local.root)
        except gitinfo.GitError as exc:
            return None, f"not a git checkout: {exc}"
        space, chunking = spaces_for(self.local.embedder, self.local.settings)
        try:
            snapshot = open_snapshot(
                self.url, repo=identity, space=space, chunking=chunking, commits=commits
            )
        except ConnectionError as exc:
            return None, str(exc)
        except Exception as exc:  # psycopg errors: missing schema, permissions...
            return None, dsn.redact(f"{type(exc).__name__}: {exc}".strip())
        if snapshot is None:
            return None, f"no snapshot of {identity} published for an ancestor of HEAD with {space}"
        return snapshot, None

    def _differing_paths(self, commit: str) -> set[str]:
        """Workspace-relative paths that differ from `commit` in the working tree."""
        root = self.local.root.resolve()
        top = gitinfo.toplevel(root).resolve()
        prefix = "" if root == top else root.relative_to(top).as_posix() + "/"
        changed = gitinfo.changed_since(root, commit)
        return {p[len(prefix) :] for p in changed if p.startswith(prefix)}

    def index(
        self, progress: ProgressCallback | None = None, cancel: threading.Event | None = None
    ) -> IndexReport:
        snapshot, why = self._open_shared()
        if snapshot is not None:
            try:
                differing = self._differing_paths(snapshot.commit)
                count = snapshot.chunk_count(exclude=differing)
            except (gitinfo.GitError, ConnectionError) as exc:
                snapshot.close()
                snapshot, why = None, str(exc)
        if snapshot is None:
            self._fall_back(why or "unknown", reindex=False)
            report = self.local.index(progress=progress, cancel=cancel)
            return self._with_notice(report)
        with self._lock:
            old, self._shared = self._shared, snapshot
            self._shared_chunks = count
            self._fallback_reason = None
            self._shadowed = set(differing)
        if old is not None:
            old.close()
        report = self._sync_local(differing, progress, cancel)
        report.chunks_total += count
        report.files_seen += len(snapshot.files().keys() - differing)
        return self._with_notice(report)

    def _sync_local(
        self, differing: set[str], progress: ProgressCallback | None, cancel: threading.Event | None
    ) -> IndexReport:
        """Make the local index hold exactly the differing files."""
        import time

        started = time.monotonic()
        report = IndexReport()
        for path in sorted(set(self.local.store.files()) - differing):
            report.chunks_removed += self.local.remove_file(path).chunks_removed
            report.files_removed += 1
        for done, path in enumerate(sorted(differing), 1):
            if cancel is not None and cancel.is_set():
                report.cancelled = True
                break
            update = self.local.update_file(path)
            if update.skipped_reason and update.skipped_reason != "vanished":
                report.skipped[update.skipped_reason] += 1
            elif update.chunks_added or update.chunks_removed:
                report.files_changed += 1
            report.chunks_added += update.chunks_added
            report.chunks_removed += update.chunks_removed
            report.embedded += update.embedded
            if progress is not None:
                progress(IndexProgress("chunk", done, len(differing), path))
        report.files_seen = self.local.store.counts()[0]
        report.chunks_total = self.local.store.counts()[1]
        report.seconds = time.monotonic() - started
        return report

    def _with_notice(self, report: IndexReport) -> IndexReport:
        with self._lock:
            notice, self._notice = self._notice, None
        if notice is not None:
            report.notice = notice
        return report

    def update_file(self, rel_path: str, text: str | None = None) -> UpdateReport:
        self._shadow([rel_path])
        return self.local.update_file(rel_path, text=text)

    def remove_file(self, rel_path: str) -> UpdateReport:
        self._shadow([rel_path])
        return self.local.remove_file(rel_path)

    def status(self) -> IndexStatus:
        status = self.local.status()
        shared = self._shared
        if shared is None:
            return status
        hidden = self.shadowed()
        try:
            files = len(shared.files().keys() - hidden)
            chunks = shared.chunk_count(exclude=hidden)
        except ConnectionError as exc:
            self._fall_back(str(exc), reindex=True)
            return status
        return dataclasses.replace(
            status,
            files=status.files + files,
            chunks=status.chunks + chunks,
            embedded=status.embedded + chunks,
        )

    def coverage(self) -> float:
        local_chunks = self.local.store.chunk_count()
        total = local_chunks + (self._shared_chunks if self._shared is not None else 0)
        if total == 0:
            return 1.0
        local_embedded = min(len(self.local.vectors), local_chunks)
        return min(1.0, (local_embedded + total - local_chunks) / total)

    # -- reading -------------------------------------------------------------------------
    def _shared_call(self, call: Callable[[SharedSnapshot], Any], default: Any) -> Any:
        shared = self._shared
        if shared is None:
            return default
        try:
            return call(shared)
        except ConnectionError as exc:
            self._fall_back(str(exc), reindex=True)
            return default

    def _visible(self, ranked: Sequence[tuple[Chunk, float]]) -> list[tuple[Chunk, float]]:
        hidden = self.shadowed()
        return [(c, s) for c, s in ranked if c.path not in hidden]

    def chunks(self, path: str | None = None, language: str | None = None) -> list[Chunk]:
        local = self.local.chunks(path=path, language=language)
        if path is not None and path in self.shadowed():
            return local
        hidden = self.shadowed()
        shared = self._shared_call(lambda s: s.chunks(path=path, language=language), [])
        return local + [c for c in shared if c.path not in hidden]

    def get_chunks(self, ids: Sequence[str]) -> list[Chunk]:
        found = {c.id: c for c in self.local.get_chunks(ids)}
        missing = [i for i in ids if i not in found]
        if missing:
            found.update((c.id, c) for c in self._shared_call(lambda s: s.get_chunks(missing), []))
        return [found[i] for i in ids if i in found]

    def definitions(self, name: str) -> list[Chunk]:
        hidden = self.shadowed()
        shared = [
            c for c in self._shared_call(lambda s: s.definitions(name), []) if c.path not in hidden
        ]
        return self.local.definitions(name) + shared

    def file_hash(self, rel_path: str) -> str | None:
        if rel_path in self.shadowed() or self._shared is None:
            return self.local.file_hash(rel_path)
        return self._shared_call(lambda s: s.file_hash(rel_path), None)

    def bm25(
        self, query: str, limit: int, filters: SearchFilters | None = None
    ) -> list[tuple[Chunk, float]]:
        local = _scaled(self.local.bm25(query, limit, filters))
        shared = _scaled(
            self._visible(self._shared_call(lambda s: s.bm25(query, limit, filters), []))
        )
        return _merge(local, shared, limit)

    def bm25_terms(
        self, terms: Sequence[str], limit: int, filters: SearchFilters | None = None
    ) -> list[tuple[Chunk, float]]:
        local = _scaled(self.local.bm25_terms(terms, limit, filters))
        shared = _scaled(
            self._visible(self._shared_call(lambda s: s.bm25_terms(terms, limit, filters), []))
        )
        return _merge(local, shared, limit)

    # Whole-file arms (the searcher's file ranking and long-query term selection): every
    # method the searcher calls is defined here, so none reaches the local index alone
    # through `__getattr__`.
    def indexed_paths(self) -> list[str]:
        hidden = self.shadowed()
        shared = self._shared_call(lambda s: s.indexed_paths(), [])
        return sorted(set(self.local.indexed_paths()) | {p for p in shared if p not in hidden})

    def paths_generation(self) -> tuple[int, ...]:
        """The local index's generation and the shared snapshot's id: a new snapshot (or the
        fallback dropping it) changes `indexed_paths` while the local index stays as it was."""
        shared = self._shared
        return (*self.local.paths_generation(), shared.snapshot_id if shared is not None else -1)

    def definitions_in_paths(self, paths: Sequence[str]) -> list[tuple[str, str, str]]:
        hidden = self.shadowed()
        local_paths = [p for p in paths if p in hidden]
        shared_paths = [p for p in paths if p not in hidden]
        out = self.local.definitions_in_paths(local_paths) if local_paths else []
        if shared_paths:
            out += self._shared_call(lambda s: s.definitions_in_paths(shared_paths), [])
        return out

    def file_sizes(self, paths: Sequence[str]) -> dict[str, int]:
        """A changed file's size from the local index, every other file's from the snapshot."""
        hidden = self.shadowed()
        local_paths = [p for p in paths if p in hidden]
        shared_paths = [p for p in paths if p not in hidden]
        out = self.local.file_sizes(local_paths) if local_paths else {}
        if shared_paths:
            out.update(self._shared_call(lambda s: s.file_sizes(shared_paths), {}))
        return out

    def file_bm25(self, terms: Sequence[str], limit: int) -> list[tuple[str, float]]:
        hidden = self.shadowed()
        local = _scaled_paths(self.local.file_bm25(terms, limit))
        shared = _scaled_paths(
            [
                (p, s)
                for p, s in self._shared_call(lambda s: s.file_bm25(terms, limit), [])
                if p not in hidden
            ]
        )
        merged: dict[str, float] = {}
        for path, score in [*local, *shared]:
            merged.setdefault(path, score)
        return sorted(merged.items(), key=lambda item: -item[1])[:limit]

    def file_document_counts(self, terms: Sequence[str]) -> tuple[dict[str, int], int]:
        """Local plus shared counts (a shadowed file may count on both sides: the IDF this
        feeds only orders a long query's terms)."""
        counts, total = self.local.file_document_counts(terms)
        shared, shared_total = self._shared_call(lambda s: s.file_document_counts(terms), ({}, 0))
        for term, n in shared.items():
            counts[term] = counts.get(term, 0) + n
        return counts, total + shared_total

    def dense(
        self, query: str, limit: int, filters: SearchFilters | None = None
    ) -> list[tuple[Chunk, float]]:
        vector = self.local.embed_query(query)
        return [] if vector is None else self.dense_by_vector(vector, limit, filters)

    def dense_by_vector(
        self, vector: np.ndarray, limit: int, filters: SearchFilters | None = None
    ) -> list[tuple[Chunk, float]]:
        local = self.local.dense_by_vector(vector, limit, filters)
        shared = self._visible(
            self._shared_call(lambda s: s.dense_by_vector(vector, limit, filters), [])
        )
        return _merge(local, shared, limit)

    def cosines_for(self, chunk_ids: Sequence[str], vector: np.ndarray) -> list[float | None]:
        """For the search's cosine completion: a chunk's local cosine when it has a local
        vector, else the shared vector's, else None."""
        out = self.local.cosines_for(chunk_ids, vector)
        labels = [label_for(i) for i in chunk_ids]
        missing = [label for label, v in zip(labels, out, strict=True) if v is None]
        if missing:
            found = self._shared_call(lambda s: s.vectors_by_label(missing), {})
            query = np.asarray(vector, dtype=np.float32)
            out = [
                v if v is not None or label not in found else float(found[label] @ query)
                for v, label in zip(out, labels, strict=True)
            ]
        return out

    def close(self) -> None:
        with self._lock:
            shared, self._shared = self._shared, None
        if shared is not None:
            shared.close()
        self.local.close()


def _scaled(ranked: Sequence[tuple[Chunk, float]]) -> list[tuple[Chunk, float]]:
    top = max((s for _, s in ranked), default=0.0)
    return [(c, s / top) for c, s in ranked] if top > 0 else list(ranked)


def _scaled_paths(ranked: Sequence[tuple[str, float]]) -> list[tuple[str, float]]:
    top = max((s for _, s in ranked), default=0.0)
    return [(p, s / top) for p, s in ranked] if top > 0 else list(ranked)


def _merge(
    a: Sequence[tuple[Chunk, float]], b: Sequence[tuple[Chunk, float]], limit: int
) -> list[tuple[Chunk, float]]:
    """Best first; a chunk id present on both sides keeps the local (first) entry."""
    seen: set[str] = set()
    out: list[tuple[Chunk, float]] = []
    for chunk, score in sorted([*a, *b], key=lambda item: -item[1]):
        if chunk.id not in seen:
            seen.add(chunk.id)
            out.append((chunk, score))
    return out[:limit]
