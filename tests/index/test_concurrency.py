"""Issue 9: a burst of saves and a full index while other threads keep querying."""

from __future__ import annotations

import random
import threading
from collections.abc import Callable
from pathlib import Path

from codeqa_lsp.config import Settings
from codeqa_lsp.index.indexer import Indexer
from tests.index.conftest import snapshot
from tests.index.crash_worker import rewrite

DEADLOCK_GUARD_SECONDS = 300  # only to turn a deadlock into a failure, not a speed limit


def test_save_burst_during_full_index_with_concurrent_queries(
    make_workspace: Callable[..., Path], tmp_path: Path
) -> None:
    root = make_workspace(files=20)
    indexer = Indexer(root, Settings(embedder="hash", index_dir=str(tmp_path / "idx")))
    done = threading.Event()
    errors: list[BaseException] = []
    answered = [0]

    def reader(seed: int) -> None:
        rng = random.Random(seed)
        try:
            while not done.is_set():
                n = rng.randrange(20)
                indexer.bm25(f"compute total {n} scale values", 5)
                indexer.dense(f"session {n} send request", 5)
                indexer.definitions(f"compute_total_{n}_1")
                indexer.status()
                indexer.coverage()
                answered[0] += 1
        except BaseException as exc:
            errors.append(exc)

    def full_index() -> None:
        try:
            indexer.index()
        except BaseException as exc:
            errors.append(exc)

    def burst() -> None:
        rng = random.Random(7)
        try:
            for _ in range(100):
                indexer.update_file(rewrite(root, rng))
        except BaseException as exc:
            errors.append(exc)

    readers = [threading.Thread(target=reader, args=(i,)) for i in range(3)]
    writers = [threading.Thread(target=full_index), threading.Thread(target=burst)]
    for t in readers + writers:
        t.start()
    for t in writers:
        t.join(DEADLOCK_GUARD_SECONDS)
    done.set()
    for t in readers:
        t.join(DEADLOCK_GUARD_SECONDS)
    assert not any(t.is_alive() for t in readers + writers), "deadlock"
    assert not errors, errors
    assert answered[0] > 0

    indexer.index()
    final = snapshot(indexer)
    indexer.close()
    clean = Indexer(root, Settings(embedder="hash", index_dir=str(tmp_path / "clean")))
    clean.index()
    assert snapshot(clean)[0] == final[0]
    clean.close()
    reopened = Indexer(root, Settings(embedder="hash", index_dir=str(tmp_path / "idx")))
    assert reopened.index().embedded == 0
    assert snapshot(reopened) == final
    reopened.close()
