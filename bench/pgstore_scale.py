"""Shared team index at scale: a ≥1M-chunk synthetic tree bulk-loaded into Postgres.

    nice python bench/pgstore_scale.py --chunks 1000000 [--keep DIR]

`bench/pgstore.py` publishes through the real `Publisher` (tree-sitter chunking, embedding,
rows) and measures the local store beside it; at 1M chunks that path spends most of an
hour in Python on this 2-core machine before the database does anything. This benchmark
measures the database side at 1M: the same synthetic tree (`pgstore.build_tree`), its
chunks generated directly (`file_chunks`, checked equal to the chunker's on a sample of
files, so the rows are the ones a publish writes), hash-embedded (384 dims), loaded with
the publisher's own `copy_chunk_rows` (COPY), the secondary indexes and the HNSW index
built after loading with `maintenance_work_mem` raised. Each phase is timed. Then the
client: a `CodeBase` with `store` set on a clean checkout of the tree (so every result comes
from the database) answers the same questions as `pgstore.py`, the whole hybrid pipeline
and each arm alone,.

With `--keep DIR` the tree and the database stay in DIR, and a later run with `--reuse`
only measures queries (to compare query-side changes on the same data).
Writes bench/results/pgstore-scale-<chunks>.json.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from common import CACHE_DIR, latency_summary, read_result, write_result
from pgstore import (
    FUNCTIONS_PER_FILE,
    WARM_UP_QUESTIONS,
    WARM_UP_SEED,
    arms_reader,
    build_tree,
    git,
    pg_server,
    pg_size,
    questions,
)

from codeqa_lsp.chunking.model import Chunk

# Memory for the one-pass HNSW build: pgvector keeps the graph in memory while it fits,
# ~2 KB per 384-dim vector with m=16 (2.2 GB at 1.1M); past it the build slows sharply.
BUILD_MEMORY = "4GB"
LOAD_BATCH = 20_000
# The server's buffer cache. pgserver starts Postgres with its default, 128 MB, which holds
# a tenth of the 1.2 GB of chunk rows at 1.1M chunks: every text query then copies ~26k
# pages in from the OS cache (p95 451 ms against 272 ms with 6 GB, same code, same run of
# questions; BENCHMARKS.md). A team's server is configured for its data; PostgreSQL's own
# guidance starts at a quarter of the RAM (this machine: 24 GB).
SHARED_BUFFERS = "6GB"
_DEF = re.compile(r"^def (\w+)\(", re.MULTILINE)


def file_chunks(rel: str, text: str) -> list[Chunk]:
    """The chunker's chunks of one `build_tree` module, without parsing it (checked equal to
    `chunk_source` on a sample in `run`)."""
    first = text.index("\n")
    out = [
        Chunk(
            path=rel,
            symbol="<module>",
            kind="module",
            language="python",
            start_line=1,
            end_line=1,
            start_byte=0,
            end_byte=first + 1,
            text=text[:first],
        )
    ]
    for match in _DEF.finditer(text):
        start = match.start()
        end = text.find("\n\n", start)
        end = len(text.rstrip("\n")) if end < 0 else end
        body = text[start:end]
        lines = body.split("\n")
        line = text.count("\n", 0, start) + 1
        out.append(
            Chunk(
                path=rel,
                symbol=match.group(1),
                kind="function",
                language="python",
                start_line=line,
                end_line=line + len(lines) - 1,
                start_byte=start,
                end_byte=end,
                text=body,
                signature=lines[0],
                doc=lines[1].strip().strip('"'),
            )
        )
    return out


def load(url: str, root: Path, commit: str, out: dict[str, Any], save: Any) -> None:
    """Load the tree's rows, then build the indexes; `save()` after each phase, so a run
    stopped during the long HNSW build still reports what it measured."""
    import psycopg

    from codeqa_lsp.config import Settings
    from codeqa_lsp.index.embedders.hashing import HashEmbedder
    from codeqa_lsp.index.pg.publish import (
        chunk_row,
        copy_chunk_rows,
        spaces_for,
        workspace_identity,
    )
    from codeqa_lsp.index.pg.schema import (
        SCHEMA,
        ensure_space,
        ensure_vector_index,
        migrate,
        refresh_term_stats,
    )

    embedder = HashEmbedder()
    settings = Settings(embedder="hash")
    space, chunking = spaces_for(embedder, settings)
    paths = sorted(p.relative_to(root).as_posix() for p in root.glob("pkg*/*.py"))
    phases: dict[str, float] = {}
    with psycopg.connect(url, autocommit=True) as conn:
        migrate(conn)
        # Secondary indexes are built after the load (one sort each, not 1M insertions).
        for name in ("chunks_tsv", "chunks_name", "chunks_label", "chunks_embed_hash"):
            conn.execute(f"DROP INDEX IF EXISTS {SCHEMA}.{name}")
        space_id = ensure_space(conn, space, embedder.dim)
        repo_id = conn.execute(
            f"INSERT INTO {SCHEMA}.repos(identity) VALUES (%s) RETURNING id",
            (workspace_identity(root),),
        ).fetchone()[0]  # type: ignore[index]
        snapshot_id = conn.execute(
            f"INSERT INTO {SCHEMA}.snapshots(repo_id, commit, ref, space_id, chunking) "
            "VALUES (%s, %s, 'main', %s, %s) RETURNING id",
            (repo_id, commit, space_id, chunking),
        ).fetchone()[0]  # type: ignore[index]
        started = time.monotonic()
        python_seconds = 0.0
        total = 0
        batch: list[tuple[Any, ...]] = []
        files: list[tuple[int, str, str]] = []

        def flush() -> None:
            with conn.transaction():
                copy_chunk_rows(conn, batch)
                with conn.cursor() as cur:
                    cur.executemany(
                        f"INSERT INTO {SCHEMA}.snapshot_files VALUES (%s, %s, %s)", files
                    )
            batch.clear()
            files.clear()

        for rel in paths:
            t = time.monotonic()
            data = (root / rel).read_bytes()
            sha = hashlib.sha256(data).hexdigest()
            chunks = file_chunks(rel, data.decode())
            vectors = embedder.embed([c.embed_text() for c in chunks])
            batch.extend(
                chunk_row(repo_id, space_id, sha, c, v)
                for c, v in zip(chunks, vectors, strict=True)
            )
            files.append((snapshot_id, rel, sha))
            python_seconds += time.monotonic() - t
            total += len(chunks)
            if len(batch) >= LOAD_BATCH:
                flush()
                print(f"loaded {total} chunks, {time.monotonic() - started:.0f}s", flush=True)
        if batch:
            flush()
        phases["load_rows"] = time.monotonic() - started
        phases["load_python"] = python_seconds
        conn.execute(
            f"UPDATE {SCHEMA}.snapshots SET state = 'ready', files = %s, chunks = %s, "
            "published_at = now() WHERE id = %s",
            (len(paths), total, snapshot_id),
        )
        t = time.monotonic()
        migrate(conn)  # recreates the dropped secondary indexes (GIN over tsv, btrees)
        phases["secondary_indexes"] = time.monotonic() - t
        print("secondary indexes", round(phases["secondary_indexes"]), flush=True)
        out["postgres"] = {
            "chunks": total,
            "files": len(paths),
            "phases_seconds": dict(phases),
            "bytes_before_hnsw": sum(pg_size(url).values()),
        }
        save()
        conn.execute(f"SET maintenance_work_mem = '{BUILD_MEMORY}'")
        t = time.monotonic()
        out["hnsw_build_started"] = time.time()
        save()
        ensure_vector_index(conn, space_id, repo_id, embedder.dim)
        phases["hnsw_build"] = time.monotonic() - t
        print("hnsw", round(phases["hnsw_build"]), flush=True)
        t = time.monotonic()
        refresh_term_stats(conn, repo_id, space_id)  # as every publish does (the IDF)
        phases["term_stats"] = time.monotonic() - t
        t = time.monotonic()
        conn.execute(f"ANALYZE {SCHEMA}.chunks")
        conn.execute(f"ANALYZE {SCHEMA}.snapshot_files")
        conn.execute(f"VACUUM {SCHEMA}.chunks")
        phases["analyze_vacuum"] = time.monotonic() - t
    sizes = pg_size(url)
    out["postgres"] = {
        "chunks": total,
        "files": len(paths),
        "phases_seconds": {k: round(v, 1) for k, v in phases.items()},
        "load_chunks_per_second": round(total / phases["load_rows"], 1),
        "chunks_per_second_with_indexes": round(
            total / (phases["load_rows"] + phases["secondary_indexes"] + phases["hnsw_build"]), 1
        ),
        "bytes": sum(sizes.values()),
        "tables": sizes,
        "index_bytes": index_sizes(url),
    }
    print("postgres", out["postgres"], flush=True)
    save()


def index_sizes(url: str) -> dict[str, int]:
    import psycopg

    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT c.relname, pg_relation_size(c.oid) FROM pg_class c JOIN pg_namespace n "
            "ON n.oid = c.relnamespace WHERE n.nspname = 'codeqa' AND c.relkind = 'i'"
        ).fetchall()
    return {name: int(size) for name, size in rows}


def measure_queries(
    url: str, root: Path, words: list[str], out: dict[str, Any], quick: bool
) -> None:
    from codeqa_lsp.config import Settings
    from codeqa_lsp.engine import CodeBase
    from codeqa_lsp.index.embedders.hashing import HashEmbedder

    settings = Settings(embedder="hash")
    index_dir = root.parent / "overlay-index"
    shutil.rmtree(index_dir, ignore_errors=True)
    shared = CodeBase(root, settings.replace(index_dir=str(index_dir), store=url))
    report = shared.index()
    out["client_index"] = {
        "chunks_total": report.chunks_total,
        "notice": report.notice,
        "seconds": round(report.seconds, 2),
    }
    snapshot = shared.indexer.shared  # type: ignore[attr-defined]
    if snapshot is None:
        raise SystemExit(f"the client did not open the snapshot: {report.notice}")
    qs = questions(words)[: 40 if quick else 200]
    embedder = HashEmbedder()
    # Warm-up questions of their own (`pgstore.WARM_UP_QUESTIONS`); they also bring the HNSW
    # graph's visited pages into the cache (`warm_cache` reads the rows).
    for q in questions(words, seed=WARM_UP_SEED)[:WARM_UP_QUESTIONS]:
        shared.search(q)
    arms = arms_reader(snapshot)
    times: dict[str, list[float]] = {"postgres": [], "pg_bm25": [], "pg_dense": []}
    for q in qs:
        t = time.perf_counter()
        shared.search(q)
        times["postgres"].append(time.perf_counter() - t)
        t = time.perf_counter()
        arms.bm25(q, 100)
        times["pg_bm25"].append(time.perf_counter() - t)
        vector = embedder.embed([q])[0]
        t = time.perf_counter()
        arms.dense_by_vector(vector, 50)
        times["pg_dense"].append(time.perf_counter() - t)
    out["query"] = {name: latency_summary(values) for name, values in times.items()}
    out["load_during_queries"] = os.getloadavg()
    print("query", out["query"], flush=True)
    arms.close()
    shared.close()


def start_server(data: Path, keep: bool, shared_buffers: str) -> tuple[Any, str]:
    """The pgserver Postgres in `data`, restarted once if its buffer cache is not the size
    asked for (the setting takes effect at start only)."""
    import psycopg

    for attempt in range(2):
        server, url = pg_server(data, "stop" if keep else "delete")
        with psycopg.connect(url, autocommit=True) as conn:
            current = conn.execute("SHOW shared_buffers").fetchone()[0]  # type: ignore[index]
            if current.lower() == shared_buffers.lower() or attempt:
                return server, url
            conn.execute(f"ALTER SYSTEM SET shared_buffers = '{shared_buffers}'")
        server._cleanup()
    raise AssertionError("unreachable")


def warm_cache(url: str) -> None:
    """Read the chunk rows and the snapshot's file list once, as a server that has been
    answering for a while holds them (the first queries after a restart pay the reads).
    Through an index scan: a sequential scan of a large table reads through a small ring of
    buffers and leaves the cache as cold as it found it."""
    import psycopg

    from codeqa_lsp.index.pg.schema import SCHEMA

    with psycopg.connect(url, autocommit=True) as conn:
        t = time.monotonic()
        for setting in ("enable_seqscan", "enable_bitmapscan", "enable_indexonlyscan"):
            conn.execute(f"SET {setting} = off")
        for table, key in (("chunks", "pk"), ("snapshot_files", "snapshot_id")):
            conn.execute(f"SELECT count(path) FROM {SCHEMA}.{table} WHERE {key} IS NOT NULL")
        print(f"cache warmed in {time.monotonic() - t:.0f}s", flush=True)


def run(
    chunks: int,
    quick: bool,
    keep: Path | None,
    reuse: bool,
    name: str,
    shared_buffers: str = SHARED_BUFFERS,
) -> dict[str, Any]:

    from codeqa_lsp.chunking.chunker import chunk_source
    from codeqa_lsp.config import Settings

    base = keep or Path(
        tempfile.mkdtemp(prefix="pgscale-", dir=CACHE_DIR if CACHE_DIR.exists() else None)
    )
    base.mkdir(parents=True, exist_ok=True)
    out: dict[str, Any] = {"chunks_target": chunks, "load_before": os.getloadavg()}
    root = base / "tree"
    files = max(1, chunks // FUNCTIONS_PER_FILE)
    try:
        if not reuse:
            shutil.rmtree(root, ignore_errors=True)
            shutil.rmtree(base / "pgdata", ignore_errors=True)
            t = time.monotonic()
            words = build_tree(root, files)
            for rel in sorted(p.relative_to(root).as_posix() for p in root.rglob("*.py"))[:200]:
                text = (root / rel).read_text()
                assert file_chunks(rel, text) == chunk_source(
                    rel, text, language=None, max_tokens=Settings().chunk_tokens
                ), rel
            git(root, "init", "-q", "-b", "main")
            git(root, "remote", "add", "origin", "https://example.com/bench/synthetic-scale.git")
            git(root, "add", "-A")
            git(root, "commit", "-qm", "tree")
            out["tree_seconds"] = round(time.monotonic() - t, 1)
        else:
            import random

            from pgstore import _words

            words = _words(random.Random(17))
        commit = os.popen(f"git -C {root} rev-parse HEAD").read().strip()
        server, url = start_server(base / "pgdata", keep is not None, shared_buffers)
        out["shared_buffers"] = shared_buffers
        if not reuse:
            load(url, root, commit, out, lambda: write_result(name, out, quick))
        else:
            # Query-side changes re-measured on the kept database keep the load phases measured.
            earlier = read_result(name) or {}
            out["postgres"] = earlier.get("postgres") or {"bytes": sum(pg_size(url).values())}
            out["queries_remeasured"] = True
        warm_cache(url)
        measure_queries(url, root, words, out, quick)
        out["load_after"] = os.getloadavg()
        if not keep:
            server._cleanup()
    finally:
        if not keep:
            shutil.rmtree(base, ignore_errors=True)
    return out


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=1_000_000)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--keep", type=Path, help="keep the tree and database in this directory")
    parser.add_argument("--reuse", action="store_true", help="measure queries on a kept database")
    parser.add_argument(
        "--tag", default="", help="suffix for the result name (query-side variants)"
    )
    parser.add_argument("--shared-buffers", default=SHARED_BUFFERS, help="Postgres buffer cache")
    args = parser.parse_args(argv)
    name = f"pgstore-scale-{args.chunks}{args.tag}"
    doc = run(args.chunks, args.quick, args.keep, args.reuse, name, args.shared_buffers)
    print(write_result(name, doc, args.quick))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
