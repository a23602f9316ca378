"""The four evaluation trees (rxjs, click, requests, express) in one shared index.

    python bench/pgstore_trees.py

Each pinned corpus (`bench/corpora.py`, fetched from the registries) is copied into a git
repository of its own (one commit, an origin remote per tree) and published through the
real `Publisher` into one PostgreSQL database: four repositories side by side, as a team
would hold them. The same tree is indexed locally (`CodeBase.index`) in the same run. Then,
over the set's questions, the whole hybrid search runs on both: a client with `store` set
on the clean checkout (every result from the database) and the local index; reported are
p50/p95 latency, hit@5 by file (an expected file among the top 5) on each side, and how
often the two top-5 file lists agree. Hash embedder (384 dims). Writes
bench/results/pgstore-trees.json.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from common import CACHE_DIR, dir_size_bytes, latency_summary, write_result
from corpora import QUESTIONS_DIR, SETS, corpus_root, corpus_settings
from pgstore import git, pg_server, pg_size


def _tree(name: str, work: Path) -> Path:
    root = work / name
    shutil.copytree(corpus_root(name), root, ignore=shutil.ignore_patterns("node_modules", ".git"))
    git(root, "init", "-q", "-b", "main")
    git(root, "remote", "add", "origin", f"https://example.com/corpora/{name}.git")
    git(root, "add", "-A")
    git(root, "commit", "-qm", name)
    return root


def run() -> dict[str, Any]:

    from codeqa_lsp.config import Settings
    from codeqa_lsp.engine import CodeBase
    from codeqa_lsp.index.embedders.hashing import HashEmbedder
    from codeqa_lsp.index.pg.publish import Publisher

    work = Path(tempfile.mkdtemp(prefix="pgtrees-", dir=CACHE_DIR if CACHE_DIR.exists() else None))
    out: dict[str, Any] = {"load_before": os.getloadavg(), "trees": {}}
    try:
        server, url = pg_server(work / "pgdata")
        for name in SETS:
            root = _tree(name, work)
            settings = Settings(embedder="hash").replace(**corpus_settings(name))
            t = time.monotonic()
            published = Publisher(url, root, settings, embedder=HashEmbedder()).publish("main")
            pg_seconds = time.monotonic() - t
            local_dir = work / f"{name}-local"
            t = time.monotonic()
            local = CodeBase(root, settings.replace(index_dir=str(local_dir)))
            indexed = local.index()
            local_seconds = time.monotonic() - t
            shared = CodeBase(
                root, settings.replace(index_dir=str(work / f"{name}-client"), store=url)
            )
            client = shared.index()
            assert client.notice is None, client.notice
            questions = [
                json.loads(line)
                for line in (QUESTIONS_DIR / f"{name}.jsonl").read_text().splitlines()
                if line.strip()
            ]
            for q in questions[:3]:
                local.search(q["question"])
                shared.search(q["question"])
            times: dict[str, list[float]] = {"local": [], "postgres": []}
            hits = {"local": 0, "postgres": 0}
            agree = 0
            for q in questions:
                expected = {e["path"] for e in q["expected"]}
                tops: dict[str, list[str]] = {}
                for side, ws in (("local", local), ("postgres", shared)):
                    t = time.perf_counter()
                    response = ws.search(q["question"])
                    times[side].append(time.perf_counter() - t)
                    tops[side] = list(dict.fromkeys(h.chunk.path for h in response.hits))[:5]
                    hits[side] += bool(expected & set(tops[side]))
                agree += tops["local"] == tops["postgres"]
            out["trees"][name] = {
                "chunks": published.chunks_total,
                "files": published.files_seen,
                "publish_seconds": round(pg_seconds, 2),
                "publish_chunks_per_second": round(published.chunks_total / pg_seconds, 1),
                "local_chunks": indexed.chunks_total,
                "local_seconds": round(local_seconds, 2),
                "local_chunks_per_second": round(indexed.chunks_total / local_seconds, 1),
                "local_bytes": dir_size_bytes(local_dir),
                "questions": len(questions),
                "hit_at_5_files": {side: round(n / len(questions), 3) for side, n in hits.items()},
                "same_top5_files": round(agree / len(questions), 3),
                "query": {side: latency_summary(values) for side, values in times.items()},
            }
            print(name, out["trees"][name], flush=True)
            shared.close()
            local.close()
        out["postgres_bytes"] = sum(pg_size(url).values())
        out["load_after"] = os.getloadavg()
        server._cleanup()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return out


def main(argv: list[str]) -> int:
    print(write_result("pgstore-trees", run(), False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
