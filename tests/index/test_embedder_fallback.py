"""Choosing the embedder when the local one cannot work: a one-line reason, then the hash
embedder (search keeps working), never a crash. The real selection code, the real file
checks: the weights here are real files, damaged the way a bad copy or disk damages them."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from codeqa_lsp.config import Settings
from codeqa_lsp.index.embedders import EmbedderError, HashEmbedder, create_embedder, local
from codeqa_lsp.index.indexer import Indexer

installed = pytest.mark.skipif(
    not local.is_available(), reason="the local embedder is not installed"
)


@pytest.fixture
def weights_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the bundled weights folder that the embedder is pointed at (the 90 MB
    safetensors is linked, not copied, until a test damages its own copy)."""
    source = local.bundled_model_dir()
    assert source is not None
    target = tmp_path / "model"
    target.mkdir()
    for item in source.iterdir():
        if item.is_file():
            (target / item.name).symlink_to(item)
    monkeypatch.setattr(local, "bundled_model_dir", lambda: target)
    return target


def one_warning(caplog: pytest.LogCaptureFixture) -> str:
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1, warnings
    assert "\n" not in warnings[0]
    return warnings[0]


@installed
@pytest.mark.parametrize("choice", ["auto", "local"])
def test_truncated_weights_fall_back_to_hash(
    weights_copy: Path, choice: str, caplog: pytest.LogCaptureFixture
) -> None:
    weights = weights_copy / "model.safetensors"
    head = weights.read_bytes()[: 1 << 20]
    weights.unlink()
    weights.write_bytes(head)
    with caplog.at_level(logging.WARNING):
        embedder = create_embedder(Settings(embedder=choice))  # type: ignore[arg-type]
    assert isinstance(embedder, HashEmbedder)
    message = one_warning(caplog)
    assert "damaged" in message and "truncated" in message and "hash embedder" in message


@installed
def test_missing_tokenizer_falls_back_to_hash_and_the_index_still_works(
    weights_copy: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (weights_copy / "tokenizer.json").unlink()
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.py").write_text("def parse_header(line):\n    return line.split(':', 1)\n")
    with caplog.at_level(logging.WARNING):
        indexer = Indexer(root, Settings(index_dir=str(tmp_path / "idx")))
    try:
        assert indexer.embedder.name == "hash"
        assert "tokenizer.json" in one_warning(caplog)
        assert indexer.index().embedded == 1
        assert indexer.dense("parse_header", 1)[0][0].symbol == "parse_header"
    finally:
        indexer.close()


def test_packages_missing(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """`auto` quietly uses hash; `local` asked for explicitly says what to install."""
    monkeypatch.setattr(
        local, "REQUIRED_MODULES", (*local.REQUIRED_MODULES, "codeqa_no_such_module")
    )
    with caplog.at_level(logging.WARNING):
        assert isinstance(create_embedder(Settings(embedder="auto")), HashEmbedder)
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    with pytest.raises(EmbedderError) as info:
        create_embedder(Settings(embedder="local"))
    assert "codeqa_no_such_module" in str(info.value) and "pip install" in str(info.value)
    assert "\n" not in str(info.value)


@installed
def test_unbuildable_model_is_a_one_line_error_at_embed_time(
    weights_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Weights that pass the cheap start-up check but cannot be built into a model (here: a
    config for another architecture) fail the first embed with an EmbedderError, which the
    indexer turns into keyword-only search, not a crash."""
    config = weights_copy / "config.json"
    text = config.read_text().replace('"model_type": "bert"', '"model_type": "roberta"')
    config.unlink()
    config.write_text(text)
    embedder = local.LocalEmbedder(variant="fp32", cache_dir=tmp_path / "models")
    with pytest.raises(EmbedderError) as info:
        embedder.embed(["anything"])
    assert "model_type" in str(info.value) and "\n" not in str(info.value)
