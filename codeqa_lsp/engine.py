"""`CodeBase`: the one engine object both fronts (CLI and language server) talk to.

It owns one workspace root's index and wires the layers together:
chunking → index → retrieval → answering. It knows nothing about LSP: the server layer
translates positions, URIs and progress into protocol types.

Thread-safety: every public method may be called from any thread. Indexing runs in the
caller's worker thread while searches and hovers keep being served from others; the
`Indexer` and its store are responsible for their own locking. Reads hold a lease, so
`close()` (a settings change re-opens the index while questions are in flight) waits for
the calls already running instead of pulling the index from under them.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from codeqa_lsp.answering.model import Answer
from codeqa_lsp.chunking.model import Chunk
from codeqa_lsp.config import Settings
from codeqa_lsp.index.filters import SearchFilters
from codeqa_lsp.index.model import (
    IndexReport,
    IndexStatus,
    ProgressCallback,
    UpdateReport,
)
from codeqa_lsp.retrieval.model import SearchResponse, Use

if TYPE_CHECKING:
    from codeqa_lsp.answering.conversation import ConversationStore
    from codeqa_lsp.retrieval.search import SearchMode

logger = logging.getLogger(__name__)


class _Leases:
    """Counts read calls (and answer streams) in flight, so `close()` can wait for them."""

    def __init__(self) -> None:
        self._idle = threading.Condition()
        self._count = 0

    def acquire(self) -> None:
        with self._idle:
            self._count += 1

    def release(self) -> None:
        with self._idle:
            self._count -= 1
            if self._count == 0:
                self._idle.notify_all()

    @contextmanager
    def held(self) -> Iterator[None]:
        self.acquire()
        try:
            yield
        finally:
            self.release()

    def wait_idle(self, timeout: float) -> bool:
        with self._idle:
            return self._idle.wait_for(lambda: self._count == 0, timeout)


class _LeasedStream:
    """An answer stream that holds a lease from creation until it ends or is closed.

    A plain generator would take the lease only at its first `next()`, leaving a window in
    which the index could close between creating the stream and consuming it.
    """

    def __init__(self, inner: Iterator[str | Answer], leases: _Leases) -> None:
        leases.acquire()
        self._inner = inner
        self._leases: _Leases | None = leases

    def __iter__(self) -> _LeasedStream:
        return self

    def __next__(self) -> str | Answer:
        try:
            return next(self._inner)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        """Stop the stream (a provider request in flight is abandoned) and release the lease."""
        leases, self._leases = self._leases, None
        if leases is None:
            return
        try:
            close = getattr(self._inner, "close", None)
            if close is not None:
                close()
        finally:
            leases.release()

    def __del__(self) -> None:
        self.close()


class CodeBase:
    """One indexed workspace root.

    Also the `answering.source.CodeSource` of the `Answerer` it builds: answering reads the
    workspace (search, chunks, files) through that protocol and never imports the engine."""

    def __init__(self, root: Path, settings: Settings | None = None) -> None:
        from codeqa_lsp.answering.ask import Answerer
        from codeqa_lsp.index.indexer import Indexer
        from codeqa_lsp.retrieval.search import HybridSearcher

        self.root = root.resolve()
        self.settings = settings or Settings()
        self.indexer = Indexer(self.root, self.settings)
        if self.settings.store:  # the shared team index, with this index as its overlay
            from codeqa_lsp.index.overlay import with_shared_store

            self.indexer = with_shared_store(self.indexer, self.settings.store)  # type: ignore[assignment]
        self.searcher = HybridSearcher(self.indexer, self.settings)
        self.answerer = Answerer(self, self.settings, Path(self.indexer.index_dir))
        self._closed = threading.Event()
        self._leases = _Leases()
        # Set by a front while the embedder cannot answer a query quickly (a local model still
        # loading, a remote endpoint failing): searches, and the answers built on them, then
        # use the keyword arm alone instead of waiting for the query embedding.
        self.keyword_only = False

    # -- paths ---------------------------------------------------------------------------
    def relpath(self, path: str | Path) -> str:
        """Workspace-relative path with `/` separators (accepts absolute or relative)."""
        p = Path(path)
        if p.is_absolute():
            p = p.resolve().relative_to(self.root) if p.resolve().is_relative_to(self.root) else p
        return p.as_posix()

    def abspath(self, rel: str) -> Path:
        return self.root / rel

    def contains(self, path: str | Path) -> bool:
        p = Path(path)
        return not p.is_absolute() or p.resolve().is_relative_to(self.root)

    # -- indexing ------------------------------------------------------------------------
    def index(
        self, progress: ProgressCallback | None = None, cancel: threading.Event | None = None
    ) -> IndexReport:
        """Bring the index in line with the files on disk (warm start: only changes)."""
        return self.indexer.index(progress=progress, cancel=cancel)

    def update_file(self, path: str | Path, text: str | None = None) -> UpdateReport:
        """Re-chunk one file (from disk, or from `text` when given); embed only new chunks."""
        return self.indexer.update_file(self.relpath(path), text=text)

    def remove_file(self, path: str | Path) -> UpdateReport:
        return self.indexer.remove_file(self.relpath(path))

    def check_writable(self) -> None:
        """Raise `IndexReadOnly` (one line) when the index was opened read-only (a full disk,
        no permission): say so before indexing, the previous index stays searchable."""
        self.indexer.check_writable()

    def status(self) -> IndexStatus:
        with self._leases.held():
            return self.indexer.status()

    def warm_up(self) -> bool:
        """Embed one query now (in the caller's thread), so the first real search does not
        wait for a model to load. False when the embedder fails; keyword search still works."""
        with self._leases.held():
            return self.indexer.embed_query("warm up the query embedder") is not None

    def coverage(self) -> float:
        """Share of indexed chunks that have an embedding (cheap: no directory walk)."""
        with self._leases.held():
            return self.indexer.coverage()

    def indexed_files(self) -> dict[str, tuple[int, float]]:
        """Workspace-relative path → (size, mtime) of every indexed file, as last read.

        Lets a front detect changed files with one directory walk and no file reads (the
        MCP server's per-call freshness check) without reaching into the store."""
        with self._leases.held():
            return {
                path: (size, mtime)
                for path, (size, mtime, _sha) in self.indexer.store.files().items()
            }

    # -- reading -------------------------------------------------------------------------
    def chunks(self, path: str | None = None, language: str | None = None) -> list[Chunk]:
        with self._leases.held():
            return self.indexer.chunks(path=path, language=language)

    def definitions(self, name: str) -> list[Chunk]:
        """Indexed definitions whose symbol is `name` or ends with `.name`."""
        with self._leases.held():
            return self.indexer.definitions(name)

    def chunk_text(self, path: str | Path, text: str) -> list[Chunk]:
        """Chunk unsaved buffer text without touching the index (code lens, explain)."""
        with self._leases.held():
            return self.indexer.chunk_text(self.relpath(path), text)

    def set_notice_listener(self, listener: Callable[[str], None] | None) -> None:
        """One-line notices the index has between index runs (the shared index lost at query
        time) go to `listener`, called from the querying thread."""
        setter = getattr(self.indexer, "set_notice_listener", None)
        if setter is not None:
            setter(listener)

    def set_reindex_requester(self, requester: Callable[[], None] | None) -> None:
        """When the index must re-index the whole tree between index runs (the shared index
        lost at query time), it asks `requester` for an ordinary index run instead of running
        one of its own in the background (`OverlayIndexer.set_reindex_requester`)."""
        setter = getattr(self.indexer, "set_reindex_requester", None)
        if setter is not None:
            setter(requester)

    def get_chunks(self, ids: Sequence[str]) -> list[Chunk]:
        """Indexed chunks by id, in order; ids no longer indexed are skipped."""
        with self._leases.held():
            return self.indexer.get_chunks(ids)

    def uses(self, definition: Chunk, limit: int) -> list[Use]:
        """Indexed chunks whose code uses `definition`'s name, with the lines where they do
        (`retrieval/uses.py`)."""
        from codeqa_lsp.retrieval.uses import uses_of

        with self._leases.held():
            return uses_of([definition], self.indexer.bm25_terms, limit)

    def file_hash(self, path: str | Path) -> str | None:
        """sha256 of the file's bytes when it was last indexed; None when it is not indexed."""
        with self._leases.held():
            return self.indexer.file_hash(self.relpath(path))

    def read_file(self, path: str | Path) -> bytes | None:
        """The file's bytes now, under the scanner's rules (inside the root, a regular file,
        the size cap: a FIFO or a `/dev/zero` symlink must not hang or blow up a caller)."""
        from codeqa_lsp.chunking.scanner import read_at_answer_time

        return read_at_answer_time(self.root, self.relpath(path), self.settings)

    def skip_reason(self, path: str | Path) -> str | None:
        """Why the scanner would not index `path` (excluded folder, key file...), else None."""
        return self.indexer.skip_reason(self.relpath(path))

    def search(
        self,
        query: str,
        top_k: int | None = None,
        filters: SearchFilters | None = None,
        mode: SearchMode | None = None,
    ) -> SearchResponse:
        """Hybrid search (the same pipeline over the keyword arm alone while `keyword_only`:
        mode `keyword`). `mode` `bm25` or `dense` runs one arm alone,
        unfused, for measuring the arms against the full pipeline (`codeqa eval`)."""
        if mode is None:
            mode = "keyword" if self.keyword_only else "hybrid"
        with self._leases.held():
            return self.searcher.search(
                query, top_k=top_k or self.settings.top_k, filters=filters, mode=mode
            )

    # -- answering -----------------------------------------------------------------------
    def ask_stream(
        self,
        question: str,
        filters: SearchFilters | None = None,
        use_cache: bool = True,
        cancel: threading.Event | None = None,
    ) -> Iterator[str | Answer]:
        """Yields text deltas as they are generated, then exactly one final `Answer`.

        Setting `cancel` (from any thread) stops a provider request at once, even one
        blocked on a silent server; see `codeqa_lsp.answering.ask` for the stream contract.
        """
        return _LeasedStream(
            self.answerer.ask_stream(question, filters=filters, use_cache=use_cache, cancel=cancel),
            self._leases,
        )

    @property
    def conversations(self) -> ConversationStore:
        """This workspace's conversation threads (on disk next to the index)."""
        from codeqa_lsp.answering.conversation import ConversationStore

        return ConversationStore.for_directory(Path(self.indexer.index_dir))

    def ask_in_thread_stream(
        self,
        question: str,
        thread_id: str,
        filters: SearchFilters | None = None,
        cancel: threading.Event | None = None,
        use_cache: bool = True,
    ) -> Iterator[str | Answer]:
        """`ask_stream` as the next turn of conversation `thread_id`: retrieval and the prompt
        see the earlier turns, and the answered turn is recorded in the thread."""
        from codeqa_lsp.answering.conversation import prompt_history, record_turns, retrieval_query

        store = self.conversations
        thread = store.get(thread_id)
        inner = self.answerer.ask_stream(
            question,
            filters=filters,
            cancel=cancel,
            use_cache=use_cache,
            search_query=retrieval_query(thread, question),
            history=prompt_history(thread),
        )
        return _LeasedStream(record_turns(inner, store, thread_id, question), self._leases)

    def ask(
        self, question: str, filters: SearchFilters | None = None, use_cache: bool = True
    ) -> Answer:
        return _final(self.ask_stream(question, filters, use_cache))

    def explain_stream(
        self,
        path: str | Path,
        line: int,
        text: str | None = None,
        use_cache: bool = True,
        cancel: threading.Event | None = None,
    ) -> Iterator[str | Answer]:
        """Explain the definition enclosing 1-based `line` (in `text` if given, else on disk)."""
        return _LeasedStream(
            self.answerer.explain_stream(
                self.relpath(path), line, text=text, use_cache=use_cache, cancel=cancel
            ),
            self._leases,
        )

    def explain(self, path: str | Path, line: int, text: str | None = None) -> Answer:
        return _final(self.explain_stream(path, line, text))

    def cached_explanation(
        self, path: str | Path, line: int, text: str | None = None
    ) -> Answer | None:
        """The explanation if one is cached for the current code; never calls a model."""
        with self._leases.held():
            return self.answerer.cached_explanation(self.relpath(path), line, text=text)

    def close(self, wait: float | None = None) -> None:
        """Persist and close, after the reads and answer streams in flight have finished
        (at most `wait` seconds; default: the provider timeout plus a margin)."""
        if self._closed.is_set():
            return
        self._closed.set()
        if not self._leases.wait_idle(self.settings.request_timeout + 5 if wait is None else wait):
            logger.warning("closing the index of %s with calls still in flight", self.root)
        self.answerer.close()
        self.searcher.close()  # its query thread pool: a settings re-open must not leak one
        self.indexer.close()


def _final(stream: Iterator[str | Answer]) -> Answer:
    answer: Answer | None = None
    for item in stream:
        if isinstance(item, Answer):
            answer = item
    if answer is None:  # pragma: no cover - a stream always ends with an Answer
        raise RuntimeError("answer stream ended without an Answer")
    return answer
