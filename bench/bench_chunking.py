"""Chunking throughput next to raw tree-sitter parsing of the same files, in the same run.

Corpus: the running interpreter's standard library (`.py`) plus one npm package tree
(rxjs `src/` or express `lib/`, from ~/.cache/codeqa-bench/corpora or /tmp/corp). For each
file the raw pass times `Parser.parse` alone; the chunk pass times `chunk_source`
end to end (encode, parse, query, names, skeletons, splitting, module chunks). The goal is
chunking at >= 50% of raw parse speed.

    .venv/bin/python bench/bench_chunking.py [--quick] [--repeat N]

Times are CPU seconds of this process (`time.process_time`, best of N): on a machine shared
with other jobs, wall-clock time mostly measures the neighbours. Wall-clock is recorded too.
Writes bench/results/chunking.json. Not a test: numbers depend on the machine.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import sys
import sysconfig
import time
from importlib import metadata
from pathlib import Path

from tree_sitter import QueryCursor

from codeqa_lsp.chunking.chunker import chunk_source
from codeqa_lsp.chunking.languages import grammar, language_for_path, parser_for

RESULTS = Path(__file__).resolve().parent / "results" / "chunking.json"
NPM_CANDIDATES = [
    Path.home() / ".cache/codeqa-bench/corpora/rxjs/package/src",
    Path("/tmp/corp/rxjs/package/src"),
    Path.home() / ".cache/codeqa-bench/corpora/express/package/lib",
    Path("/tmp/corp/express/package/lib"),
]
MAX_BYTES = 1_000_000


def collect(quick: bool) -> list[tuple[str, str, str, bytes]]:
    """(corpus, rel path, language, utf-8 bytes) for every file with a grammar."""
    files: list[tuple[str, str, str, bytes]] = []
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    stdlib_paths = sorted(p for p in stdlib.rglob("*.py") if "site-packages" not in p.parts)
    if quick:
        stdlib_paths = stdlib_paths[:: max(1, len(stdlib_paths) // 250)]
    for path in stdlib_paths:
        _add(files, "stdlib", stdlib, path)
    npm = next((p for p in NPM_CANDIDATES if p.is_dir()), None)
    if npm is not None:
        for path in sorted(npm.rglob("*")):
            if path.is_file() and not path.name.endswith(".d.ts"):
                _add(files, f"npm:{npm.parent.parent.name}", npm, path)
    return files


def _add(files: list[tuple[str, str, str, bytes]], corpus: str, root: Path, path: Path) -> None:
    rel = path.relative_to(root).as_posix()
    language = language_for_path(rel)
    if language is None or grammar(language) is None:
        return
    try:
        data = path.read_bytes()
    except OSError:
        return
    if len(data) <= MAX_BYTES:
        text = data.decode("utf-8", "replace")
        files.append((corpus, rel, language, text.encode("utf-8", "replace")))


def measure(files: list[tuple[str, str, str, bytes]], repeat: int) -> dict[str, float]:
    texts = [(rel, language, data.decode("utf-8")) for _, rel, language, data in files]
    parse_best = chunk_best = parse_wall = chunk_wall = query_best = float("inf")
    chunks = 0
    for _ in range(repeat):
        wall, start = time.perf_counter(), time.process_time()
        for _, _, language, data in files:
            parser = parser_for(language)
            assert parser is not None
            parser.parse(data)
        parse_best = min(parse_best, time.process_time() - start)
        parse_wall = min(parse_wall, time.perf_counter() - wall)
        start = time.process_time()
        for _, _, language, data in files:  # the tree-sitter work chunking cannot avoid
            gram, parser = grammar(language), parser_for(language)
            assert gram is not None and parser is not None
            QueryCursor(gram.query).matches(parser.parse(data).root_node)
        query_best = min(query_best, time.process_time() - start)
        wall, start = time.perf_counter(), time.process_time()
        chunks = 0
        for rel, language, text in texts:
            chunks += len(chunk_source(rel, text, language=language))
        chunk_best = min(chunk_best, time.process_time() - start)
        chunk_wall = min(chunk_wall, time.perf_counter() - wall)
    megabytes = sum(len(data) for *_, data in files) / 1e6
    return {
        "files": len(files),
        "megabytes": round(megabytes, 2),
        "chunks": chunks,
        "parse_seconds": round(parse_best, 3),
        "chunk_seconds": round(chunk_best, 3),
        "parse_mb_per_s": round(megabytes / parse_best, 2),
        "chunk_mb_per_s": round(megabytes / chunk_best, 2),
        "chunks_per_s": round(chunks / chunk_best, 1),
        "chunking_vs_parse_speed": round(parse_best / chunk_best, 3),
        "parse_and_query_seconds": round(query_best, 3),
        "chunking_vs_parse_and_query_speed": round(query_best / chunk_best, 3),
        "parse_wall_seconds": round(parse_wall, 3),
        "chunk_wall_seconds": round(chunk_wall, 3),
    }


def machine() -> dict[str, object]:
    ram = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                ram = round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    return {
        "cores": os.cpu_count(),
        "ram_gb": ram,
        "platform": platform.platform(),
        "python": sys.version.split()[0],
        "tree_sitter": metadata.version("tree-sitter"),
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help="~250 stdlib files + the npm tree, one run"
    )
    parser.add_argument("--repeat", type=int, default=None, help="runs per pass (best kept)")
    args = parser.parse_args()
    repeat = args.repeat or (1 if args.quick else 3)
    files = collect(args.quick)
    by_corpus: dict[str, list[tuple[str, str, str, bytes]]] = {}
    for item in files:
        by_corpus.setdefault(item[0], []).append(item)
    rows = {name: measure(group, repeat) for name, group in sorted(by_corpus.items())}
    rows["all"] = measure(files, repeat)
    report = {"machine": machine(), "quick": args.quick, "repeat": repeat, "results": rows}
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n")
    print(
        "| corpus | files | MB | parse MB/s | parse+query MB/s | chunk MB/s | chunks/s | "
        "chunk/parse speed |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, row in rows.items():
        query_speed = round(row["megabytes"] / max(row["parse_and_query_seconds"], 1e-9), 2)
        print(
            f"| {name} | {row['files']} | {row['megabytes']} | {row['parse_mb_per_s']} | "
            f"{query_speed} | {row['chunk_mb_per_s']} | {row['chunks_per_s']} | "
            f"{row['chunking_vs_parse_speed']} |"
        )
    print(f"written {RESULTS}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
