"""Language-server latency, measured from a client over stdio against the real server.

Times count from the moment the client sends `initialize` to a freshly spawned server (what
an editor does), so they include the interpreter's start; `*_after_initialize_response_s`
counts from the `initialize` response instead.

1. Cold start: time from `initialize` to the first `codeqa.ask` that returns a cited answer
   on a 1,000+ file workspace (asks are retried every 100 ms while the index is built; the
   answer counts when it cites code). Also when that happened relative to indexing.
2. Hover p50/p95 while the full index runs (client round trip, one hover after another).
3. `didSave`-to-searchable for a 1,000-line file: save, then poll `codeqa.search` every 20 ms
   for a symbol that only the new text contains (includes the server's 200 ms debounce).
4. Warm start: a new server on the unchanged workspace and index: `initialize` to the end
   of the (warm) index run, and to the first cited answer.

Workspace: the interpreter's standard library copied to a temp dir (with its tests, to pass
1,000 files), plus a small app fixture. Embedder: the numpy hashing embedder (`--embedder`
to change), extractive answers: the numbers are the server's, not a model's.

    .venv/bin/python bench/bench_server.py [--quick]

Writes bench/results/server.json. Not a test: numbers depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
import sysconfig
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from common import latency_summary, write_result

from tests.server.rawclient import RawClient
from tests.server.workspace import make_workspace

QUESTION = "how are settings loaded from the config file?"
GUARD = 1800.0


def build_workspace(root: Path, files: int) -> int:
    make_workspace(root)
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    sources = sorted(p for p in stdlib.rglob("*.py") if "site-packages" not in p.parts)[:files]
    for src in sources:
        target = root / "stdlib" / src.relative_to(stdlib)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, target)
    return len(sources)


def thousand_line_file(tag: str) -> str:
    blocks = []
    for i in range(100):
        blocks.append(
            f"def {tag}_function_{i}(value):\n"
            f'    """Step {i} of the {tag} pipeline."""\n'
            f"    total = value + {i}\n"
            f"    if total > {i * 3}:\n"
            f"        total -= {i}\n"
            f"    for step in range(3):\n"
            f"        total += step\n"
            f"    return total\n"
            f"\n"
            f"\n"
        )
    return "".join(blocks)


async def first_cited_answer(client: RawClient, started: float) -> dict[str, Any]:
    """Retry `codeqa.ask` until it cites code; report when, and whether indexing still ran."""
    attempts = 0
    while True:
        attempts += 1
        response = await client.command("codeqa.ask", {"question": QUESTION})
        result = response.get("result")
        if result and result.get("citations"):
            return {
                "seconds": round(time.perf_counter() - started, 3),
                "attempts": attempts,
                "index_still_running": not client.progress("end"),
            }
        await asyncio.sleep(0.1)


async def cold_start(root: Path, index_dir: Path, embedder: str) -> dict[str, Any]:
    client = await RawClient.start()
    try:
        started = time.perf_counter()
        await client.initialize(root, {"embedder": embedder, "indexDir": str(index_dir)})
        initialize_s = time.perf_counter() - started
        ask_task = asyncio.get_running_loop().create_task(first_cited_answer(client, started))
        hover_uri = (root / "app" / "session.py").as_uri()
        hover_latencies: list[float] = []
        while not client.progress("end"):
            t0 = time.perf_counter()
            response = await client.request(
                "textDocument/hover",
                {"textDocument": {"uri": hover_uri}, "position": {"line": 9, "character": 26}},
            )
            if not client.progress("end"):
                hover_latencies.append(time.perf_counter() - t0)
            assert "result" in response, response
            await asyncio.sleep(0.02)
        index_s = time.perf_counter() - started
        first_ask = await asyncio.wait_for(ask_task, GUARD)
        status = (await client.command("codeqa.status"))["result"]
        save = await save_to_searchable(client, root)
        return {
            "initialize_response_s": round(initialize_s, 3),
            "first_cited_ask": first_ask,
            "first_cited_ask_after_initialize_response_s": round(
                first_ask["seconds"] - initialize_s, 3
            ),
            "full_index_s": round(index_s, 3),
            "index_end_message": client.progress("end")[0]["value"].get("message"),
            "files": status["files"],
            "chunks": status["chunks"],
            "hover_during_index": latency_summary(hover_latencies),
            "save_to_searchable": save,
        }
    finally:
        await client.close()


async def save_to_searchable(client: RawClient, root: Path, rounds: int = 3) -> dict[str, Any]:
    latencies = []
    target = root / "app" / "pipeline.py"
    for n in range(rounds):
        tag = f"zz{n}quokka"
        target.write_text(thousand_line_file(tag))
        started = time.perf_counter()
        client.notify("textDocument/didSave", {"textDocument": {"uri": target.as_uri()}})
        while True:
            hits = (
                await client.command("codeqa.search", {"query": f"{tag}_function_57", "topK": 5})
            )["result"]
            if any(h["symbol"] == f"{tag}_function_57" for h in hits):
                break
            await asyncio.sleep(0.02)
        latencies.append(time.perf_counter() - started)
    summary = latency_summary(latencies)
    summary["lines"] = len(thousand_line_file("x").splitlines())
    summary["includes_debounce_ms"] = 200
    return summary


async def warm_start(root: Path, index_dir: Path, embedder: str) -> dict[str, Any]:
    client = await RawClient.start()
    try:
        started = time.perf_counter()
        await client.initialize(root, {"embedder": embedder, "indexDir": str(index_dir)})
        initialize_s = time.perf_counter() - started
        first_ask = await asyncio.wait_for(first_cited_answer(client, started), GUARD)
        await asyncio.wait_for(client.wait_for(lambda: bool(client.progress("end"))), GUARD)
        return {
            "initialize_response_s": round(initialize_s, 3),
            "index_run_s": round(time.perf_counter() - started, 3),
            "index_end_message": client.progress("end")[0]["value"].get("message"),
            "first_cited_ask": first_ask,
            "first_cited_ask_after_initialize_response_s": round(
                first_ask["seconds"] - initialize_s, 3
            ),
        }
    finally:
        await client.close()


async def run(quick: bool, embedder: str) -> dict[str, Any]:
    files = 1_100 if quick else 3_000
    with tempfile.TemporaryDirectory(prefix="codeqa-bench-server-") as tmp:
        root = Path(tmp) / "ws"
        copied = build_workspace(root, files)
        index_dir = Path(tmp) / "index"
        cold = await asyncio.wait_for(cold_start(root, index_dir, embedder), GUARD)
        warm = await asyncio.wait_for(warm_start(root, index_dir, embedder), GUARD)
    return {
        "embedder": embedder,
        "provider": "extractive",
        "workspace": {
            "stdlib_files": copied,
            "indexed_files": cold["files"],
            "chunks": cold["chunks"],
        },
        "cold": cold,
        "warm": warm,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1,100 stdlib files instead of 3,000")
    parser.add_argument("--embedder", default="hash", choices=["hash", "local", "auto"])
    args = parser.parse_args()
    data = asyncio.run(run(args.quick, args.embedder))
    path = write_result("server", data, args.quick)
    print(f"wrote {path}")
    cold, warm = data["cold"], data["warm"]
    print(f"files {data['workspace']['indexed_files']}, chunks {data['workspace']['chunks']}")
    print(f"initialize -> first cited ask: {cold['first_cited_ask']}")
    print(f"full index: {cold['full_index_s']} s; hover during index: {cold['hover_during_index']}")
    print(f"save -> searchable (1,000 lines): {cold['save_to_searchable']}")
    print(f"warm start: {warm}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
