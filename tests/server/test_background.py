"""Work handlers start but do not await is owned by the server object, not module globals."""

from __future__ import annotations

import asyncio
import threading

from codeqa_lsp.server.app import CodeQAServer


async def test_shutdown_cancels_and_awaits_background_tasks() -> None:
    server = CodeQAServer()
    started = asyncio.Event()
    finished: list[str] = []

    async def popup() -> None:  # like a citation popup waiting for the user forever
        started.set()
        try:
            await asyncio.Event().wait()
        finally:
            finished.append("cleaned up")

    task = server.spawn(popup())
    await started.wait()
    assert server.background == {task}
    await server.stop_background()
    assert task.cancelled() and finished == ["cleaned up"]
    assert server.background == set()
    server.shutdown_pools()


def test_submit_once_runs_one_job_per_key_at_a_time() -> None:
    server = CodeQAServer()
    release = threading.Event()
    runs: list[str] = []

    def slow(name: str) -> None:
        runs.append(name)
        release.wait()

    server.submit_once(("explain", "a"), lambda: slow("first"))
    server.submit_once(("explain", "a"), lambda: slow("duplicate"))  # still running: skipped
    server.submit_once(("explain", "b"), lambda: slow("other key"))
    release.set()
    server.work_pool.shutdown(wait=True)
    assert sorted(runs) == ["first", "other key"]

    server.submit_once(("explain", "a"), lambda: slow("after shutdown"))  # refused, not raised
    assert "after shutdown" not in runs
    server.shutdown_pools()
