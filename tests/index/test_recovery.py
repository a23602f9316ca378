"""Broken index files on open: recover or rebuild, log why, never raise to the caller."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from codeqa_lsp.config import Settings
from codeqa_lsp.index.indexer import DB_NAME, Indexer
from tests.index.conftest import snapshot


def _built(root: Path, settings: Settings) -> tuple[set[str], set[int]]:
    indexer = Indexer(root, settings)
    indexer.index()
    state = snapshot(indexer)
    indexer.close()
    return state


def _reopen(root: Path, settings: Settings) -> tuple[Indexer, str | None]:
    indexer = Indexer(root, settings)
    report = indexer.index()
    return indexer, report.rebuilt_reason


@pytest.mark.parametrize("damage", ["garbage", "truncated", "empty", "zeroed-header"])
def test_corrupt_sqlite_is_rebuilt(
    make_workspace: Callable[..., Path],
    tmp_path: Path,
    damage: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    root = make_workspace()
    settings = Settings(embedder="hash", index_dir=str(tmp_path / "idx"))
    before = _built(root, settings)
    db = tmp_path / "idx" / DB_NAME
    data = db.read_bytes()
    if damage == "garbage":
        db.write_bytes(b"this is not a database" * 500)
    elif damage == "truncated":
        db.write_bytes(data[: len(data) // 3])
    elif damage == "empty":
        db.write_bytes(b"")
    else:
        db.write_bytes(b"\x00" * 100 + data[100:])
    for suffix in ("-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    caplog.set_level("WARNING")
    indexer, reason = _reopen(root, settings)
    try:
        assert snapshot(indexer) == before
        if damage != "empty":  # an empty file is a valid empty database
            assert reason and "rebuilt" in reason
            assert "index database unusable" in caplog.text
        # vectors survived (labels derive from chunk content) or came from the cache
        assert indexer.embedder.calls == 0
    finally:
        indexer.close()


@pytest.mark.parametrize(
    "damage", ["truncated-vectors", "half-written-temp", "bad-pointer", "missing-file"]
)
def test_broken_vector_files_recover(
    make_workspace: Callable[..., Path], tmp_path: Path, damage: str
) -> None:
    root = make_workspace()
    settings = Settings(embedder="hash", index_dir=str(tmp_path / "idx"))
    before = _built(root, settings)
    directory = tmp_path / "idx"
    [pointer] = directory.glob("vectors.hash-*.json")
    record = json.loads(pointer.read_text())
    vectors = directory / record["file"]
    if damage == "truncated-vectors":
        vectors.write_bytes(vectors.read_bytes()[:1000])
    elif damage == "half-written-temp":
        (directory / (pointer.stem + "-99.hnsw.tmp")).write_bytes(vectors.read_bytes()[:500])
    elif damage == "bad-pointer":
        pointer.write_text("{")
    else:
        vectors.unlink()
    indexer, reason = _reopen(root, settings)
    try:
        assert snapshot(indexer) == before
        assert (reason is None) == (damage == "half-written-temp")
        assert indexer.embedder.calls == 0  # re-filled from the embedding cache
        assert not list(directory.glob("*.tmp"))
    finally:
        indexer.close()


def test_orphan_vectors_dropped_and_missing_ones_filled(
    make_workspace: Callable[..., Path], tmp_path: Path
) -> None:
    """The state a kill -9 between the SQLite commit and the vector save leaves behind:
    the vector file is older than SQLite (vectors of deleted chunks, none for new ones)."""
    root = make_workspace()
    settings = Settings(embedder="hash", index_dir=str(tmp_path / "idx"))
    _built(root, settings)
    directory = tmp_path / "idx"
    old_files = {p.name: p.read_bytes() for p in directory.glob("vectors*")}
    (root / "pkg" / "mod0.py").unlink()
    (root / "pkg" / "mod9.py").write_text("def added_later():\n    return 1\n")
    indexer = Indexer(root, settings)
    indexer.index()
    indexer.close()
    for p in directory.glob("vectors*"):
        p.unlink()
    for name, data in old_files.items():
        (directory / name).write_bytes(data)
    indexer = Indexer(root, settings)
    assert indexer.coverage() < 1.0
    indexer.index()
    ids, _ = snapshot(indexer)
    assert not indexer.chunks(path="pkg/mod0.py") and indexer.chunks(path="pkg/mod9.py")
    indexer.close()
    clean = Indexer(root, Settings(embedder="hash", index_dir=str(tmp_path / "clean")))
    clean.index()
    assert snapshot(clean)[0] == ids
    clean.close()
