"""`Workspace`: the one engine object both fronts (CLI and language server) talk to.

It owns one workspace root's index and wires the layers together:
chunking → index → retrieval → answering. It knows nothing about LSP: the server layer
translates positions, URIs and progress into protocol types.

Thread-safety: every public method may be called from any thread. Indexing runs in the
caller's worker thread while searches and hovers keep being served from others; the
`Indexer` and its store are responsible for their own locking.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path

from codeqa_lsp.answering.model import Answer
from codeqa_lsp.chunking.model import Chunk
from codeqa_lsp.config import Settings
from codeqa_lsp.index.model import IndexProgress, IndexReport, IndexStatus, UpdateReport
from codeqa_lsp.retrieval.model import SearchFilters, SearchResponse

ProgressCallback = Callable[[IndexProgress], None]


class Workspace:
    """One indexed workspace root."""

    def __init__(self, root: Path, settings: Settings | None = None) -> None:
        from codeqa_lsp.answering.ask import Answerer
        from codeqa_lsp.index.indexer import Indexer
        from codeqa_lsp.retrieval.search import HybridSearcher

        self.root = root.resolve()
        self.settings = settings or Settings()
        self.indexer = Indexer(self.root, self.settings)
        self.searcher = HybridSearcher(self.indexer, self.settings)
        self.answerer = Answerer(self, self.settings)
        self._closed = threading.Event()

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

    def status(self) -> IndexStatus:
        return self.indexer.status()

    # -- reading -------------------------------------------------------------------------
    def chunks(self, path: str | None = None, language: str | None = None) -> list[Chunk]:
        return self.indexer.chunks(path=path, language=language)

    def definitions(self, name: str) -> list[Chunk]:
        """Indexed definitions whose symbol is `name` or ends with `.name`."""
        return self.indexer.definitions(name)

    def chunk_text(self, path: str | Path, text: str) -> list[Chunk]:
        """Chunk unsaved buffer text without touching the index (code lens, explain)."""
        return self.indexer.chunk_text(self.relpath(path), text)

    def search(
        self, query: str, top_k: int | None = None, filters: SearchFilters | None = None
    ) -> SearchResponse:
        return self.searcher.search(query, top_k=top_k or self.settings.top_k, filters=filters)

    # -- answering -----------------------------------------------------------------------
    def ask_stream(
        self, question: str, filters: SearchFilters | None = None, use_cache: bool = True,
        cancel: threading.Event | None = None,
    ) -> Iterator[str | Answer]:
        """Yields text deltas as they are generated, then exactly one final `Answer`.

        Setting `cancel` (from any thread) stops a provider request at once, even one
        blocked on a silent server; see `codeqa_lsp.answering.ask` for the stream contract.
        """
        return self.answerer.ask_stream(question, filters=filters, use_cache=use_cache, cancel=cancel)

    def ask(self, question: str, filters: SearchFilters | None = None, use_cache: bool = True) -> Answer:
        return _final(self.ask_stream(question, filters, use_cache))

    def explain_stream(
        self, path: str | Path, line: int, text: str | None = None, use_cache: bool = True,
        cancel: threading.Event | None = None,
    ) -> Iterator[str | Answer]:
        """Explain the definition enclosing 1-based `line` (in `text` if given, else on disk)."""
        return self.answerer.explain_stream(
            self.relpath(path), line, text=text, use_cache=use_cache, cancel=cancel)

    def explain(self, path: str | Path, line: int, text: str | None = None) -> Answer:
        return _final(self.explain_stream(path, line, text))

    def cached_explanation(self, path: str | Path, line: int, text: str | None = None) -> Answer | None:
        """The explanation if one is cached for the current code; never calls a model."""
        return self.answerer.cached_explanation(self.relpath(path), line, text=text)

    def close(self) -> None:
        if not self._closed.is_set():
            self._closed.set()
            self.answerer.close()
            self.indexer.close()


def _final(stream: Iterator[str | Answer]) -> Answer:
    answer: Answer | None = None
    for item in stream:
        if isinstance(item, Answer):
            answer = item
    if answer is None:  # pragma: no cover - a stream always ends with an Answer
        raise RuntimeError("answer stream ended without an Answer")
    return answer
