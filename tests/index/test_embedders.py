"""Embedders: hash determinism, selection, the size-bounded cache, and OpenAI over loopback."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from codeqa_lsp.config import Settings
from codeqa_lsp.index.embedders import EmbedderError, HashEmbedder, create_embedder
from codeqa_lsp.index.embedders.cache import EmbeddingCache
from codeqa_lsp.index.embedders.local import is_available
from codeqa_lsp.index.embedders.remote import MAX_INPUTS_PER_REQUEST, OpenAIEmbedder, batches
from tests.fakes.llm_server import FakeLLMServer, Status


def test_hash_embedder_is_deterministic_normalized_and_lexical() -> None:
    embedder = HashEmbedder()
    vectors = embedder.embed(
        ["def parse_args(argv)", "def parse_args(argv)", "class HttpServer", ""]
    )
    assert vectors.shape == (4, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert np.array_equal(vectors[0], vectors[1])
    query = embedder.embed(["parseArgs"])[0]
    assert query @ vectors[0] > query @ vectors[2]


def test_auto_prefers_local_and_never_picks_openai(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-in-the-environment")
    chosen = create_embedder(Settings(embedder="auto"))
    assert chosen.name == ("local" if is_available() else "hash")


def test_cache_roundtrip_and_size_bound(tmp_path: Path) -> None:
    limit = 256 * 1024
    cache = EmbeddingCache(tmp_path / "c", size_limit=limit, namespace="hash|m|384")
    texts = [f"text number {i} " * 20 for i in range(2000)]
    vectors = np.random.default_rng(0).random((len(texts), 384)).astype(np.float32)
    for start in range(0, len(texts), 100):
        cache.put_many(texts[start : start + 100], vectors[start : start + 100])
    got = cache.get_many(texts[-5:], 384)
    assert all(g is not None for g in got)
    assert np.array_equal(got[-1], vectors[-1])  # type: ignore[arg-type]
    assert cache.get_many(["never stored"], 384) == [None]
    # 2000 vectors are ~3 MB; the cache keeps itself near its bound (diskcache culls per write).
    assert cache.volume() <= limit * 2
    assert sum(v is None for v in cache.get_many(texts[:100], 384)) > 0
    cache.close()


def _openai_settings(server: FakeLLMServer, **changes: object) -> Settings:
    return Settings(
        embedder="openai",
        provider="openai",
        api_key="sk-test-secret-key",
        embedding_base_url=server.openai_url,
        max_retries=3,
    ).replace(**changes)


def test_openai_embeds_through_the_real_sdk(fake_llm: FakeLLMServer) -> None:
    embedder = OpenAIEmbedder(_openai_settings(fake_llm, embedding_dimensions=64))
    vectors = embedder.embed(["def a(): pass", "class B: pass"])
    assert vectors.shape == (2, 64) and embedder.dim == 64
    body = fake_llm.requests_to("embeddings")[0].body
    assert body["model"] == "text-embedding-3-small" and body["dimensions"] == 64


def test_openai_retries_429_then_succeeds(fake_llm: FakeLLMServer) -> None:
    fake_llm.script("embeddings", Status(429, headers={"retry-after": "0.05"}), Status(503))
    embedder = OpenAIEmbedder(_openai_settings(fake_llm))
    assert embedder.embed(["hello world"]).shape == (1, 1536)
    assert len(fake_llm.requests_to("embeddings")) == 3


def test_openai_gives_up_after_bounded_retries(fake_llm: FakeLLMServer) -> None:
    fake_llm.script("embeddings", *[Status(500)] * 5)
    embedder = OpenAIEmbedder(_openai_settings(fake_llm, max_retries=1))
    with pytest.raises(EmbedderError, match="after 2 attempts"):
        embedder.embed(["x"])
    assert len(fake_llm.requests_to("embeddings")) == 2


@pytest.mark.parametrize("status", [401, 403])
def test_openai_bad_key_is_a_clear_error_without_the_key(
    fake_llm: FakeLLMServer, status: int
) -> None:
    fake_llm.script("embeddings", Status(status))
    embedder = OpenAIEmbedder(_openai_settings(fake_llm))
    with pytest.raises(EmbedderError) as info:
        embedder.embed(["x"])
    assert f"HTTP {status}" in str(info.value) and "sk-test" not in str(info.value)
    assert len(fake_llm.requests_to("embeddings")) == 1


def test_openai_refuses_without_key_or_consent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(EmbedderError, match="API key"):
        OpenAIEmbedder(Settings(embedder="openai"))
    with pytest.raises(EmbedderError, match="allowRemote"):
        OpenAIEmbedder(
            Settings(embedder="openai", allow_remote=False, api_key="k", provider="openai")
        )
    # An Anthropic key configured for answers is never sent to OpenAI.
    with pytest.raises(EmbedderError, match="API key"):
        OpenAIEmbedder(Settings(embedder="openai", provider="anthropic", api_key="sk-ant-x"))


def test_requests_are_bounded() -> None:
    groups = batches(["word " * 10] * (MAX_INPUTS_PER_REQUEST + 5))
    assert [len(g) for g in groups] == [MAX_INPUTS_PER_REQUEST, 5]
    big = batches(["x" * 24_000] * 40)  # ~8k tokens each: split by the token budget
    assert len(big) > 1 and sum(map(len, big)) == 40


def test_openai_key_never_logged(fake_llm: FakeLLMServer, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level("DEBUG")
    fake_llm.script("embeddings", Status(429, headers={"retry-after": "0"}))
    OpenAIEmbedder(_openai_settings(fake_llm)).embed(["x"])
    assert "sk-test-secret-key" not in caplog.text
    assert os.environ.get("OPENAI_API_KEY") != "sk-test-secret-key"


def test_indexer_with_openai_embedder_and_a_bad_key(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    """Vectors come from the endpoint; when it refuses the key, keyword search still works."""
    from codeqa_lsp.index.indexer import Indexer

    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.py").write_text("def parse_config(path):\n    return open(path).read()\n")
    settings = _openai_settings(fake_llm, index_dir=str(tmp_path / "idx"))
    indexer = Indexer(root, settings)
    try:
        report = indexer.index()
        assert report.embed_error is None and report.embedded == 1 and indexer.coverage() == 1.0
        assert [c.symbol for c, _ in indexer.dense("parse config", 1)] == ["parse_config"]
        fake_llm.script("embeddings", Status(401))
        (root / "b.py").write_text("def load_settings():\n    return {}\n")
        report = indexer.index()
        assert report.embed_error is not None and "HTTP 401" in report.embed_error
        assert [c.symbol for c, _ in indexer.bm25("load_settings", 1)] == ["load_settings"]
        assert indexer.coverage() == 0.5
    finally:
        indexer.close()
