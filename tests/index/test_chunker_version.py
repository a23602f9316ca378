"""An index built by an older chunker must not keep its chunks forever: unchanged files are
never re-read on a warm start, so a chunker change has to be noticed explicitly."""

from __future__ import annotations

from pathlib import Path

import pytest

from codeqa_lsp.chunking import chunker
from codeqa_lsp.config import Settings
from codeqa_lsp.index.indexer import Indexer


def _index(root: Path, settings: Settings) -> tuple[set[str], int, str | None]:
    indexer = Indexer(root, settings)
    try:
        report = indexer.index()
        return {c.symbol for c in indexer.chunks()}, report.embedded, report.rebuilt_reason
    finally:
        indexer.close()


def test_a_new_chunker_version_re_chunks_unchanged_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.py").write_text("def alpha():\n    return 1\n\n\ndef beta():\n    return 2\n")
    settings = Settings(embedder="hash", index_dir=str(tmp_path / "index"))
    symbols, embedded, _ = _index(root, settings)
    assert symbols == {"alpha", "beta"} and embedded == 2

    # Same chunker: a warm start reads nothing and embeds nothing.
    assert _index(root, settings)[1:] == (0, None)

    # A chunker that names things differently, under a new version.
    original = chunker.chunk_source

    def renamed(path: str, text: str, **kwargs: object) -> list[chunker.Chunk]:
        import dataclasses

        return [
            dataclasses.replace(c, symbol=f"v3.{c.symbol}") for c in original(path, text, **kwargs)
        ]  # type: ignore[arg-type]

    monkeypatch.setattr(chunker, "chunk_source", renamed)
    monkeypatch.setattr(chunker, "CHUNKER_VERSION", "test-next")
    symbols, embedded, reason = _index(root, settings)
    assert symbols == {"v3.alpha", "v3.beta"}
    assert embedded == 2  # new ids (the symbol is part of the id): embedded, old ones gone
    assert reason is not None and "chunking changed" in reason
    # ...and only once.
    assert _index(root, settings)[1:] == (0, None)


def test_a_new_chunker_version_re_embeds_kept_chunks_whose_embedded_text_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A chunk keeps its id when its code is unchanged, but what the embedder reads of it
    (`Chunk.embed_text`) may change with the chunker: its vector must be recomputed."""
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.py").write_text("def alpha():\n    return 1\n\n\ndef beta():\n    return 2\n")
    settings = Settings(embedder="hash", index_dir=str(tmp_path / "index"))
    assert _index(root, settings)[1] == 2

    original = chunker.Chunk.embed_text
    monkeypatch.setattr(chunker.Chunk, "embed_text", lambda self: "new view\n" + original(self))
    monkeypatch.setattr(chunker, "CHUNKER_VERSION", "test-next")
    symbols, embedded, reason = _index(root, settings)
    assert symbols == {"alpha", "beta"}  # same chunks, same ids...
    assert embedded == 2  # ...embedded again from their new text
    assert reason is not None and "chunking changed" in reason
    assert _index(root, settings)[1:] == (0, None)


def test_a_new_chunker_version_rewrites_what_it_derives_of_kept_chunks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Same code, same id, but a new chunker calls it a class with another signature (as
    `class SPDLOG_API logger` became a class in version 8): the row, its keyword fields and
    its vector follow, instead of keeping the old chunker's view for as long as the code."""
    import dataclasses

    from codeqa_lsp.retrieval.search import HybridSearcher

    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.py").write_text("def alpha():\n    return 1\n\n\ndef beta():\n    return 2\n")
    settings = Settings(embedder="hash", index_dir=str(tmp_path / "index"))
    assert _index(root, settings)[1] == 2

    original = chunker.chunk_source

    def reread(path: str, text: str, **kwargs: object) -> list[chunker.Chunk]:
        return [
            dataclasses.replace(c, kind="class", signature=f"{c.signature} # zeppelin")
            if c.symbol == "alpha"
            else c
            for c in original(path, text, **kwargs)  # type: ignore[arg-type]
        ]

    monkeypatch.setattr(chunker, "chunk_source", reread)
    monkeypatch.setattr(chunker, "CHUNKER_VERSION", "test-next")
    indexer = Indexer(root, settings)
    try:
        report = indexer.index()
        kinds = {c.symbol: (c.kind, c.signature) for c in indexer.chunks()}
        assert kinds == {
            "alpha": ("class", "def alpha(): # zeppelin"),
            "beta": ("function", "def beta():"),
        }
        assert report.embedded == 1  # alpha's new embedded text; beta's is in the cache
        found = HybridSearcher(indexer, settings).search("zeppelin", mode="bm25").hits
        assert [h.chunk.symbol for h in found] == ["alpha"]  # the keyword rows follow too
    finally:
        indexer.close()
