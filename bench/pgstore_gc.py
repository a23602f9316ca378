"""Shared index with many snapshots: dense recall and garbage collection (issue 17).

    python bench/pgstore_gc.py [--files 400 --commits 30 --hot 20]

The HNSW index of a repository holds every stored version of its files; a query keeps
only the rows of its snapshot after the index scan (`SharedSnapshot.dense_by_vector`).
The worst case is a file edited in every commit: its old versions are near-duplicates of
the current one and crowd the candidates of any query about it. This publishes a synthetic
tree (`pgstore.build_tree`), then `--commits` commits that each touch every function of
the same `--hot` files, all through the real `Publisher` with collection off, and measures
recall@50 of the dense arm of the newest snapshot against the exact nearest rows of that
snapshot (a sequential scan), for questions about the hot files and about the rest:

* before collection, one pass of EF_SEARCH candidates (no widening);
* before collection, with the second, wider pass (what the reader does);
* after collection with the default retention (`gc.KEEP_SNAPSHOTS`) and with keep=3.

Writes bench/results/pgstore-gc.json.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from common import CACHE_DIR, latency_summary, write_result
from pgstore import build_tree, git, pg_server, pg_size

K = 50


def _questions(root: Path, hot: list[str], cold: list[str], n: int) -> dict[str, list[str]]:
    rng = random.Random(3)

    def from_files(paths: list[str]) -> list[str]:
        out = []
        for _ in range(n):
            lines = [
                line
                for line in (root / rng.choice(paths)).read_text().splitlines()
                if line.startswith('    """')
            ]
            words = rng.choice(lines).strip().strip('."').lower().split()
            out.append("where do we " + " ".join(rng.sample(words, 3)))
        return out

    return {"hot": from_files(hot), "cold": from_files(cold)}


def _exact(url: str, snapshot: Any, vector: Any) -> list[str]:
    import psycopg

    from codeqa_lsp.index.pg.rows import vector_literal

    cast = f"vector({snapshot.dim})"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SET enable_indexscan = off")
        rows = conn.execute(
            f"SELECT c.id FROM codeqa.chunks c WHERE {snapshot._scope} "
            f"ORDER BY c.embedding::{cast} <=> %s::{cast} LIMIT {K}",
            (vector_literal(vector),),
        ).fetchall()
    return [r[0] for r in rows]


def _measure(
    url: str, snapshot: Any, qs: dict[str, list[str]], truth: dict[str, list[list[str]]]
) -> dict[str, Any]:
    from codeqa_lsp.index.embedders.hashing import HashEmbedder

    embedder = HashEmbedder()
    out: dict[str, Any] = {}
    for kind, questions in qs.items():
        recalls, times = [], []
        widened = snapshot.widened
        for question, exact in zip(questions, truth[kind], strict=True):
            vector = embedder.embed([question])[0]
            t = time.perf_counter()
            got = [c.id for c, _ in snapshot.dense_by_vector(vector, K)]
            times.append(time.perf_counter() - t)
            recalls.append(len(set(got) & set(exact)) / max(1, len(exact)))
        out[kind] = {
            "recall_at_50": round(sum(recalls) / len(recalls), 4),
            "widened": snapshot.widened - widened,
            **latency_summary(times),
        }
    return out


def run(files: int, commits: int, hot_files: int, questions_per_kind: int) -> dict[str, Any]:
    import psycopg

    from codeqa_lsp.config import Settings
    from codeqa_lsp.index.embedders.hashing import HashEmbedder
    from codeqa_lsp.index.pg import gc
    from codeqa_lsp.index.pg import snapshot as snapshot_module
    from codeqa_lsp.index.pg.publish import Publisher, spaces_for, workspace_identity
    from codeqa_lsp.index.pg.snapshot import open_snapshot

    work = Path(tempfile.mkdtemp(prefix="pggc-", dir=CACHE_DIR if CACHE_DIR.exists() else None))
    out: dict[str, Any] = {
        "files": files,
        "commits": commits,
        "hot_files": hot_files,
        "load_before": os.getloadavg(),
    }
    try:
        root = work / "tree"
        build_tree(root, files)
        git(root, "init", "-q", "-b", "main")
        git(root, "remote", "add", "origin", "https://example.com/bench/synthetic-gc.git")
        git(root, "add", "-A")
        git(root, "commit", "-qm", "tree")
        server, url = pg_server(work / "pgdata")
        settings = Settings(embedder="hash")

        def publish(keep: int) -> Any:
            return Publisher(
                url, root, settings, embedder=HashEmbedder(), keep=keep, grace=timedelta(0)
            ).publish("main")

        publish(10_000)
        paths = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.py"))
        hot = paths[:hot_files]
        started = time.monotonic()
        for n in range(commits):
            for rel in hot:
                path = root / rel
                path.write_text(
                    path.read_text().replace("\n    return", f"\n    _ = {n}\n    return")
                    if n == 0
                    else path.read_text().replace(f"_ = {n - 1}\n", f"_ = {n}\n")
                )
            git(root, "commit", "-qam", f"c{n}")
            publish(10_000)
        out["incremental_publish_seconds_mean"] = round((time.monotonic() - started) / commits, 2)
        space, chunking = spaces_for(HashEmbedder(), settings)
        head = git_head(root)
        snap = open_snapshot(
            url, repo=workspace_identity(root), space=space, chunking=chunking, commits=[head]
        )
        assert snap is not None
        qs = _questions(root, hot, paths[hot_files:], questions_per_kind)
        embedder = HashEmbedder()
        truth = {
            kind: [_exact(url, snap, embedder.embed([q])[0]) for q in questions]
            for kind, questions in qs.items()
        }

        def rows() -> dict[str, int]:
            with psycopg.connect(url) as conn:
                total = conn.execute("SELECT count(*) FROM codeqa.chunks").fetchone()[0]
            return {"rows_in_repository": int(total), "rows_in_snapshot": snap.chunk_count()}

        out["before_gc"] = {**rows(), "bytes": sum(pg_size(url).values())}
        snapshot_module.DENSE_WIDEN = 1  # one pass only: what the reader did before
        out["before_gc"]["one_pass"] = _measure(url, snap, qs, truth)
        snapshot_module.DENSE_WIDEN = 4
        out["before_gc"]["widening"] = _measure(url, snap, qs, truth)
        print("before", out["before_gc"], flush=True)
        for keep in (gc.KEEP_SNAPSHOTS, 3):
            with psycopg.connect(url, autocommit=True) as conn:
                t = time.monotonic()
                collected = gc.collect_garbage(conn, snap.repo_id, keep=keep, grace=timedelta(0))
                seconds = time.monotonic() - t
                conn.execute("VACUUM codeqa.chunks")
            out[f"after_gc_keep_{keep}"] = {
                **rows(),
                "bytes": sum(pg_size(url).values()),
                "collect_seconds": round(seconds, 2),
                "collected": vars(collected),
                "measure": _measure(url, snap, qs, truth),
            }
            print("keep", keep, out[f"after_gc_keep_{keep}"], flush=True)
        out["load_after"] = os.getloadavg()
        snap.close()
        server._cleanup()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return out


def git_head(root: Path) -> str:
    return os.popen(f"git -C {root} rev-parse HEAD").read().strip()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=400)
    parser.add_argument("--commits", type=int, default=30)
    parser.add_argument("--hot", type=int, default=20)
    parser.add_argument("--questions", type=int, default=50)
    args = parser.parse_args(argv)
    doc = run(args.files, args.commits, args.hot, args.questions)
    print(write_result("pgstore-gc", doc, False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
