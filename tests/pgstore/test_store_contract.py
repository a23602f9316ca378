"""The same behavioural tests against both stores: the local index (SQLite FTS5 +
hnswlib, written by `Indexer.index`) and the shared one (Postgres + pgvector, written by
`Publisher.publish`), read through the `ChunkReader` interface."""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest

from codeqa_lsp.config import Settings
from codeqa_lsp.index.backend import ChunkReader
from codeqa_lsp.index.embedders.hashing import HashEmbedder
from codeqa_lsp.index.filters import SearchFilters
from codeqa_lsp.index.indexer import Indexer
from codeqa_lsp.index.pg.publish import Publisher, spaces_for, workspace_identity
from codeqa_lsp.index.pg.snapshot import open_snapshot
from tests.pgstore.conftest import make_repo
from tests.pgstore.trees import TREE


@pytest.fixture(params=["local", "postgres"])
def reader(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ChunkReader]:
    root = tmp_path / "repo"
    commit = make_repo(root, TREE)
    settings = Settings(embedder="hash", index_dir=str(tmp_path / "index"))
    if request.param == "local":
        indexer = Indexer(root, settings)
        indexer.index()
        yield indexer
        indexer.close()
        return
    url = request.getfixturevalue("pg_url")
    publisher = Publisher(url, root, settings)
    publisher.publish("main")
    space, chunking = spaces_for(publisher.embedder, settings)
    snapshot = open_snapshot(
        url, repo=workspace_identity(root), space=space, chunking=chunking, commits=[commit]
    )
    assert snapshot is not None
    yield snapshot
    snapshot.close()


def test_both_stores_implement_the_interface(reader: ChunkReader) -> None:
    assert isinstance(reader, ChunkReader)


def test_secrets_are_never_stored(reader: ChunkReader) -> None:
    paths = {c.path for c in reader.chunks()}
    assert paths == {"app/auth.py", "web/router.js", "net/retry.go", "docs/guide.md"}
    assert not any("hunter2" in c.text or "PRIVATE KEY" in c.text for c in reader.chunks())


def test_bm25_matches_code_aware_tokens(reader: ChunkReader) -> None:
    # "route" and "match" only occur inside the camelCase identifier matchRoute.
    top = reader.bm25("match route", 5)
    assert top and top[0][0].symbol == "matchRoute"
    assert reader.bm25("RetryWithBackoff", 3)[0][0].symbol == "RetryWithBackoff"
    assert reader.bm25("zzzunrelatedzzz", 5) == []


def test_bm25_symbol_outranks_body_mentions(reader: ChunkReader) -> None:
    ranked = [c.symbol for c, _ in reader.bm25("refresh session", 5)]
    assert ranked[0] == "SessionStore.refresh_session"


def test_dense_nearest_is_the_same_text(reader: ChunkReader) -> None:
    target = next(c for c in reader.chunks(path="net/retry.go") if c.symbol == "RetryWithBackoff")
    vector = HashEmbedder().embed([target.embed_text()])[0]
    hits = reader.dense_by_vector(vector, 3)
    assert hits[0][0] == target
    assert hits[0][1] == pytest.approx(1.0, abs=1e-4)
    assert all(a[1] >= b[1] for a, b in itertools.pairwise(hits))


def test_filters_by_language_kind_and_path(reader: ChunkReader) -> None:
    vector = HashEmbedder().embed(["session token route retry"])[0]
    only_go = SearchFilters(languages=("go",))
    assert {c.language for c, _ in reader.dense_by_vector(vector, 10, only_go)} == {"go"}
    methods = SearchFilters(kinds=("method",))
    assert {c.symbol for c, _ in reader.bm25("session", 10, methods)} == {
        "SessionStore.refresh_session"
    }
    under_web = SearchFilters(path_globs=("web/",))
    assert {c.path for c, _ in reader.dense_by_vector(vector, 10, under_web)} == {"web/router.js"}


def test_definitions_and_get_chunks(reader: ChunkReader) -> None:
    [method] = reader.definitions("SessionStore.refresh_session")
    assert method.kind == "method" and method.path == "app/auth.py"
    assert [c.symbol for c in reader.definitions("refresh_session")] == [
        "SessionStore.refresh_session"
    ]
    assert reader.definitions("nothing_like_this") == []
    every = reader.chunks()
    ids = [*(c.id for c in reversed(every)), "0" * 24]
    assert reader.get_chunks(ids) == every[::-1]


def test_file_hash_is_the_sha256_of_the_bytes(reader: ChunkReader) -> None:
    expected = hashlib.sha256(TREE["app/auth.py"].encode()).hexdigest()
    assert reader.file_hash("app/auth.py") == expected
    assert reader.file_hash(".env") is None
    assert reader.file_hash("missing.py") is None


def test_chunks_are_ordered_and_filtered(reader: ChunkReader) -> None:
    auth = reader.chunks(path="app/auth.py")
    assert [c.start_line for c in auth] == sorted(c.start_line for c in auth)
    assert {c.language for c in reader.chunks(language="javascript")} == {"javascript"}


def test_both_stores_hold_identical_chunks(tmp_path: Path, pg_url: str) -> None:
    """Every field of every chunk survives the round trip through Postgres."""
    root = tmp_path / "repo"
    commit = make_repo(root, TREE)
    settings = Settings(embedder="hash", index_dir=str(tmp_path / "index"))
    indexer = Indexer(root, settings)
    indexer.index()
    publisher = Publisher(pg_url, root, settings)
    publisher.publish("main")
    space, chunking = spaces_for(publisher.embedder, settings)
    snapshot = open_snapshot(
        pg_url, repo=workspace_identity(root), space=space, chunking=chunking, commits=[commit]
    )
    assert snapshot is not None
    try:
        assert snapshot.chunks() == indexer.chunks()
        assert snapshot.chunk_count() == len(indexer.chunks())
    finally:
        snapshot.close()
        indexer.close()
