"""What the searcher caches between queries follows the index: a file added or removed after
the first search is (or stops being) resolvable from a query that names it (real index)."""

from __future__ import annotations

from pathlib import Path

from codeqa_lsp.config import Settings
from codeqa_lsp.index.indexer import Indexer
from codeqa_lsp.retrieval.search import HybridSearcher

TRACE = """Traceback (most recent call last):
  File "/srv/app/pkg/late.py", line 2, in flush_buffers
    raise OSError("disk")
OSError: disk
"""


def test_path_mentions_follow_files_added_and_removed_after_a_search(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "early.py").write_text("def open_buffers():\n    return []\n", "utf-8")
    settings = Settings(embedder="hash", index_dir=str(tmp_path / "index"))
    indexer = Indexer(root, settings)
    searcher = HybridSearcher(indexer, settings)
    try:
        indexer.index()
        assert "pkg/late.py" not in searcher._evidence(TRACE).paths
        first = searcher._path_resolver()
        assert searcher._path_resolver() is first  # unchanged index: built once
        late = root / "pkg" / "late.py"
        late.write_text("def flush_buffers():\n    raise OSError('disk')\n", "utf-8")
        indexer.update_file("pkg/late.py")
        assert searcher._evidence(TRACE).paths.get("pkg/late.py") == 1.0
        assert searcher.search(TRACE, top_k=3).hits[0].chunk.symbol == "flush_buffers"
        late.unlink()
        indexer.remove_file("pkg/late.py")
        assert "pkg/late.py" not in searcher._evidence(TRACE).paths
    finally:
        searcher.close()
        indexer.close()
