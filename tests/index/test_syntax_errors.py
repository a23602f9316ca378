"""A file saved mid-edit (syntax error) keeps every definition after the error in the index."""

from __future__ import annotations

from pathlib import Path

from codeqa_lsp.config import Settings
from codeqa_lsp.index.indexer import Indexer

BROKEN = """import os


def bad_one(x:
    return x


def after_error(y):
    return os.path.join(y, "z")


class Later:
    def method(self):
        return after_error(1)
"""


def test_definitions_after_a_syntax_error_are_indexed_and_searchable(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "edit.py").write_text("def first():\n    return 1\n", encoding="utf-8")
    indexer = Indexer(root, Settings(embedder="hash", index_dir=str(tmp_path / "index")))
    try:
        indexer.index()
        (root / "edit.py").write_text(BROKEN, encoding="utf-8")  # saved mid-edit
        indexer.update_file("edit.py")
        found = {c.symbol: (c.start_line, c.end_line) for c in indexer.chunks(path="edit.py")}
        assert found["after_error"] == (8, 9)
        assert found["Later.method"] == (13, 14)
        assert [c.symbol for c in indexer.definitions("after_error")] == ["after_error"]
        assert any(c.symbol == "after_error" for c, _ in indexer.bm25("after_error join", 5))
        refs = {c.symbol: c.refs for c in indexer.chunks(path="edit.py")}
        assert refs["Later.method"] == ("after_error",)  # the call graph survives the error too
    finally:
        indexer.close()
