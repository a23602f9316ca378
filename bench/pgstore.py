"""Shared team index (issue 17): Postgres + pgvector next to the local store.

    python bench/pgstore.py --chunks 100000           # one size
    python bench/pgstore.py --chunks 20000 --quick    # a smoke run

On a synthetic tree (seeded; `--chunks` / 10 Python files of ten functions each, words
from a fixed 2,000-word vocabulary so BM25 sees realistic posting lists) with the hash
embedder (384 dims), one run measures, side by side in the same process and load:

* full index: the local store (`Indexer.index`) and a publish to Postgres (`Publisher`),
  chunks per second and size on disk (index directory; `pg_total_relation_size` of the
  tables with their indexes);
* incremental publish of a next commit where 1% of the files changed;
* hybrid query latency (`CodeBase.search`, the whole retrieval pipeline) p50/p95 over the
  same questions, alternating local / shared so load changes hit both equally; plus the
  Postgres arms alone (ts_rank BM25, HNSW dense).

The Postgres server is the `pgserver` wheel's (PostgreSQL 16, pgvector 0.6), default
configuration, on a Unix socket. Writes bench/results/pgstore-<chunks>.json.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from common import CACHE_DIR, dir_size_bytes, latency_summary, write_result

FUNCTIONS_PER_FILE = 10
VOCABULARY = 2000
QUESTIONS = 200


def _words(rng: random.Random) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    return sorted(
        {"".join(rng.choice(letters) for _ in range(rng.randint(4, 9))) for _ in range(VOCABULARY)}
    )


def build_tree(root: Path, files: int, seed: int = 17) -> list[str]:
    """`files` modules under 100 packages; returns the vocabulary (for the questions)."""
    rng = random.Random(seed)
    words = _words(rng)
    for i in range(files):
        lines = [f'"""Module {i}: {" ".join(rng.sample(words, 6))}."""\n']
        for j in range(FUNCTIONS_PER_FILE):
            a, b, c = rng.sample(words, 3)
            body = " + ".join(rng.sample(words, 5))
            lines.append(
                f"\ndef {a}_{b}_{i}_{j}({c}, {rng.choice(words)}):\n"
                f'    """{" ".join(rng.sample(words, 8)).capitalize()}."""\n'
                f"    {c} = {body}\n"
                f"    return {c}\n"
            )
        path = root / f"pkg{i % 100}" / f"mod{i}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(lines))
    return words


def git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(root), "-c", "user.name=b", "-c", "user.email=b@example.com", *args],
        check=True,
        capture_output=True,
    )


def pg_server(data: Path, cleanup_mode: str = "delete") -> tuple[Any, str]:
    """pgserver's PostgreSQL in `data` with pgvector, and the URL of its socket."""
    import pgserver

    server = pgserver.get_server(data, cleanup_mode=cleanup_mode)
    socket_dir = server.get_uri().split("host=", 1)[1].split("&", 1)[0]
    server.psql("CREATE EXTENSION IF NOT EXISTS vector;")
    return server, f"postgresql://postgres@/postgres?host={socket_dir}"


# Questions asked before timing, from another seed than the timed ones: a reader keeps
# each term list's candidates (`pg/text_arm.py`), so a timed question asked during the
# warm-up would time a kept answer. 100: after a restart the first ~100 searches at 1.1M
# chunks still read HNSW pages (dense arm p50 28 ms, then 14).
WARM_UP_QUESTIONS = 100
WARM_UP_SEED = 6


def arms_reader(snapshot: Any) -> Any:
    """A reader of the same snapshot as the searcher's, for timing the arms alone: on the
    searcher's own, the text arm would serve the question from what its search just kept."""
    from codeqa_lsp.index.pg.snapshot import SharedSnapshot

    return SharedSnapshot(
        snapshot.url,
        repo_id=snapshot.repo_id,
        space_id=snapshot.space_id,
        dim=snapshot.dim,
        snapshot_id=snapshot.snapshot_id,
        commit=snapshot.commit,
    )


def questions(words: list[str], seed: int = 5) -> list[str]:
    rng = random.Random(seed)
    return [f"where do we {' '.join(rng.sample(words, 3))}" for _ in range(QUESTIONS)]


def pg_size(url: str) -> dict[str, int]:
    import psycopg

    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT c.relname, pg_total_relation_size(c.oid) FROM pg_class c JOIN pg_namespace n "
            "ON n.oid = c.relnamespace WHERE n.nspname = 'codeqa' AND c.relkind = 'r'"
        ).fetchall()
    return {name: int(size) for name, size in rows}


def run(chunks: int, quick: bool) -> dict[str, Any]:

    from codeqa_lsp.config import Settings
    from codeqa_lsp.engine import CodeBase
    from codeqa_lsp.index.embedders.hashing import HashEmbedder
    from codeqa_lsp.index.pg.publish import Publisher

    work = Path(tempfile.mkdtemp(prefix="pgstore-", dir=CACHE_DIR if CACHE_DIR.exists() else None))
    out: dict[str, Any] = {"chunks_target": chunks, "load_before": os.getloadavg()}
    try:
        root = work / "tree"
        files = max(1, chunks // FUNCTIONS_PER_FILE)
        words = build_tree(root, files)
        git(root, "init", "-q", "-b", "main")
        git(root, "remote", "add", "origin", "https://example.com/bench/synthetic.git")
        git(root, "add", "-A")
        git(root, "commit", "-qm", "tree")

        server, url = pg_server(work / "pgdata")

        settings = Settings(embedder="hash")
        local_dir = work / "local-index"
        started = time.monotonic()
        local = CodeBase(root, settings.replace(index_dir=str(local_dir)))
        report = local.index()
        local_seconds = time.monotonic() - started
        out["local"] = {
            "chunks": report.chunks_total,
            "seconds": round(local_seconds, 2),
            "chunks_per_second": round(report.chunks_total / local_seconds, 1),
            "bytes": dir_size_bytes(local_dir),
        }
        print("local", out["local"], flush=True)

        started = time.monotonic()
        published = Publisher(url, root, settings, embedder=HashEmbedder()).publish("main")
        seconds = time.monotonic() - started
        sizes = pg_size(url)
        out["postgres"] = {
            "chunks": published.chunks_total,
            "seconds": round(seconds, 2),
            "chunks_per_second": round(published.chunks_total / seconds, 1),
            "bytes": sum(sizes.values()),
            "tables": sizes,
        }
        print("postgres", out["postgres"], flush=True)

        # Next commit: 1% of the files changed (one function each).
        changed = max(1, files // 100)
        for i in range(changed):
            path = root / f"pkg{i % 100}" / f"mod{i}.py"
            path.write_text(path.read_text().replace("    return", "    # changed\n    return", 1))
        git(root, "commit", "-qam", "next")
        started = time.monotonic()
        again = Publisher(url, root, settings, embedder=HashEmbedder()).publish("main")
        out["postgres_incremental"] = {
            "files_changed": changed,
            "files_written": again.files_written,
            "embedded": again.embedded,
            "reused": again.reused,
            "seconds": round(time.monotonic() - started, 2),
        }
        print("incremental", out["postgres_incremental"], flush=True)
        local.index()  # the local store follows the same commit

        shared = CodeBase(root, settings.replace(index_dir=str(work / "overlay-index"), store=url))
        shared.index()
        qs = questions(words)[: 40 if quick else QUESTIONS]
        for q in questions(words, seed=WARM_UP_SEED)[:WARM_UP_QUESTIONS]:  # both sides' caches
            local.search(q)
            shared.search(q)
        times: dict[str, list[float]] = {"local": [], "postgres": [], "pg_bm25": [], "pg_dense": []}
        snapshot = arms_reader(shared.indexer.shared)  # type: ignore[attr-defined]
        embedder = HashEmbedder()
        for q in qs:
            for name, ws in (("local", local), ("postgres", shared)):
                t = time.perf_counter()
                ws.search(q)
                times[name].append(time.perf_counter() - t)
            t = time.perf_counter()
            snapshot.bm25(q, 100)
            times["pg_bm25"].append(time.perf_counter() - t)
            vector = embedder.embed([q])[0]
            t = time.perf_counter()
            snapshot.dense_by_vector(vector, 50)
            times["pg_dense"].append(time.perf_counter() - t)
        out["query"] = {name: latency_summary(values) for name, values in times.items()}
        print("query", out["query"], flush=True)
        out["load_after"] = os.getloadavg()
        snapshot.close()
        shared.close()
        local.close()
        server._cleanup()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return out


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    doc = run(args.chunks, args.quick)
    print(write_result(f"pgstore-{args.chunks}", doc, args.quick))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
