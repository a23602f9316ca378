"""A real hash-embedder index over a few files, searched by a `HybridSearcher`: the fixture
the ranking tests share."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from codeqa_lsp.config import Settings
from codeqa_lsp.index.indexer import Indexer
from codeqa_lsp.retrieval.search import HybridSearcher


@contextmanager
def hash_searcher(tmp_path: Path, files: Mapping[str, str]) -> Iterator[HybridSearcher]:
    """`files` (path → text, leading blank lines dropped) written under `tmp_path/repo`,
    indexed with the hash embedder, searched; closed on exit."""
    root = tmp_path / "repo"
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text.lstrip(), encoding="utf-8")
    settings = Settings(embedder="hash", index_dir=str(tmp_path / "index"))
    indexer = Indexer(root, settings)
    indexer.index()
    searcher = HybridSearcher(indexer, settings)
    try:
        yield searcher
    finally:
        searcher.close()
        indexer.close()
