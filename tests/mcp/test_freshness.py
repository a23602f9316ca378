"""`IndexKeeper`: the per-call reconcile on a real index (SQLite + hnswlib, hash embedder)."""

from __future__ import annotations

import os
from pathlib import Path

from codeqa_lsp.config import Settings
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
