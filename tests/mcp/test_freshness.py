"""`IndexKeeper`: the per-call reconcile on a real index (SQLite + hnswlib, hash embedder)."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from codeqa_lsp.config import Settings
from codeqa_lsp.index.model import IndexProgress
from codeqa_lsp.mcp.freshness import SYNC_CHANGE_LIMIT
from codeqa_lsp.mcp.service import CodeService
from tests.mcp.conftest import KEY_FILE


def _service(root: Path, tmp_path: Path) -> CodeService:
    settings = Settings(embedder="hash", index_dir=str(tmp_path / "index"))
    service = CodeService(root, settings, start_indexing=False)
    service.workspace.index()
    return service


def test_in_place_edit_is_found_by_the_quick_check_without_a_walk(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    root.mkdir()
    target = root / "a.py"
    target.write_text("def first():\n    return 1\n")
    (root / "keys.py").write_text(KEY_FILE)  # listed by the walk, refused on reading
    service = _service(root, tmp_path)
    try:
        assert (
            service.keeper.refresh().updated == 1
        )  # the first walk re-checks the refused file once
        walked = service.keeper._snapshot
        assert (
            service.keeper.refresh().updated == 0
        )  # the refused file is not re-read on every call
        target.write_text("def first():\n    return 1\n\n\ndef second_function():\n    return 2\n")
        os.utime(target, (1, 2_000_000_000))
        outcome = service.keeper.refresh()
        assert (outcome.updated, outcome.removed, outcome.deferred) == (1, 0, False)
        assert service.keeper._snapshot is walked  # quick path: no directory walk
        hit = service.search("second_function").results[0]
        assert (hit.path, hit.start_line, hit.end_line) == ("a.py", 5, 6)
        assert all(r.path != "keys.py" for r in service.search("load_deploy_key").results)
    finally:
        service.close()


def test_a_large_change_goes_to_the_background_and_calls_keep_answering(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    root.mkdir()
    (root / "base.py").write_text("def base():\n    return 0\n")
    service = _service(root, tmp_path)
    try:
        service.keeper.refresh()
        for i in range(SYNC_CHANGE_LIMIT + 5):
            (root / f"gen_{i}.py").write_text(f"def generated_{i}():\n    return {i}\n")
        outcome = service.keeper.refresh()
        assert outcome.deferred and outcome.updated == 0
        service.search("generated_3")  # answered whatever the background run has reached
        assert service.keeper.wait(timeout=300)
        hit = service.search("generated_3").results[0]
        assert (hit.path, hit.symbol) == ("gen_3.py", "generated_3")
        assert service.workspace.status().files == SYNC_CHANGE_LIMIT + 6
        assert not service.index_state().indexing
    finally:
        service.close()


@contextmanager
def _held_in_scan(root: Path, index_dir: Path) -> Iterator[CodeService]:
    """A service whose index run is held at its first `scan` progress (reading the tree,
    deterministically, for as long as the block runs) once its query embedder is warm."""
    service = CodeService(
        root, Settings(embedder="hash", index_dir=str(index_dir)), start_indexing=False
    )
    release, keeper = threading.Event(), service.keeper
    on_progress = keeper._on_progress

    def held(progress: IndexProgress) -> None:
        on_progress(progress)
        if progress.phase == "scan":
            release.wait(timeout=120)

    keeper._on_progress = held  # type: ignore[method-assign]
    try:
        keeper.start()
        _until(lambda: keeper.progress().phase == "scan")
        # The query embedder is warmed beside the index run, not after it.
        _until(lambda: not service.workspace.keyword_only)
        yield service
    finally:
        release.set()
        keeper.wait(timeout=300)
        service.close()


def _until(condition: Callable[[], bool]) -> None:
    """A bounded poll, not a timing assertion: on a loaded machine it takes more polls."""
    for _ in range(1200):
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError("condition never became true")


def test_a_warm_start_searches_both_arms_while_it_rereads_the_tree(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    root.mkdir()
    (root / "uploads.py").write_text(
        "def retry_failed_upload(client, path):\n    return client.put(path)\n"
    )
    _service(root, tmp_path).close()  # a complete index, saved by an earlier run
    with _held_in_scan(root, tmp_path / "index") as service:
        state = service.index_state()
        assert (state.indexing, state.phase, state.search_mode) == (True, "scan", "hybrid")
        assert state.note.startswith("checking the workspace for changes since the last index")
        found = service.search("retry a failed upload")
        assert found.results[0].symbol == "retry_failed_upload"
        assert found.index.search_mode == "hybrid"
    # A first index, still reading the tree, says its results are partial.
    with _held_in_scan(root, tmp_path / "new") as fresh:
        state = fresh.index_state()
        assert state.search_mode == "keyword"
        assert state.note.startswith("indexing in the background")
