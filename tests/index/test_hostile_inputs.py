"""Issue 9 at the index level: hostile files and buffers never raise out of the indexer."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codeqa_lsp.config import Settings
from codeqa_lsp.index.indexer import Indexer
from tests.index.conftest import snapshot


def test_hostile_workspace_indexes_everything_else(
    make_workspace: Callable[..., Path], tmp_path: Path
) -> None:
    root = make_workspace(files=3)
    bad = root / "bad"
    bad.mkdir()
    (bad / "random.py").write_bytes(os.urandom(4096).replace(b"\x00", b"\x01"))
    (bad / "nul.py").write_bytes(b"def a():\n    pass\n\x00\x00")
    (bad / "latin1.py").write_bytes("def café():\n    return 'é'\n".encode("latin-1"))
    (bad / "mixed.py").write_bytes(b"def a():\r\n    return 1\rdef b():\n    return 2\r\n")
    (bad / "deep.py").write_text("x = " + "[" * 5000 + "]" * 5000 + "\n")
    (bad / "minified.js").write_text("var a=1;" * 200_000)
    (bad / "dangling.py").symlink_to(tmp_path / "nowhere.py")
    (bad / "loop").symlink_to(bad)
    indexer = Indexer(root, Settings(embedder="hash", index_dir=str(tmp_path / "idx")))
    try:
        report = indexer.index()
        assert {c.path for c in indexer.chunks()} >= {f"pkg/mod{i}.py" for i in range(3)}
        assert "bad/nul.py" not in {c.path for c in indexer.chunks()}
        assert report.skipped  # counted by reason, whatever the scanner calls them
        snapshot(indexer)
        for rel in ("../outside.py", "/etc/passwd", "", "bad/../../x.py"):
            assert indexer.update_file(rel).skipped_reason is not None
        assert indexer.update_file("bad/vanished.py").skipped_reason is not None
    finally:
        indexer.close()


def test_index_dir_reused_for_another_root_is_rebuilt(
    make_workspace: Callable[..., Path], tmp_path: Path
) -> None:
    settings = Settings(embedder="hash", index_dir=str(tmp_path / "idx"))
    first_root = make_workspace(files=2, name="one")
    first = Indexer(first_root, settings)
    first.index()
    first.close()
    second_root = make_workspace(files=1, name="two")
    second = Indexer(second_root, settings)
    try:
        report = second.index()
        assert report.rebuilt_reason and "belonged to" in report.rebuilt_reason
        assert {c.path for c in second.chunks()} == {"pkg/mod0.py"}
        snapshot(second)
    finally:
        second.close()


@pytest.fixture(scope="module")
def fuzz_indexer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Indexer]:
    """One indexer across hypothesis examples: the point is many updates to one index."""
    root = tmp_path_factory.mktemp("ws")
    indexer = Indexer(
        root, Settings(embedder="hash", index_dir=str(tmp_path_factory.mktemp("idx")))
    )
    yield indexer
    indexer.close()


@settings(max_examples=60, deadline=None)
@given(text=st.text(max_size=2000))
def test_any_buffer_text_keeps_the_index_consistent(fuzz_indexer: Indexer, text: str) -> None:
    fuzz_indexer.update_file("fuzz.py", text=text)
    fuzz_indexer.update_file("fuzz.md", text=text)
    snapshot(fuzz_indexer)
