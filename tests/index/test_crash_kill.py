"""Issue 9: kill -9 an indexer at random points (full index, save burst), 20 times.

After every kill the index must reopen without an exception, and one `index()` must bring
it to exactly the state of a clean index of the same files: same chunk ids, one vector per
chunk, nothing duplicated or missing.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from codeqa_lsp.config import Settings
from codeqa_lsp.index.indexer import Indexer
from tests.index.conftest import snapshot

REPO = Path(__file__).resolve().parents[2]
KILLS = 20


def _clean_state(root: Path, directory: Path) -> set[str]:
    shutil.rmtree(directory, ignore_errors=True)
    clean = Indexer(root, Settings(embedder="hash", index_dir=str(directory)))
    try:
        clean.index()
        return snapshot(clean)[0]
    finally:
        clean.close()


def test_kill_9_at_random_points_never_corrupts(
    make_workspace: Callable[..., Path], tmp_path: Path
) -> None:
    root = make_workspace(files=30)
    index_dir = tmp_path / "idx"
    rng = random.Random(1234)
    phases: Counter[str] = Counter()
    for attempt in range(KILLS):
        if attempt % 4 == 0:  # every fourth run starts from nothing: a kill mid full index
            shutil.rmtree(index_dir, ignore_errors=True)
        worker = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tests.index.crash_worker",
                str(root),
                str(index_dir),
                str(attempt),
            ],
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert worker.stdout is not None and worker.stdout.readline().strip() == "ready"
        time.sleep(rng.uniform(0.0, 0.9))
        os.kill(worker.pid, signal.SIGKILL)
        output, errors = worker.communicate()
        assert worker.returncode == -signal.SIGKILL, errors
        phases["burst" if "indexed" in output else "full index"] += 1

        reopened = Indexer(root, Settings(embedder="hash", index_dir=str(index_dir)))
        try:
            reopened.index()
            ids, labels = snapshot(reopened)
        finally:
            reopened.close()
        assert ids == _clean_state(root, tmp_path / "clean"), f"attempt {attempt}"
        assert len(labels) == len(ids)
    # Both kinds of kill happened (the delays are random, the phases long enough to hit).
    assert phases["full index"] >= 1 and phases["burst"] >= 1, phases
