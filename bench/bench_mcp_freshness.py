"""What the MCP server's per-call freshness check costs, next to a search, in the same run.

The MCP server reconciles the index with the tree before every tool call
(`codeqa_lsp.mcp.freshness.IndexKeeper.refresh`: one directory walk of names, sizes and
mtimes, compared with what the index recorded). This measures, on a synthetic tree of
`--files` Python files (default 3,000 in 60 directories, 3 functions each) indexed with
the hash embedder:

- `search`: one hybrid search through the same service (the baseline a call pays anyway);
- `refresh_unchanged`: the quick check when nothing changed (what almost every call pays:
  one stat per listed file and directory);
- `refresh_full_walk`: the full walk with the scanner's rules (on directory changes, and
  every `FULL_SCAN_SECONDS`);
- `refresh_one_edit`: the check plus re-indexing one edited file;
- `index_unchanged`: a full `CodeBase.index()` on the unchanged tree (the alternative of
  reconciling through the indexer: it also re-reads ignore files and saves).

    .venv/bin/python bench/bench_mcp_freshness.py [--files N] [--repeat N]

Medians of wall-clock and CPU time (`time.process_time`); the ratios to `search` are the
numbers to quote, since on a shared machine absolute times mostly measure the neighbours.
Writes bench/results/mcp_freshness.json. Not a test.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from codeqa_lsp.config import Settings
from codeqa_lsp.mcp.service import CodeService

RESULTS = Path(__file__).resolve().parent / "results" / "mcp_freshness.json"
QUERIES = (
    "where do we retry failed uploads",
    "parse the config file",
    "compute_total_7",
    "open a database connection",
    "render the template",
)


def make_tree(root: Path, files: int) -> None:
    per_dir = 50
    for i in range(files):
        directory = root / f"pkg{i // per_dir:03d}"
        directory.mkdir(parents=True, exist_ok=True)
        (directory / f"module_{i:05d}.py").write_text(
            f'"""Module {i}: helpers for batch {i % 17}."""\n\n'
            f"def compute_total_{i}(items):\n"
            f'    """Sum the prices of batch {i}."""\n'
            f"    return sum(item.price for item in items)\n\n\n"
            f"def retry_upload_{i}(client, path, attempts={i % 5 + 1}):\n"
            f"    for attempt in range(attempts):\n"
            f"        if client.put(path):\n"
            f"                return True\n"
            f"    return False\n\n\n"
            f"class Handler{i}:\n"
            f"    def handle(self, request):\n"
            f"        return request.render('template_{i % 11}')\n"
        )


def measure(fn: Callable[[], Any], repeat: int) -> dict[str, float]:
    walls, cpus = [], []
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        fn()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return {
        "wall_ms": round(1000 * statistics.median(walls), 2),
        "cpu_ms": round(1000 * statistics.median(cpus), 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=3000)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--quick", action="store_true", help="500 files, 5 repeats")
    args = parser.parse_args()
    files, repeat = (500, 5) if args.quick else (args.files, args.repeat)
    with tempfile.TemporaryDirectory(prefix="codeqa-mcp-bench-") as tmp:
        root = Path(tmp) / "tree"
        make_tree(root, files)
        settings = Settings(embedder="hash", index_dir=str(Path(tmp) / "index"))
        service = CodeService(root, settings, start_indexing=False)
        started = time.perf_counter()
        service.workspace.index()
        full_index = time.perf_counter() - started
        assert service.workspace.warm_up()
        service.workspace.keyword_only = False  # what the server does once the embedder answers
        query = iter(QUERIES * (repeat * 4))
        results = {
            "search": measure(lambda: service.workspace.search(next(query)), repeat),
            "refresh_unchanged": measure(service.keeper.refresh, repeat),
            "refresh_full_walk": measure(lambda: service.keeper.refresh(full=True), repeat),
        }
        edited = sorted(root.rglob("*.py"))[files // 2]
        counter = iter(range(10**6))

        def edit_then_refresh() -> None:
            edited.write_text(
                edited.read_text() + f"\n\ndef added_{next(counter)}():\n    return 1\n"
            )
            outcome = service.keeper.refresh()
            assert outcome.updated == 1, outcome

        results["refresh_one_edit"] = measure(edit_then_refresh, repeat)
        results["index_unchanged"] = measure(service.workspace.index, max(3, repeat // 3))
        status = service.workspace.status()
        service.close()
    base = results["search"]["wall_ms"] or 1.0
    report = {
        "benchmark": "mcp_freshness",
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "load_average": os.getloadavg(),
        "files": status.files,
        "chunks": status.chunks,
        "repeat": repeat,
        "full_index_seconds": round(full_index, 2),
        "results": results,
        "ratio_to_search_wall": {k: round(v["wall_ms"] / base, 2) for k, v in results.items()},
        "ratio_to_search_cpu": {
            k: round(v["cpu_ms"] / (results["search"]["cpu_ms"] or 1.0), 2)
            for k, v in results.items()
        },
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
