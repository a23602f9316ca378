"""`CodeBase` lifecycle: closing a workspace releases everything it started.

The language server re-opens a workspace's `CodeBase` on every settings change, so anything
`close()` leaves running accumulates for the life of the editor session.
"""

from __future__ import annotations

import threading
from pathlib import Path

from codeqa_lsp.config import Settings
from codeqa_lsp.engine import CodeBase

SOURCE = '''\
def compute_discount(total: float, coupon: str) -> float:
    """Ten percent off with the SAVE10 coupon."""
    return total * 0.1 if coupon == "SAVE10" else 0.0


def apply_tax(amount: float) -> float:
    """Add value-added tax."""
    return amount * 1.2
'''


def _search_threads(before: set[threading.Thread]) -> list[threading.Thread]:
    return [
        t for t in threading.enumerate() if t not in before and t.name.startswith("codeqa-search")
    ]


def test_close_stops_the_search_threads_of_every_reopen(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "shop.py").write_text(SOURCE, encoding="utf-8")
    settings = Settings(embedder="hash", index_dir=str(tmp_path / "index"))
    before = set(threading.enumerate())
    started: list[threading.Thread] = []
    for _ in range(3):  # what three settings changes do to one folder
        workspace = CodeBase(root, settings)
        try:
            workspace.index()
            # Hybrid: the dense arm runs in the searcher's pool while BM25 runs here.
            assert workspace.search("where is the discount computed").hits
            started = _search_threads(before)
            assert started, "the hybrid search ran no pool thread: this test checks nothing"
        finally:
            workspace.close()
        for thread in started:
            thread.join(timeout=60)  # a guard against hanging on the bug, not a speed limit
        assert [t.name for t in started if t.is_alive()] == []
