"""BENCHMARKS.md section for the shared team index (`bench/pgstore.py` results)."""

from __future__ import annotations

import re
from typing import Any

from report_sections import machine_line

Doc = dict[str, Any]

SCALING = """\
How it scales past one machine, from what these runs show:

- **Sizes, measured at 1.1M chunks**: 5.4 KB a chunk on disk in all (5.9 GB), of which the
  HNSW index is 2.0 KB (2.25 GB: ~2 KB a 384-dim vector, which should stay in memory) and the
  GIN index 0.14 KB (158 MB). On a quiet 2-core machine the database side of a first publish
  of 1.1M chunks took 20 minutes: rows 237 s (150 s of it Python), GIN and btrees 20 s, the
  HNSW build 927 s (pgvector's parallel build, ~1,200 vectors/s). At 110k chunks with the
  machine at load 8 the same phases took 373, 15 and 369 s. After that first publish only
  incremental publishes follow (seconds per commit).

- **Reads scale out with read replicas.** A client only reads (a read-only role and
  read-only connections), and a query touches one repository's HNSW index and the GIN index
  of the tokens. Streaming replicas behind a connection pooler (pgBouncer) or a managed
  service's reader endpoint add query capacity linearly; a replica that lags only serves a
  slightly older snapshot, which the overlay already handles (the local index covers what
  differs from the snapshot it reads, whatever that snapshot is).
- **Partitioning by repository is already the layout.** Every row carries `repo_id`, and
  each (embedding space, repository) has its own partial HNSW index, so a query walks a graph
  the size of one repository, not of the whole database. Many repositories grow the database,
  not the cost of a query. Declarative partitioning of `chunks` by `repo_id` (LIST/HASH) is
  the next step when one table's maintenance (VACUUM, index builds) gets long.
- **Citus** shards `chunks` and `snapshot_files` by `repo_id` across workers
  (`create_distributed_table('codeqa.chunks', 'repo_id')`): every query filters on one
  `repo_id`, so it is routed to one shard with no cross-node join; the small `repos`,
  `spaces` and `snapshots` tables become reference tables.
- **Writes** are one publisher per repository (CI) and incremental: a commit that changes 1%
  of the files writes 1% of the chunks and embeds only texts never seen. The one-off cost is
  the first publish of a repository: rows load at the rate above, then its HNSW index is
  built in one pass (`maintenance_work_mem` must hold the graph, ~2 KB a 384-dim vector).
"""


def pgstore_section(docs: dict[str, Doc | None]) -> list[str]:
    runs = sorted(
        (doc for name, doc in docs.items() if re.fullmatch(r"pgstore-\d+", name) and doc),
        key=lambda doc: doc.get("chunks_target", 0),
    )
    lines = [
        "## Shared team index (PostgreSQL + pgvector)",
        "",
        "`bench/pgstore.py --chunks N`: a synthetic Python tree (N/10 files of ten functions, "
        "words from a 2,000-word vocabulary), hash embedder (384 dims), PostgreSQL 16 + "
        "pgvector 0.6 from the `pgserver` wheel with its default configuration. The local store "
        "and Postgres are measured in the same process, one after the other; queries alternate "
        "between them. *Hybrid* is the whole `CodeBase.search` pipeline (for Postgres: a "
        "client with `store` set and a clean checkout, so every result comes from the database).",
        "",
    ]
    if not runs:
        return [*lines, "_Not run._", "", SCALING]
    lines += [
        "| chunks | store | full index s | chunks/s | size MB | bytes/chunk | hybrid p50 ms | "
        "hybrid p95 ms |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for doc in runs:
        for store, key in (("local (SQLite + hnswlib)", "local"), ("postgres", "postgres")):
            built, query = doc.get(key) or {}, (doc.get("query") or {}).get(key) or {}
            chunks = built.get("chunks") or 0
            size = built.get("bytes") or 0
            lines.append(
                f"| {chunks} | {store} | {built.get('seconds', '?')} | "
                f"{built.get('chunks_per_second', '?')} | {size / 1e6:.0f} | "
                f"{size / chunks if chunks else 0:.0f} | {query.get('p50_ms', '?')} | "
                f"{query.get('p95_ms', '?')} |"
            )
    lines.append("")
    for doc in runs:
        query = doc.get("query") or {}
        bm25, dense = query.get("pg_bm25", {}), query.get("pg_dense", {})
        inc = doc.get("postgres_incremental") or {}
        lines += [
            f"At {doc.get('chunks_target')} chunks: Postgres arms alone p50/p95 - BM25 (ts_rank) "
            f"{bm25.get('p50_ms', '?')}/{bm25.get('p95_ms', '?')} ms, dense (HNSW) "
            f"{dense.get('p50_ms', '?')}/{dense.get('p95_ms', '?')} ms. Next commit with "
            f"{inc.get('files_changed', '?')} files changed: {inc.get('files_written', '?')} file "
            f"versions written, {inc.get('embedded', '?')} texts embedded, "
            f"{inc.get('reused', '?')} vectors reused, {inc.get('seconds', '?')} s. Load average "
            f"{_load(doc.get('load_before'))} before, {_load(doc.get('load_after'))} after.",
            "",
            machine_line(doc),
            "",
        ]
    return [
        *lines,
        *_trees_lines(docs.get("pgstore-trees")),
        *_scale_lines(docs),
        *_gc_lines(docs.get("pgstore-gc")),
        WHAT_FOLLOWS,
        SCALING,
    ]


def _trees_lines(doc: Doc | None) -> list[str]:
    """`bench/pgstore_trees.py`: the four question trees in one database."""
    lines = [
        "### The four question trees in one database (`bench/pgstore_trees.py`)",
        "",
        "Each tree a git repository of its own, published into one database (four repositories "
        "side by side) and indexed locally in the same run; the set's 25 questions through the "
        "whole hybrid search on both (hash embedder). *hit@5* = an expected file among the top 5.",
        "",
        "| tree | chunks | publish chunks/s | local chunks/s | local hit@5 | postgres hit@5 | "
        "local p50/p95 ms | postgres p50/p95 ms |",
        "|---|---|---|---|---|---|---|---|",
    ]
    if not doc:
        return [*lines, "_Not run._", ""]
    for name, tree in (doc.get("trees") or {}).items():
        hits, query = tree.get("hit_at_5_files") or {}, tree.get("query") or {}
        local, pg = query.get("local") or {}, query.get("postgres") or {}
        lines.append(
            f"| {name} | {tree.get('chunks')} | {tree.get('publish_chunks_per_second')} | "
            f"{tree.get('local_chunks_per_second')} | {hits.get('local')} | {hits.get('postgres')} "
            f"| {local.get('p50_ms')}/{local.get('p95_ms')} | "
            f"{pg.get('p50_ms')}/{pg.get('p95_ms')} |"
        )
    size = doc.get("postgres_bytes") or 0
    return [
        *lines,
        "",
        f"All four in one database: {size / 1e6:.0f} MB.",
        "",
        machine_line(doc),
        "",
    ]


def _scale_lines(docs: dict[str, Doc | None]) -> list[str]:
    """`bench/pgstore_scale.py`: the database side, bulk-loaded, phase by phase."""
    runs = sorted(
        (
            (name, doc)
            for name, doc in docs.items()
            if re.fullmatch(r"pgstore-scale-\d+(-baseline|-buffers\w+)?", name) and doc
        ),
        key=lambda item: (item[1].get("chunks_target", 0), item[0]),
    )
    lines = [
        "### Bulk load and HNSW build (`bench/pgstore_scale.py`)",
        "",
        "The same synthetic tree, its rows generated directly (checked equal to the chunker's on "
        "200 files), hash-embedded and loaded with the publisher's COPY path; secondary indexes "
        "and the HNSW index built after the load (`maintenance_work_mem` 4 GB). Queries from a "
        "client with `store` set on a clean checkout, on a warm server (`shared_buffers` "
        "6 GB, rows read once, 100 warm-up questions of their own). *baseline*: the same "
        "database, harness and run with the text arm as it was before the one-scan change "
        "(d0a69d6); *shared_buffers 128MB*: this change on the same database with "
        "PostgreSQL's default buffer cache. Phases in seconds (variants reuse the loaded "
        "database):",
        "",
        "| chunks | rows (COPY) s | of which Python s | GIN + btrees s | HNSW build s | size MB | "
        "hybrid p50/p95 ms | BM25 arm p50/p95 | dense arm p50/p95 | load avg |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    if not runs:
        return [*lines, "_Not run._", ""]
    for name, doc in runs:
        pg = doc.get("postgres") or {}
        variant = _variant(name, doc)
        # A variant re-measures queries on a database another run loaded: no load phases.
        phases = {} if variant else pg.get("phases_seconds") or {}
        query = doc.get("query") or {}

        def pair(name: str, query: Doc = query) -> str:
            arm = query.get(name) or {}
            return f"{arm.get('p50_ms', '?')}/{arm.get('p95_ms', '?')}"

        size = pg.get("bytes") or pg.get("bytes_before_hnsw") or 0
        lines.append(
            f"| {_chunks(docs, name)}"
            f"{variant} | "
            f"{_seconds(phases, 'load_rows')} | {_seconds(phases, 'load_python')} | "
            f"{_seconds(phases, 'secondary_indexes')} | {_seconds(phases, 'hnsw_build')} | "
            f"{size / 1e6:.0f} | {pair('postgres')} | {pair('pg_bm25')} | {pair('pg_dense')} | "
            f"{_load(doc.get('load_during_queries') or doc.get('load_before'))} |"
        )
    return [*lines, ""]


def _gc_lines(doc: Doc | None) -> list[str]:
    """`bench/pgstore_gc.py`: dense recall of the newest snapshot with many stored versions."""
    if not doc:
        return ["### Many snapshots: recall and garbage collection", "", "_Not run._", ""]
    before = doc.get("before_gc") or {}
    lines = [
        "### Many snapshots: recall and garbage collection",
        "",
        f"`bench/pgstore_gc.py`: {doc.get('files')} files, then {doc.get('commits')} commits that "
        f"each edit every function of the same {doc.get('hot_files')} files, all published "
        "(collection off). Dense recall@50 of the newest snapshot against its exact nearest rows "
        "(sequential scan), 50 questions about the edited (*hot*) files and 50 about the rest, "
        "then after `gc.collect_garbage`:",
        "",
        "| state | rows in repository / in snapshot | hot recall@50 | cold recall@50 | hot "
        "p50/p95 ms | cold p50/p95 ms | second passes |",
        "|---|---|---|---|---|---|---|",
    ]

    def row(label: str, state: Doc, measure: Doc) -> str:
        hot, cold = measure.get("hot") or {}, measure.get("cold") or {}
        return (
            f"| {label} | {state.get('rows_in_repository')} / {state.get('rows_in_snapshot')} | "
            f"{hot.get('recall_at_50')} | {cold.get('recall_at_50')} | "
            f"{hot.get('p50_ms')}/{hot.get('p95_ms')} | {cold.get('p50_ms')}/{cold.get('p95_ms')} "
            f"| {hot.get('widened', 0) + cold.get('widened', 0)} |"
        )

    lines.append(row("no collection, one pass", before, before.get("one_pass") or {}))
    lines.append(row("no collection, widening pass", before, before.get("widening") or {}))
    for key in sorted(k for k in doc if k.startswith("after_gc_keep_")):
        state = doc[key]
        collected = state.get("collected") or {}
        lines.append(
            row(
                f"collected, keep {key.rsplit('_', 1)[1]} ({collected.get('snapshots')} snapshots, "
                f"{collected.get('chunks')} rows, {state.get('collect_seconds')} s)",
                state,
                state.get("measure") or {},
            )
        )
    lines += ["", GC_FOLLOWS, machine_line(doc), ""]
    return lines


GC_FOLLOWS = """Stale versions cost recall in two ways. When too few candidates survive the snapshot
filter, the reader's second, 4x wider pass recovers them (*second passes*), but that is the
smaller part: most of the loss is the graph walk itself, whose `ef_search` candidates fill
up with near-duplicate old versions of the edited files. Collection is what fixes it (only
rows of the kept snapshots remain, so a query walks a graph of nearly only live rows), and
it is cheap (well under a second here; one snapshot's worth per publish). Retention: the
newest 10 snapshots per ref, nothing younger than a day (`pg/gc.py`); it runs at the end of
every publish. pgvector 0.8's iterative index scans (`hnsw.iterative_scan`) would replace
the second pass, but the `pgserver` wheel bundles 0.6.
"""


WHAT_FOLLOWS = """What follows (issue 17's target is hybrid p95 <= 100 ms at 1M chunks; **met on a
warm server**: at 1.1M chunks the whole hybrid search takes p50/p95 83/89 ms, against 242/265
ms for the text arm before the one-scan change, same database, harness and run - the
*baseline* row above):

- **Where the time goes at 1.1M chunks.** The text arm is one statement (`pg/text_arm.py`):
  it scores every row matching one of the query's words once (BM25 IDF x per-word
  `ts_rank`, the IDFs joined in from `term_stats` in the same statement), keeps the best
  candidates with their snapshot membership, and both the chunk ranking and the file
  ranking are read from that list; before, each was a statement of its own and each joined
  every match against the snapshot's file list (118 + 112 ms). That scan is now ~68 ms of
  the 83 and is the floor of this design: ~26k matching rows per question, ~28 ms of it
  heap page reads, ~13 ms unpacking `tsvector`s, ~8 ms `ts_rank`. Postgres's parallel
  workers and a narrower row did not lower it on 2 cores. The dense arm (HNSW) is 13 ms.
- **The server must hold its working set.** With pgserver's default 128 MB
  `shared_buffers` (a tenth of the 1.2 GB of chunk rows) every text scan copies its pages in
  from the OS cache: p95 451 ms instead of 272 with the code before this change (measured
  in an earlier session), 135 instead of 89 with this one (*shared_buffers 128MB*). The runs above
  use 6 GB (`ALTER SYSTEM SET shared_buffers`, a quarter of this machine's RAM, PostgreSQL's
  own starting guidance) and time a warm server (rows read once, 100 warm-up questions
  first); the first ~100 searches after a restart read HNSW pages (dense arm 28 ms instead
  of 14).
- **Against the local store** at the sizes it holds (22k and 110k chunks, same run):
  p95 33 and 39 ms against 7 and 11 ms. Every statement is a round trip and a plan, and a
  search sends four to six; the local store answers from memory-mapped SQLite and hnswlib
  in-process. Both stay far below what an editor user notices.
- **Publishing** runs at 0.65-0.9x the local indexing rate of the same tree in the same run;
  rows go in with COPY and the rate is Python-bound (tree-sitter, token streams,
  embedding): the database side of the bulk load is the smaller share (*of which Python*
  above).
- **Quality**: on the four question trees (one database holding all four repositories),
  the shared store finds an expected file in the top 5 less often than the local store
  (78 vs 88 of 100 questions; 77 before the file ranking was IDF-weighted). `ts_rank` is
  not BM25: it normalises length differently, and the whole-file ranking the searcher uses
  has no Postgres twin (a file's score is the sum of its best chunks'). The shared store
  trades some answer quality for not indexing locally; a BM25 index (ParadeDB `pg_search`)
  would give FTS5's ranking where a team's Postgres has it.
- **Next**, if a larger repository needs it: the scan is linear in the rows matching the
  query's words, so a query of common words over 10M chunks would take ~10x; bounding it to
  the rarest words (the IDF table holds what that needs) or a BM25 index with block-max
  pruning are the two ways down.
"""


def _chunks(docs: dict[str, Doc | None], name: str) -> Any:
    """Chunks a scale run measured; a variant re-measured on a kept database (`--tag`) has
    the count of the run that loaded it."""
    for doc in (docs.get(name), docs.get(re.sub(r"-[a-z]+$", "", name))):
        chunks = ((doc or {}).get("postgres") or {}).get("chunks")
        if chunks:
            return chunks
    return (docs.get(name) or {}).get("chunks_target")


def _variant(name: str, doc: Doc) -> str:
    """How a tagged re-measurement differs from the run that loaded the database."""
    if name.endswith("-baseline"):
        return " baseline"
    if "-buffers" in name:
        return f" shared_buffers {doc.get('shared_buffers')}"
    return ""


def _seconds(phases: Doc, name: str) -> str:
    """A load phase's seconds; `-` for a run that reused a loaded database (or stopped)."""
    return str(round(phases[name])) if name in phases else "-"


def _load(value: Any) -> str:
    return f"{value[0]:.1f}" if isinstance(value, list | tuple) and value else "?"
