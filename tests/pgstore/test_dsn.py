"""Store URLs: passwords refused and redacted, repository identities normalised."""

from __future__ import annotations

from pathlib import Path

import pytest

from codeqa_lsp.config import Settings
from codeqa_lsp.index.indexer import Indexer
from codeqa_lsp.index.overlay import OverlayIndexer, with_shared_store
from codeqa_lsp.index.pg import dsn
from codeqa_lsp.index.pg.gitinfo import normalise_remote


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("postgresql://ci:s3cret@db/codeqa", "postgresql://ci:***@db/codeqa"),
        ("failed: host=db password=s3cret user=ci", "failed: host=db password=*** user=ci"),
        ("postgres://db.internal/codeqa", "postgres://db.internal/codeqa"),
    ],
)
def test_redact(text: str, expected: str) -> None:
    assert dsn.redact(text) == expected


def test_validate_refuses_passwords_and_other_schemes_without_echoing() -> None:
    assert (
        dsn.validate("postgresql://reader@db.internal:5433/codeqa")
        == "postgresql://reader@db.internal:5433/codeqa"
    )
    with pytest.raises(dsn.StoreUrlError, match="PGPASSWORD") as caught:
        dsn.validate("postgresql://ci:s3cret@db/codeqa")
    assert "s3cret" not in str(caught.value)
    with pytest.raises(dsn.StoreUrlError, match="postgresql://"):
        dsn.validate("mysql://db/codeqa")
    with pytest.raises(dsn.StoreUrlError) as caught:
        dsn.validate("postgresql://db/codeqa?password=s3cret")
    assert "s3cret" not in str(caught.value)


@pytest.mark.parametrize(
    "remote",
    [
        "git@github.com:Team/Mono.git",
        "https://github.com/team/mono",
        "https://ci-bot:ghp_token@github.com/team/mono.git",
        "ssh://git@github.com:22/team/mono.git",
    ],
)
def test_remote_identity_is_the_same_for_every_clone_url(remote: str) -> None:
    assert normalise_remote(remote) == "github.com/team/mono"


def test_a_bad_store_keeps_the_local_index(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("def a():\n    return 1\n")
    local = Indexer(tmp_path, Settings(embedder="hash", index_dir=str(tmp_path / "index")))
    try:
        assert with_shared_store(local, None) is local
        assert with_shared_store(local, "postgresql://u:pw@db/codeqa") is local
        assert isinstance(with_shared_store(local, "postgresql://u@db/codeqa"), OverlayIndexer)
    finally:
        local.close()
