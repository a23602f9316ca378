"""Turning stored chunks into vectors: every chunk's first window, then the later ones.

A chunk longer than the local embedder's 256-token window gets vectors for up to three later
windows (`embedders/windows.py`). Those windows cost as much to embed as the first windows of
every other chunk together (click/src: 235 windows of 136 long chunks, +54% tokens, each a
full-length sequence), but a search needs the first windows far more than the later ones:
a chunk without any vector is invisible to the dense arm, a chunk without its later windows
is only scored on its start. So a full index runs two passes:

1. `embed_missing`: the first window of every chunk without a vector. The chunks that have
   later windows are noted as owing them (`VectorStore.owe_windows`, saved with the
   vectors). Coverage reaches 100% here, as early as it did before windows existed.
2. `embed_owed_windows`: the later windows of every owing chunk, including those a previous
   run left owed when it was cancelled, killed or closed between the passes.

Single-file updates (`embed_chunks` on a save) embed all windows at once: one file's chunks
are too few to be worth a second pass.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import partial

import numpy as np

from codeqa_lsp.chunking.model import Chunk
from codeqa_lsp.index.embedders import CountingEmbedder, EmbedderError
from codeqa_lsp.index.embedders.base import window_texts
from codeqa_lsp.index.embedders.cache import EmbeddingCache
from codeqa_lsp.index.model import IndexProgress, IndexReport, ProgressCallback
from codeqa_lsp.index.store import Store, label_for
from codeqa_lsp.index.vector_saves import VectorSaves
from codeqa_lsp.index.vectors import VectorStore, window_label

log = logging.getLogger(__name__)

EMBED_BATCH = 64  # chunks per embedding call while indexing
# Chunks read at once and sorted by text length before they are cut into EMBED_BATCH calls,
# so each call (and each padded model batch inside it) holds texts of similar length. On
# click/src (581 chunks, MiniLM at 256 tokens, batches of 16) the model pads 98,368 tokens
# when calls take chunks in file order and 85,024 (real: 83,344) with 1,024-chunk windows,
# 13% less work; cancellation and progress keep the EMBED_BATCH granularity.
EMBED_WINDOW = 1024
SAVE_EVERY_SECONDS = 30.0  # vector checkpoints during a long full index


class ChunkVectors:
    """Embeds stored chunks into one index's vector store (cache first, then the model).

    `should_stop(cancel)` is the indexer's: closing the index or cancelling the run stops
    both passes between batches, keeping what was done."""

    def __init__(
        self,
        store: Store,
        vectors: VectorStore,
        saves: VectorSaves,
        embedder: CountingEmbedder,
        cache: EmbeddingCache,
        should_stop: Callable[[threading.Event | None], bool],
    ) -> None:
        self.store = store
        self.vectors = vectors
        self.saves = saves
        self.embedder = embedder
        self.cache = cache
        self.should_stop = should_stop

    def embed_missing(
        self, emit: ProgressCallback, cancel: threading.Event | None, report: IndexReport
    ) -> int:
        """First windows of every stored chunk without a vector (new, or lost in a crash);
        returns how many chunks had a text sent to the model."""
        missing = self.store.ids_missing_labels(self.vectors.live_labels())
        parts = (
            self.store.get_chunks(missing[at : at + EMBED_WINDOW])
            for at in range(0, len(missing), EMBED_WINDOW)
        )
        first_windows = partial(self.embed_chunks, later_windows=False)
        return self._in_batches("embed", len(missing), parts, first_windows, emit, cancel, report)

    def embed_owed_windows(
        self, emit: ProgressCallback, cancel: threading.Event | None, report: IndexReport
    ) -> int:
        """Later windows of every chunk that owes them; returns how many chunks had a window
        sent to the model."""
        owed = sorted(self.vectors.owed_windows())

        def parts() -> Iterator[list[Chunk]]:
            for at in range(0, len(owed), EMBED_WINDOW):
                labels = owed[at : at + EMBED_WINDOW]
                by_label = self.store.chunks_by_label(labels)
                # Owed chunks gone from the store meanwhile owe nothing any more.
                self.vectors.settle_windows(label for label in labels if label not in by_label)
                yield list(by_label.values())

        later = self._embed_later_windows
        return self._in_batches("windows", len(owed), parts(), later, emit, cancel, report)

    def _in_batches(
        self,
        phase: str,
        total: int,
        parts: Iterable[list[Chunk]],
        embed: Callable[[Sequence[Chunk]], int],
        emit: ProgressCallback,
        cancel: threading.Event | None,
        report: IndexReport,
    ) -> int:
        """`embed` over the chunks of `parts` (EMBED_WINDOW each), sorted by length and cut
        into EMBED_BATCH calls, with progress, checkpoints and cancellation between calls."""
        if not total:
            return 0
        emit(IndexProgress(phase, 0, total))  # at once, not after the first (slow) batch
        embedded = done = 0
        checkpoint = time.monotonic()
        for chunks in parts:
            part_end = min(done + EMBED_WINDOW, total)
            chunks.sort(key=lambda c: len(c.embed_text()))
            for start in range(0, len(chunks), EMBED_BATCH):
                if self.should_stop(cancel):
                    report.cancelled = True
                    return embedded
                batch = chunks[start : start + EMBED_BATCH]
                try:
                    embedded += embed(batch)
                except EmbedderError as exc:
                    log.error("embedding failed (%s): %s", phase, exc)
                    report.embed_error = str(exc)
                    return embedded
                checkpoint = self._checkpoint(checkpoint)
                done += len(batch)
                emit(IndexProgress(phase, done, total))
            if done < part_end:  # some were deleted meanwhile
                done = part_end
                emit(IndexProgress(phase, done, total))
        return embedded

    def embed_chunks(self, chunks: Sequence[Chunk], later_windows: bool = True) -> int:
        """Vectors for `chunks`: each one's first window, and its later windows too unless
        `later_windows` is False (then they are owed). Returns how many chunks had a text
        sent to the model."""
        if not chunks:
            return 0
        groups = window_texts(self.embedder, [c.embed_text() for c in chunks])
        owing = [n for n, group in enumerate(groups) if len(group) > 1]
        if not later_windows:
            groups = [group[:1] for group in groups]
        labels = [label_for(c.id) for c in chunks]
        added, sent = self._add(groups, labels, first_window=0)
        if not later_windows:
            self.vectors.owe_windows(labels[n] for n in owing if labels[n] in added)
        return sent

    def _embed_later_windows(self, chunks: Sequence[Chunk]) -> int:
        groups = window_texts(self.embedder, [c.embed_text() for c in chunks])
        labels = [label_for(c.id) for c in chunks]
        _, sent = self._add([group[1:] for group in groups], labels, first_window=1)
        self.vectors.settle_windows(labels)
        return sent

    def _add(
        self, groups: list[list[str]], labels: list[int], first_window: int
    ) -> tuple[set[int], int]:
        """Embed each chunk's texts (`groups[n]` are windows `first_window`, ... of the chunk
        labelled `labels[n]`) and add their vectors; returns the chunk labels added and how
        many chunks had a text sent to the model."""
        texts = [text for group in groups for text in group]
        if not texts:
            return set(), 0
        vectors = self.cache.get_many(texts, self.embedder.dim)
        misses = [i for i, v in enumerate(vectors) if v is None]
        for start in range(0, len(misses), EMBED_BATCH):
            group = misses[start : start + EMBED_BATCH]
            fresh = self.embedder.embed([texts[i] for i in group])
            self.cache.put_many([texts[i] for i in group], fresh)
            for i, vector in zip(group, fresh, strict=True):
                vectors[i] = vector
        owners = [n for n, group in enumerate(groups) for _ in group]
        windows = [first_window + w for group in groups for w in range(len(group))]
        with self.store.write_lock:
            # A concurrent update may have replaced some of these chunks meanwhile.
            present = self.store.existing_labels(labels)
            keep = [i for i, owner in enumerate(owners) if labels[owner] in present]
            if keep:
                self.vectors.add(
                    [window_label(labels[owners[i]], windows[i]) for i in keep],
                    np.stack([vectors[i] for i in keep]),  # type: ignore[misc]
                )
        return {labels[owners[i]] for i in keep}, len({owners[i] for i in misses})

    def _checkpoint(self, last: float) -> float:
        """Save the vectors every SAVE_EVERY_SECONDS: a crash or kill loses at most that."""
        if time.monotonic() - last <= SAVE_EVERY_SECONDS:
            return last
        self.saves.save()
        return time.monotonic()
