"""hnswlib vector storage with crash-atomic saves.

Layout in the index directory, per embedder (`<space>` = embedder-model-dim, so processes
or settings using different embedders never fight over one file, and switching back to an
embedder finds its vectors still there):
    vectors.<space>-<generation>.hnsw   an hnswlib index file (cosine space)
    vectors.<space>.json                the commit record: which generation is current, its
                                        size and sha256, the deleted labels, the identity

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
COMPACT_SHARE = 0.25  # rebuild the graph when this share of its labels is deleted
COMPACT_MIN = 256
BRUTE_FORCE_MAX = 4096  # filtered queries over fewer candidates are scored exactly


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
        self._live: set[int] = set()
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
            self.dirty = False
        self._remove_stale_files(keep=path.name)
        return None

    def _discard(self, reason: str) -> str:
        log.warning("discarding saved vectors in %s: %s", self.directory, reason)
        with self._lock:
            self._index = self._new_index(INITIAL_CAPACITY)
            self._deleted, self._live = set(), set()
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
        except (OSError, RuntimeError, ValueError, KeyError, TypeError):
            return 0
        new = sorted(theirs - self._live - self._deleted)
        if new:
            self.add(new, np.asarray(other.get_items(new), dtype=np.float32))
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
            self._deleted.difference_update(label_list)
            self.dirty = True

    def delete(self, labels: Iterable[int]) -> int:
        removed = 0
        with self._lock:
            for label in labels:
                if label in self._live:
                    self._index.mark_deleted(int(label))
                    self._live.discard(label)
                    self._deleted.add(label)
                    removed += 1
            if removed:
                self.dirty = True
        return removed

    # -- reads ---------------------------------------------------------------------------
    def live_labels(self) -> set[int]:
        with self._lock:
            return set(self._live)

    def __len__(self) -> int:
        return len(self._live)

    def query(
        self, vector: np.ndarray, k: int, allowed: set[int] | None = None
    ) -> list[tuple[int, float]]:
        """Nearest labels by cosine similarity (best first), restricted to `allowed`."""
        query = np.asarray(vector, dtype=np.float32).reshape(1, -1)
        with self._lock:
            candidates = self._live if allowed is None else self._live & allowed
            k = min(k, len(candidates))
            if k <= 0:
                return []
            if allowed is not None and len(candidates) <= BRUTE_FORCE_MAX:
                return self._exact(query, sorted(candidates), k)
            keep: Callable[[int], bool] | None = (
                None if allowed is None else candidates.__contains__
            )
            self._index.set_ef(max(EF_SEARCH_MIN, 2 * k))
            while k > 0:
                try:
                    labels, distances = self._index.knn_query(
                        query, k=k, num_threads=1, filter=keep
                    )
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

    def vectors_or_none(self, labels: list[int]) -> list[np.ndarray | None]:
        """Stored vectors by label, None for a label without one (not embedded yet, or
        deleted): hnswlib raises for the whole batch then, so fall back to one by one."""
        try:
            return list(self.get_vectors(labels))
        except RuntimeError:
            rows: list[np.ndarray | None] = []
            for label in labels:
                try:
                    rows.append(self.get_vectors([label])[0])
                except RuntimeError:
                    rows.append(None)
            return rows


def _describe(identity: dict[str, str | int]) -> str:
    return f"{identity.get('embedder')}/{identity.get('model')}/{identity.get('dim')}"
