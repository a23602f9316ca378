"""hnswlib vector storage with crash-atomic saves.

Layout in the index directory, per embedder (`<space>` = embedder-model-dim, so processes
or settings using different embedders never fight over one file, and switching back to an
embedder finds its vectors still there):
    vectors.<space>-<generation>.hnsw   an hnswlib index file (cosine space)
    vectors.<space>.json                the commit record: which generation is current, its
                                        size and sha256, the deleted labels, the identity

A chunk longer than the embedder's window has extra vectors, one per later window of its
text (`embedders/local.py`, `windows`), under `window_label(label, w)`: the chunk's 60-bit
label (`store.label_for`) with the window number above it. Every read speaks of chunks: the
count, the live labels and deletions are by chunk label (deleting a chunk deletes its
windows), and a query scores each chunk by its best window. A full index embeds every
chunk's first window before any later one (`index/embedding.py`); the chunks whose later
windows are still to come are "owed" and listed in the commit record, so a run that stops
between the two passes leaves the next one knowing what is left.

A save writes a new generation file (fsync), then replaces `vectors.json` atomically (temp
file, fsync, rename, fsync of the directory), then deletes the previous generation. A crash
at any point leaves `vectors.json` naming a complete, checksummed file: the old index or the
new one, never a torn one. Anything that does not verify is reported, and the caller starts
from an empty index (re-embedding from the embedding cache).
"""

from __future__ import annotations

import contextlib
import errno
import glob
import hashlib
import json
import logging
import os
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

FORMAT_VERSION = 1
INITIAL_CAPACITY = 1024
M = 16
EF_CONSTRUCTION = 100
EF_SEARCH_MIN = 64
# A query searches with ef = EF_PER_RESULT x the results it asks for. Measured 2026-11-26,
# the 100 questions' MiniLM vectors, the share of the exact top 50 chunks the graph returns
# (recall@50, mean / worst question), asking for 100 labels (windows included) as `query`
# does: the large tree's index (131k vectors) 0.906 / 0.28 at ef 200 (the old 2x), 0.957 /
# 0.70 at 400, 0.982 / 0.84 at 800, 0.991 / 0.88 at 1,600; a 70k-vector SWE-bench tree
# (sympy) 0.829 / 0.22, 0.911 / 0.32, 0.967 / 0.56. The four question sets' own indexes
# (<2k vectors) 0.998 at 200. ef 800 cost ~1.7 ms more per query at 131k (0.6 -> 2.3 ms,
# a busy machine): a dense arm that missed a tenth of its best matches on large repositories
# for ~2 ms.
EF_PER_RESULT = 8
COMPACT_SHARE = 0.25  # rebuild the graph when this share of its labels is deleted
COMPACT_MIN = 256
BRUTE_FORCE_MAX = 4096  # filtered queries over fewer candidates are scored exactly
WINDOW_SHIFT = 60  # chunk labels are 60 bits (`store.label_for`); window numbers sit above
BASE_MASK = (1 << WINDOW_SHIFT) - 1
MAX_WINDOWS = 8  # window numbers a chunk may use, 0 (its own label) to 7


def window_label(label: int, window: int) -> int:
    """The label of window `window` (1, 2, ...) of the chunk labelled `label`."""
    return label | (window << WINDOW_SHIFT)


def chunk_label(label: int) -> int:
    """The chunk a (window) label belongs to."""
    return label & BASE_MASK


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def atomic_write_bytes(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}-{threading.get_ident()}")
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)


@contextlib.contextmanager
def _process_lock(lock_path: Path) -> Iterator[None]:
    """Serializes saves and loads across processes sharing the index (the language server
    and a `codeqa index` run): generation numbers never collide, and stale-file cleanup
    never deletes a file another process is about to commit."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: in-process locking only
        yield
        return
    try:
        handle = open(lock_path, "a+b")  # noqa: SIM115 - closed below
    except OSError as exc:
        if exc.errno not in (errno.EROFS, errno.EACCES, errno.ENOSPC, errno.EPERM):
            raise
        # A read-only or full index folder: we can only read it, and a read needs no lock
        # against our own writes (a save there fails on its own with a clear error).
        yield
        return
    with handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _committed_generation(pointer: Path) -> int:
    try:
        return int(json.loads(pointer.read_text("utf-8"))["generation"])
    except (OSError, ValueError, KeyError, TypeError):
        return 0


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class VectorStore:
    """An in-memory hnswlib index for one embedder, persisted atomically on `save`.

    All methods are serialized by one lock: hnswlib's resize, delete and save are not safe
    against concurrent queries, and single queries take about a millisecond."""

    def __init__(self, directory: Path, dim: int, identity: Mapping[str, str | int]) -> None:
        self.directory = directory
        self.dim = dim
        self.identity: dict[str, str | int] = {**identity, "dim": dim, "format": FORMAT_VERSION}
        space = re.sub(
            r"[^A-Za-z0-9_.@-]+", "_", f"{identity.get('embedder')}-{identity.get('model')}-{dim}"
        )
        self.prefix = f"vectors.{space}"
        self.pointer = directory / f"{self.prefix}.json"
        self._lock_path = directory / f"{self.prefix}.lock"
        self._lock = threading.RLock()
        self._deleted: set[int] = set()
        self._live: set[int] = set()  # chunk and window labels
        self._extra: set[int] = set()  # the live window labels
        self._owed: set[int] = set()  # chunk labels whose later windows are still to come
        self._index = self._new_index(INITIAL_CAPACITY)
        self._generation = 0
        self.dirty = False

    def _new_index(self, capacity: int) -> Any:
        import hnswlib

        index = hnswlib.Index(space="cosine", dim=self.dim)
        index.init_index(max_elements=capacity, ef_construction=EF_CONSTRUCTION, M=M)
        index.set_ef(EF_SEARCH_MIN)
        return index

    # -- persistence ---------------------------------------------------------------------
    def load(self) -> str | None:
        """Load the committed generation. Returns None on success (or when there is nothing
        saved yet), else the reason the saved vectors were discarded."""
        with _process_lock(self._lock_path):
            return self._load()

    def _load(self) -> str | None:
        import hnswlib

        pointer = self.pointer
        if not pointer.exists():
            self._remove_stale_files(keep=None)
            return None
        try:
            record = json.loads(pointer.read_text("utf-8"))
            saved_identity = record["identity"]
            path = self.directory / record["file"]
            generation = int(record["generation"])
            deleted = {int(x) for x in record.get("deleted", [])}
            owed = {int(x) for x in record.get("owed", [])}
        except (OSError, ValueError, KeyError, TypeError) as exc:
            return self._discard(f"vector metadata unreadable ({type(exc).__name__})")
        if saved_identity != self.identity:
            return self._discard(
                f"embedder changed from {_describe(saved_identity)} to {_describe(self.identity)}"
            )
        try:
            if path.stat().st_size != record["size"] or _sha256_file(path) != record["sha256"]:
                return self._discard(f"vector file {path.name} is truncated or corrupt")
            index = hnswlib.Index(space="cosine", dim=self.dim)
            index.load_index(str(path), max_elements=0, allow_replace_deleted=False)
        except (OSError, RuntimeError, ValueError, KeyError) as exc:
            return self._discard(f"vector file {path.name} unreadable ({exc})")
        index.set_ef(EF_SEARCH_MIN)
        with self._lock:
            self._index = index
            self._generation = generation
            self._deleted = deleted
            self._live = {int(x) for x in index.get_ids_list()} - deleted
            self._extra = {label for label in self._live if label > BASE_MASK}
            self._owed = owed & self._live
            self.dirty = False
        self._remove_stale_files(keep=path.name)
        return None

    def _discard(self, reason: str) -> str:
        log.warning("discarding saved vectors in %s: %s", self.directory, reason)
        with self._lock:
            self._index = self._new_index(INITIAL_CAPACITY)
            self._deleted, self._live, self._extra, self._owed = set(), set(), set(), set()
            self.dirty = True
        with contextlib.suppress(OSError):
            (self.pointer).unlink(missing_ok=True)
        self._remove_stale_files(keep=None)
        return reason

    def _remove_stale_files(self, keep: str | None) -> None:
        """Generations other than the committed one are leftovers of an interrupted save."""
        for item in self.directory.glob(f"{glob.escape(self.prefix)}-*.hnsw*"):
            if item.name != keep:
                item.unlink(missing_ok=True)
        for item in self.directory.glob(f".{glob.escape(self.pointer.name)}.tmp-*"):
            item.unlink(missing_ok=True)

    def save(self) -> None:
        """Atomically persist the current index (see the module docstring)."""
        with self._lock, _process_lock(self._lock_path):
            if len(self._deleted) > max(COMPACT_MIN, COMPACT_SHARE * self._index.element_count):
                self._compact()
            committed = _committed_generation(self.pointer)
            if committed > self._generation:
                self._adopt_committed()
            generation = max(self._generation, committed) + 1
            name = f"{self.prefix}-{generation}.hnsw"
            path = self.directory / name
            tmp = self.directory / f"{name}.tmp"
            try:
                self._index.save_index(str(tmp))
                with open(tmp, "rb+") as fh:
                    os.fsync(fh.fileno())
                os.replace(tmp, path)
            except BaseException:
                tmp.unlink(missing_ok=True)  # a full disk must not leave half a file behind
                raise
            record = {
                "generation": generation,
                "file": name,
                "size": path.stat().st_size,
                "sha256": _sha256_file(path),
                "deleted": sorted(self._deleted),
                "owed": sorted(self._owed),
                "identity": self.identity,
                "saved_at": time.time(),
            }
            atomic_write_bytes(self.pointer, json.dumps(record).encode("utf-8"))
            self._generation = generation
            self.dirty = False
            self._remove_stale_files(keep=name)

    def _adopt_committed(self) -> int:
        """Adopt the vectors another process committed since our last load or save.

        The language server and `codeqa index` may both write one index: without this, the
        server's next save replaced the file with its own in-memory copy and dropped the
        vectors the CLI had just committed (issue 15). Saves are serialised by the process
        lock; inside it, every label of the newer generation that we neither hold nor
        deleted is added here first. Returns how many were adopted.
        """
        import hnswlib

        try:
            record = json.loads(self.pointer.read_text("utf-8"))
            if record["identity"] != self.identity:
                return 0
            path = self.directory / record["file"]
            if path.stat().st_size != record["size"] or _sha256_file(path) != record["sha256"]:
                return 0
            other = hnswlib.Index(space="cosine", dim=self.dim)
            other.load_index(str(path), max_elements=0, allow_replace_deleted=False)
            theirs = {int(x) for x in other.get_ids_list()} - {
                int(x) for x in record.get("deleted", [])
            }
            their_owed = {int(x) for x in record.get("owed", [])}
        except (OSError, RuntimeError, ValueError, KeyError, TypeError):
            return 0
        new = sorted(theirs - self._live - self._deleted)
        if new:
            self.add(new, np.asarray(other.get_items(new), dtype=np.float32))
            # Their debts come with their chunks; windows they embedded settle ours.
            self._owed |= their_owed.intersection(new)
            self._owed -= {chunk_label(label) for label in new if label > BASE_MASK}
            log.info("adopted %d vectors another process saved to %s", len(new), self.directory)
        return len(new)

    def _compact(self) -> None:
        """Rebuild the graph from the live vectors, dropping deleted labels for good."""
        labels = sorted(self._live)
        fresh = self._new_index(max(INITIAL_CAPACITY, 2 * len(labels)))
        for start in range(0, len(labels), 4096):
            part = labels[start : start + 4096]
            vectors = np.asarray(self._index.get_items(part), dtype=np.float32)
            fresh.add_items(vectors, np.asarray(part, dtype=np.uint64))
        self._index = fresh
        self._deleted = set()

    # -- updates -------------------------------------------------------------------------
    def add(self, labels: Iterable[int], vectors: np.ndarray) -> None:
        label_list = [int(x) for x in labels]
        if not label_list:
            return
        with self._lock:
            needed = self._index.element_count + len(label_list)
            if needed > self._index.get_max_elements():
                self._index.resize_index(max(needed, 2 * self._index.get_max_elements()))
            self._index.add_items(
                np.asarray(vectors, dtype=np.float32), np.asarray(label_list, dtype=np.uint64)
            )
            self._live.update(label_list)
            self._extra.update(label for label in label_list if label > BASE_MASK)
            self._deleted.difference_update(label_list)
            self.dirty = True

    def delete(self, labels: Iterable[int]) -> int:
        """Delete chunks (with their windows); returns how many of `labels` were live."""
        removed = 0
        with self._lock:
            for label in labels:
                if label not in self._live:
                    continue
                removed += 1
                self._owed.discard(label)
                for gone in [label, *self._windows_of(label)]:
                    self._index.mark_deleted(int(gone))
                    self._live.discard(gone)
                    self._extra.discard(gone)
                    self._deleted.add(gone)
            if removed:
                self.dirty = True
        return removed

    def owe_windows(self, labels: Iterable[int]) -> None:
        """Note chunks (by label) whose later windows are still to be embedded."""
        with self._lock:
            fresh = {int(x) for x in labels} & self._live
            if fresh - self._owed:
                self._owed |= fresh
                self.dirty = True

    def settle_windows(self, labels: Iterable[int]) -> None:
        """The later windows of these chunks are in (or not wanted any more)."""
        with self._lock:
            gone = self._owed.intersection(int(x) for x in labels)
            if gone:
                self._owed -= gone
                self.dirty = True

    def owed_windows(self) -> set[int]:
        """The chunks (labels) whose later windows are still to come."""
        with self._lock:
            return set(self._owed)

    def _windows_of(self, label: int) -> list[int]:
        if not self._extra or label > BASE_MASK:
            return []
        found = (window_label(label, w) for w in range(1, MAX_WINDOWS))
        return [w for w in found if w in self._extra]

    # -- reads ---------------------------------------------------------------------------
    def live_labels(self) -> set[int]:
        """The labels of the chunks that have vectors (windows not listed)."""
        with self._lock:
            return set(self._live - self._extra)

    def __len__(self) -> int:
        """Chunks with vectors."""
        return len(self._live) - len(self._extra)

    def query(
        self, vector: np.ndarray, k: int, allowed: set[int] | None = None
    ) -> list[tuple[int, float]]:
        """Nearest chunks by cosine similarity, best first, restricted to the chunk labels
        `allowed`; a chunk with windows scores by its best one."""
        query = np.asarray(vector, dtype=np.float32).reshape(1, -1)
        with self._lock:
            if allowed is None:
                candidates, chunks = self._live, len(self)
            else:
                own = self._live & allowed
                windows = [w for label in own for w in self._windows_of(label)]
                candidates, chunks = (own | set(windows) if windows else own), len(own)
            k = min(k, chunks)
            if k <= 0:
                return []
            if allowed is not None and len(candidates) <= BRUTE_FORCE_MAX:
                ranked = self._exact(query, sorted(candidates), len(candidates))
                return _best_per_chunk(ranked, k)
            keep: Callable[[int], bool] | None = (
                None if allowed is None else candidates.__contains__
            )
            # Windows of one chunk can crowd the raw list: ask for more until k chunks remain.
            wanted = k if not self._extra else min(len(candidates), 2 * k)
            while True:
                best = _best_per_chunk(self._knn(query, wanted, keep), k)
                if len(best) >= k or wanted >= min(len(candidates), MAX_WINDOWS * k):
                    return best
                wanted = min(len(candidates), 2 * wanted)

    def _knn(
        self, query: np.ndarray, k: int, keep: Callable[[int], bool] | None
    ) -> list[tuple[int, float]]:
        self._index.set_ef(max(EF_SEARCH_MIN, EF_PER_RESULT * k))
        while k > 0:
            try:
                labels, distances = self._index.knn_query(query, k=k, num_threads=1, filter=keep)
                break
            except RuntimeError:  # fewer reachable results than k: ask for fewer
                k //= 2
        else:
            return []
        return [
            (int(label), float(1.0 - d)) for label, d in zip(labels[0], distances[0], strict=True)
        ]

    def _exact(self, query: np.ndarray, labels: list[int], k: int) -> list[tuple[int, float]]:
        vectors = np.asarray(self._index.get_items(labels), dtype=np.float32)
        norms = np.linalg.norm(vectors, axis=1)
        norms[norms == 0] = 1.0
        scores = (vectors @ query[0]) / norms / max(float(np.linalg.norm(query)), 1e-12)
        order = np.argsort(-scores)[:k]
        return [(labels[i], float(scores[i])) for i in order]

    def get_vectors(self, labels: list[int]) -> np.ndarray:
        with self._lock:
            return np.asarray(self._index.get_items(labels), dtype=np.float32)

    def best_cosines(self, labels: list[int], vector: np.ndarray) -> list[float | None]:
        """Per chunk label, the cosine of its best window with `vector` (the query's); None
        for a chunk without a vector (not embedded yet, or deleted)."""
        query = np.asarray(vector, dtype=np.float32)
        norm = max(float(np.linalg.norm(query)), 1e-12)
        with self._lock:
            rows = [[label, *self._windows_of(label)] for label in labels]
            flat = [x for row in rows for x in row if x in self._live]
            if not flat:
                return [None] * len(labels)
            vectors = np.asarray(self._index.get_items(flat), dtype=np.float32)
        norms = np.linalg.norm(vectors, axis=1)
        norms[norms == 0] = 1.0
        scores = dict(zip(flat, (vectors @ query) / norms / norm, strict=True))
        return [
            max(float(scores[x]) for x in row if x in scores) if row[0] in scores else None
            for row in rows
        ]


def _best_per_chunk(ranked: list[tuple[int, float]], k: int) -> list[tuple[int, float]]:
    """(label, score) best first → (chunk label, its best score) best first, at most k."""
    out: dict[int, float] = {}
    for label, score in ranked:
        out.setdefault(chunk_label(label), score)
        if len(out) >= k:
            break
    return list(out.items())


def _describe(identity: dict[str, str | int]) -> str:
    return f"{identity.get('embedder')}/{identity.get('model')}/{identity.get('dim')}"
