"""How the `local` embedder should use 2 cores: batch size, intra-op threads, spinning.

Part 1 (in this process): embedding throughput on a fixed sample of click/src chunks
(every 12th chunk by length, so short and long ones alike) for each setting, idle and with a
competing process busy on one core (what the server's reader, an editor or another
engineer's job is to the embedder). Settings are interleaved and repeated; the median is kept.

Part 2 (the real server over stdio): hover round trips, one after another, while the server
builds a clean `local` index of click/src, with onnxruntime's pool threads spinning or
sleeping; and the same hovers once the index is built (the baseline of the same run).

    python bench/speed_threads.py [--repeats 2] [--skip-server]

Writes bench/results/speed-threads.json. Not a test: numbers depend on the machine's load,
which is recorded beside each part.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from common import latency_summary, write_result
from corpora import corpus_root

# (variant, intra-op threads, spinning, batch size); the first is today's default.
SETTINGS: tuple[tuple[str, int, bool, int], ...] = (
    ("ffn-int8", 2, False, 8),
    ("ffn-int8", 2, True, 8),
    ("ffn-int8", 1, False, 8),
    ("ffn-int8", 2, False, 4),
    ("ffn-int8", 2, False, 16),
    ("ffn-int8", 2, False, 32),
    ("fp32", 2, False, 8),
    ("int8", 2, False, 8),
)
QUERIES = (
    "how are environment variables read for options",
    "where is the help text formatted",
    "what happens when a required argument is missing",
    "which function prompts for confirmation",
    "how does a command group dispatch to subcommands",
    "where are shell completions generated",
)
SERVER_SETTINGS = ((False, 2), (True, 2), (False, 1))  # (spinning, intra-op threads)
BUSY_LOOP = "import time\nend = time.time() + 3600\nwhile time.time() < end:\n    pass\n"
HOVER = {"line": 0, "character": 4}


def click_chunk_texts(every: int = 12) -> list[str]:
    """Chunk texts of click/src as the indexer embeds them (hash index: no model needed)."""
    from codeqa_lsp.config import Settings
    from codeqa_lsp.index.indexer import Indexer

    with tempfile.TemporaryDirectory() as tmp:
        indexer = Indexer(corpus_root("click") / "src", Settings(embedder="hash", index_dir=tmp))
        try:
            indexer.index()
            texts = sorted((c.embed_text() for c in indexer.chunks()), key=len)
        finally:
            indexer.close()
    return texts[::every]


def throughput(texts: list[str], setting: tuple[str, int, bool, int]) -> tuple[float, float]:
    """(chunks/s over `texts`, median ms of one short question) for one setting."""
    from codeqa_lsp.index.embedders.local import LocalEmbedder

    variant, threads, spinning, batch = setting
    embedder = LocalEmbedder(variant=variant, threads=threads, spinning=spinning, batch_size=batch)
    embedder.embed(texts[:4])  # session open and first-run allocations, outside the timing
    started = time.perf_counter()
    embedder.embed(texts)
    rate = len(texts) / (time.perf_counter() - started)
    query_s = []
    for text in QUERIES * 3:
        t0 = time.perf_counter()
        embedder.embed([text])
        query_s.append(time.perf_counter() - t0)
    return rate, statistics.median(query_s) * 1000


def measure_throughput(texts: list[str], repeats: int, contended: bool) -> dict[str, Any]:
    busy = subprocess.Popen([sys.executable, "-c", BUSY_LOOP]) if contended else None
    try:
        load0 = os.getloadavg()[0]
        rates: dict[str, list[float]] = {}
        query_ms: dict[str, list[float]] = {}
        for _ in range(repeats):
            for setting in SETTINGS:
                variant, threads, spinning, batch = setting
                key = f"{variant} threads={threads} spin={int(spinning)} batch={batch}"
                rate, ms = throughput(texts, setting)
                rates.setdefault(key, []).append(rate)
                query_ms.setdefault(key, []).append(ms)
                print(
                    f"[threads] {'busy' if contended else 'idle'} {key}: {rate:.1f}/s, query "
                    f"{ms:.1f} ms",
                    file=sys.stderr,
                    flush=True,
                )
    finally:
        if busy is not None:
            busy.kill()
            busy.wait()
    base = statistics.median(next(iter(rates.values())))
    return {
        "load_average_start": round(load0, 2),
        "load_average_end": round(os.getloadavg()[0], 2),
        "competing_busy_process": contended,
        "chunks_per_s": {
            k: {
                "median": round(statistics.median(v), 1),
                "all": [round(x, 1) for x in v],
                "vs_first": round(statistics.median(v) / base, 2),
            }
            for k, v in rates.items()
        },
        "query_ms": {k: round(statistics.median(v), 2) for k, v in query_ms.items()},
    }


# -- part 2: the server's reader while it embeds ------------------------------------------------

SITECUSTOMIZE = """
import os
from codeqa_lsp.index.embedders import local as _local
_init = _local.LocalEmbedder.__init__
def _patched(self, *args, **kwargs):
    kwargs.setdefault("spinning", os.environ.get("CODEQA_BENCH_SPIN") == "1")
    kwargs.setdefault("threads", int(os.environ.get("CODEQA_BENCH_THREADS", "2")))
    _init(self, *args, **kwargs)
_local.LocalEmbedder.__init__ = _patched
"""


async def hovers_during_index(
    root: Path, index_dir: Path, spinning: bool, threads: int, hook: Path
) -> dict[str, Any]:
    from tests.server.rawclient import RawClient

    env = {
        "CODEQA_BENCH_SPIN": "1" if spinning else "0",
        "CODEQA_BENCH_THREADS": str(threads),
        "PYTHONPATH": os.pathsep.join([str(hook), *sys.path[:2], os.environ.get("PYTHONPATH", "")]),
    }
    client = await RawClient.start(env=env)
    try:
        started = time.perf_counter()
        await client.initialize(root, {"embedder": "local", "indexDir": str(index_dir)})
        uri = (root / "click" / "core.py").as_uri()
        params = {"textDocument": {"uri": uri}, "position": HOVER}
        during: list[float] = []
        while not client.progress("end"):
            t0 = time.perf_counter()
            response = await client.request("textDocument/hover", params)
            if not client.progress("end"):
                during.append(time.perf_counter() - t0)
            assert "result" in response, response
            await asyncio.sleep(0.02)
        index_s = time.perf_counter() - started
        after: list[float] = []
        for _ in range(100):
            t0 = time.perf_counter()
            await client.request("textDocument/hover", params)
            after.append(time.perf_counter() - t0)
            await asyncio.sleep(0.02)
        status = (await client.command("codeqa.status"))["result"]
    finally:
        await client.close()
    return {
        "spinning": spinning,
        "threads": threads,
        "index_s": round(index_s, 2),
        "chunks": status.get("chunks"),
        "embedding_model": status.get("embedding_model"),
        "hover_during_index": latency_summary(during),
        "hover_after_index": latency_summary(after),
    }


def measure_server(repeats: int) -> dict[str, Any]:
    runs: list[dict[str, Any]] = []
    load0 = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="codeqa-threads-") as tmp:
        hook = Path(tmp) / "hook"
        hook.mkdir()
        (hook / "sitecustomize.py").write_text(SITECUSTOMIZE)
        root = Path(tmp) / "click-src"
        shutil.copytree(corpus_root("click") / "src", root)
        for i in range(repeats):
            for spinning, threads in SERVER_SETTINGS:
                print(
                    f"[threads] server · spin={int(spinning)} threads={threads} · #{i + 1}",
                    file=sys.stderr,
                    flush=True,
                )
                index_dir = Path(tmp) / f"index-{i}-{int(spinning)}-{threads}"
                runs.append(
                    asyncio.run(hovers_during_index(root, index_dir, spinning, threads, hook))
                )
    return {
        "root": "click-8.1.7/src",
        "load_average_start": round(load0, 2),
        "load_average_end": round(os.getloadavg()[0], 2),
        "runs": runs,
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--skip-server", action="store_true")
    parser.add_argument("--skip-throughput", action="store_true")
    parser.add_argument(
        "--skip-busy", action="store_true", help="no run with a competing busy process"
    )
    args = parser.parse_args(argv)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    doc: dict[str, Any] = {"description": __doc__.split("\n\n")[1].replace("\n", " ")}
    if not args.skip_throughput:
        texts = click_chunk_texts()
        doc["sample"] = {
            "chunks": len(texts),
            "chars_median": statistics.median(len(t) for t in texts),
        }
        doc["idle"] = measure_throughput(texts, args.repeats, contended=False)
        if not args.skip_busy:
            doc["one_core_busy"] = measure_throughput(
                texts, max(1, args.repeats - 1), contended=True
            )
    if not args.skip_server:
        doc["server"] = measure_server(max(1, args.repeats - 1))
    path = write_result("speed-threads", doc, False)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
