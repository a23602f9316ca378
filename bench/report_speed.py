"""BENCHMARKS.md's speed, chunking and server parts (from speed*.json, peers.json,
chunking.json and server.json), each table beside its baseline from the same run."""

from __future__ import annotations

from report_sections import (
    NOT_RUN,
    Doc,
    click_doc,
    click_index_rows,
    dig,
    fmt,
    latency_doc,
    machine_line,
    ratio,
    run_date,
    table,
)

# -- speed ----------------------------------------------------------------------------------------


def speed_section(docs: dict[str, Doc | None], plots: dict[str, str]) -> list[str]:
    speed, peers = docs.get("speed"), docs.get("peers")
    lines = ["## Speed and memory", "", machine_line(speed), ""]
    if speed and speed.get("seconds"):
        lines += [f"`bench/speed.py` took {speed['seconds'] / 60:.0f} minutes in this run.", ""]
    if speed and speed.get("complete") is False:
        lines += ["_This run stopped before its last stages; what it measured is shown._", ""]
    if not speed:
        lines += [f"_{NOT_RUN}_", ""]
    lines += [
        "### Full index, clean cache: click-8.1.7/src",
        "",
        "Wall time of the whole command (interpreter start, imports, model load, indexing) and "
        "peak RSS summed over the process tree (VectorCode: its CLI plus its Chroma server), "
        "sampled every 50 ms the same way for both tools. Ratios are against VectorCode in the "
        "same run. *Every chunk embedded*: seconds into our indexing (after start-up) when every "
        "chunk had its first vector, so dense search covered the whole tree; the later windows "
        "of long chunks are embedded after that (`index/embedding.py`).",
        "",
    ]
    rows = click_index_rows(docs)
    vc = next((r for r in rows if r["name"] == "VectorCode"), None)
    lines += (
        table(
            [
                "tool",
                "wall s (median)",
                "runs",
                "× VectorCode",
                "every chunk embedded, s",
                "peak RSS MB",
                "× VectorCode",
                "chunks",
                "files",
                "index MB",
                "MB / 1k chunks",
            ],
            [
                [
                    r["name"],
                    r["wall_s"],
                    ", ".join(fmt(w, 1) for w in r.get("wall_all") or []),
                    ratio(r["wall_s"], vc and vc["wall_s"]) if r is not vc else "1.00×",
                    fmt(r.get("dense_ready_s"), 2),
                    r["rss_mb"],
                    ratio(r["rss_mb"], vc and vc["rss_mb"]) if r is not vc else "1.00×",
                    r["chunks"],
                    r["files"],
                    fmt((r.get("size_bytes") or 0) / 2**20, 1),
                    r["per_1k"],
                ]
                for r in rows
            ],
        )
        if rows
        else [f"_{NOT_RUN}_", ""]
    )
    if vc and not vc["same_run"]:
        lines += ["_VectorCode's row comes from `peers.json`, not from the same run as ours._", ""]
    click = click_doc(docs)
    if click is not speed and click:  # a focused re-run: its own machine line
        lines += [f"Rows: {machine_line(click)}", ""]
    if click and click.get("note"):
        lines += [f"_{click['note']}_", ""]
    if "index_click" in plots:
        lines += [f"![click/src index]({plots['index_click']})", ""]
    lines += _large(speed, click, docs.get("speed-large"))
    lines += _warm(speed) + _did_save(speed)
    lines += _latency(latency_doc(docs), speed, peers, plots)
    return lines


def _large(speed: Doc | None, click: Doc | None = None, large_only: Doc | None = None) -> list[str]:
    """The large-tree index table. Runs of `speed.py --large KINDS` (speed-large.json)
    replace the full run's for their embedders, with their own machine line, where they are
    newer or the full run skipped that embedder. A skipped local run's time estimate is
    recomputed from the newest click/src local rate (`click`), so it does not go on quoting
    the rate of the embedder the product had then."""
    large = dig(speed, "large") or dig(large_only, "large")
    lines = ["### Full index, clean cache: large tree", ""]
    if not large:
        return [*lines, f"_{NOT_RUN}_", ""]
    full_runs = large.get("runs") or {}
    focused_is_newer = run_date(large_only) > run_date(speed)
    newer = {
        name: run
        for name, run in (dig(large_only, "large", "runs") or {}).items()
        if focused_is_newer or name not in full_runs or "not_run" in full_runs[name]
    }
    if newer:
        large = {**large, "runs": {**(large.get("runs") or {}), **newer}}
        lines += [f"Rows {', '.join(newer)}: {machine_line(large_only)}", ""]
        lines += [
            _large_run_line(name, run, dig(large_only, "large", "tree"))
            for name, run in newer.items()
        ]
        lines.append("")
        if note := (large_only or {}).get("note"):
            lines += [f"_{note}_", ""]
    tree = large.get("tree") or {}
    lines += [
        f"{tree.get('description', '')}: {tree.get('files')} files "
        f"({fmt((tree.get('bytes') or 0) / 2**20, 0)} MB; {tree.get('files_by_source')}).",
        "",
    ]
    rows = []
    for embedder, runs in (large.get("runs") or {}).items():
        if "not_run" in runs:
            chunks = dig(large, "runs", "hash", "clean", "chunks")
            estimate = _local_estimate(click, chunks) or _local_estimate(speed, chunks)
            rows.append([embedder, estimate or runs["not_run"], None, None, None, None, None])
            continue
        c = runs.get("clean") or {}
        rows.append(
            [
                embedder,
                c.get("wall_s") if c.get("ok") else f"failed: {c.get('error')}",
                c.get("tree_peak_rss_mb"),
                c.get("files"),
                c.get("chunks"),
                fmt((c.get("size_bytes") or 0) / 2**20, 1),
                c.get("size_mb_per_1k_chunks"),
            ]
        )
    return lines + table(
        [
            "embedder",
            "wall s",
            "peak RSS MB",
            "files indexed",
            "chunks",
            "index MB",
            "MB / 1k chunks",
        ],
        rows,
    )


def _large_run_line(name: str, run: Doc, tree: Doc | None) -> str:
    """What the table has no column for: the tree of a separate run, when every chunk had
    its first vector, the rate, and the warm start after it."""
    clean, warm = run.get("clean") or {}, run.get("warm") or {}
    return (
        f"- {name}: {(tree or {}).get('files')} files in the tree at this run; every chunk "
        f"embedded at {fmt(clean.get('dense_ready_seconds'), 0)} s, then "
        f"{clean.get('windows_embedded')} later windows; {clean.get('chunks_per_s')} chunks/s "
        f"over the whole wall time; warm start {warm.get('wall_s')} s with "
        f"{warm.get('embedded')} chunks embedded."
    )


def _local_estimate(run: Doc | None, chunks: int | None) -> str | None:
    """How long the large tree would take with MiniLM at `run`'s click/src local rate."""
    click = dig(run, "click_src", "runs", "local", "clean_median") or {}
    rate, date = click.get("chunks_per_s"), dig(run, "machine", "date")
    if not (rate and chunks):
        return None
    return (
        f"skipped (run with --large-local): {chunks} chunks at the {rate} chunks/s of the "
        f"newest click/src run ({(date or '?')[:10]}, whole wall time) would take about "
        f"{chunks / rate / 60:.0f} minutes"
    )


def _warm(speed: Doc | None) -> list[str]:
    lines = ["### Warm start (nothing changed)", ""]
    rows = []
    for tree, block in (
        ("click/src", dig(speed, "click_src", "runs")),
        ("large", dig(speed, "large", "runs")),
    ):
        for embedder, runs in (block or {}).items():
            warm = runs.get("warm")
            if warm:
                clean = runs.get("clean_median") or runs.get("clean") or {}
                rows.append(
                    [
                        f"{tree} · {embedder}",
                        warm.get("wall_s"),
                        ratio(warm.get("wall_s"), clean.get("wall_s")),
                        warm.get("embedded"),
                        warm.get("tree_peak_rss_mb"),
                    ]
                )
    if not rows:
        return [*lines, f"_{NOT_RUN}_", ""]
    return lines + table(
        ["tree", "wall s", "× clean index", "chunks embedded (target 0)", "peak RSS MB"], rows
    )


def _did_save(speed: Doc | None) -> list[str]:
    did = dig(speed, "did_save")
    lines = ["### didSave: one function changed in a ~1,000-line file", ""]
    if not did:
        return [*lines, f"_{NOT_RUN}_", ""]
    if not did.get("ok"):
        return [*lines, f"failed: {did.get('error')}", ""]
    lines += [
        f"`CodeBase.update_file` on `{did['file']}` ({did['file_lines']} lines), after appending a "
        f"comment to one function's last line; embedder of the click/src index: "
        f"{dig(speed, 'embedders', -1)}. *Searchable* = update plus a keyword search that finds "
        f"the new text; *hybrid top 5* = whether the default hybrid search shows it in its top 5.",
        "",
    ]
    rows = [
        [
            e["symbol"],
            e["embedded"],
            e["chunks_added"],
            e["chunks_removed"],
            e["update_s"] * 1000,
            e["searchable_s"] * 1000,
            e.get("found_bm25"),
            e.get("found_hybrid_top5"),
        ]
        for e in did["edits"]
    ]
    return lines + table(
        [
            "function",
            "re-embedded (target 1)",
            "added",
            "removed",
            "update ms",
            "searchable ms",
            "found (keyword)",
            "hybrid top 5",
        ],
        rows,
    )


def _latency(
    speed: Doc | None, full_run: Doc | None, peers: Doc | None, plots: dict[str, str]
) -> list[str]:
    lines = ["### Query latency (retrieval only)", ""]
    if speed is not full_run:  # a focused re-run: its own machine line
        lines += [machine_line(speed), ""]
    points = [p for p in dig(speed, "latency") or [] if p.get("ok")]
    if not points:
        lines += [f"_{NOT_RUN}_", ""]
    else:
        lines += [
            f"Hybrid `CodeBase.search` (top 8) over {dig(points, 0, 'latency', 'n')} distinct "
            f"questions, query embedded with `{dig(speed, 'query_embedder')}`. Indexes marked "
            "*hash* were built with the hashing embedder (same 384 dimensions, same hnswlib "
            "index), so that the ~1k and ~10k points need no MiniLM run; each query still runs "
            "the MiniLM forward pass and searches an index of that size. Rows marked *MiniLM* "
            "are real MiniLM indexes: click/src, and the large tree when `speed.py --large "
            "local` (about 30 minutes) has built one. *Total* is each question's first search, "
            "query embedding included. "
            "*Retrieval* runs the same questions again with their vectors in the query cache: "
            "BM25, hnswlib, fusion, the second stage and the hand-off to the search thread pool, "
            "without the forward pass. *Query embedding p50* is the MiniLM forward pass alone, "
            "called from the benchmark's main thread.",
            "",
        ]
        rows = [
            [
                p["point"],
                p.get("chunks"),
                "MiniLM" if p.get("vectors") == "local" else "hash",
                dig(p, "latency", "p50_ms"),
                dig(p, "latency", "p95_ms"),
                dig(p, "retrieval", "p50_ms"),
                dig(p, "retrieval", "p95_ms"),
                dig(p, "query_embedding", "p50_ms"),
                p.get("tree_peak_rss_mb"),
            ]
            for p in sorted(points, key=lambda p: p.get("chunks") or 0)
        ]
        lines += table(
            [
                "index",
                "chunks",
                "vectors",
                "total p50 ms",
                "total p95 ms",
                "retrieval p50 ms",
                "retrieval p95 ms",
                "query embedding p50 ms",
                "peak RSS MB",
            ],
            rows,
        )
    if dig(speed, "note"):
        lines += [f"_{dig(speed, 'note')}_", ""]
    lines += _latency_baseline(speed)
    if "latency" in plots:
        lines += [f"![query latency]({plots['latency']})", ""]
    lsp = dig(peers, "click_src", "lsp")
    if lsp:
        warm = lsp.get("warm") or {}
        lines += [
            "For reference, VectorCode's warm LSP query on click/src (`vectorcode-server`, 5 "
            f"results): p50 {fmt(warm.get('p50_ms'), 1)} ms, p95 {fmt(warm.get('p95_ms'), 1)} ms; "
            f"its first query {fmt(lsp.get('first_query_s'), 1)} s; server peak RSS "
            f"{fmt(lsp.get('server_tree_peak_rss_mb'), 0)} MB.",
            "",
        ]
    return lines


# -- chunking and server ---------------------------------------------------------------------------


def chunking_section(doc: Doc | None) -> list[str]:
    lines = ["## Chunking throughput", "", machine_line(doc), ""]
    results = dig(doc, "results") or {}
    if not results:
        return [*lines, f"_{NOT_RUN}_", ""]
    rows = [
        [
            name,
            r.get("files"),
            r.get("megabytes"),
            r.get("parse_mb_per_s"),
            r.get("chunk_mb_per_s"),
            r.get("chunks_per_s"),
            f"{r['chunking_vs_parse_speed']:.0%}" if "chunking_vs_parse_speed" in r else None,
        ]
        for name, r in results.items()
    ]
    return [
        *lines,
        "`chunk_source` end to end against `Parser.parse` alone on the same files (target >= 50%).",
        "",
        *table(
            ["corpus", "files", "MB", "parse MB/s", "chunk MB/s", "chunks/s", "chunking / parse"],
            rows,
        ),
        *([f"_{doc['note']}_", ""] if doc and doc.get("note") else []),
    ]


def server_section(doc: Doc | None) -> list[str]:
    lines = ["## Language server", "", machine_line(doc), ""]
    if not doc:
        return [*lines, f"_{NOT_RUN}_", ""]
    ws, cold, warm = doc.get("workspace") or {}, doc.get("cold") or {}, doc.get("warm") or {}
    hover, save = cold.get("hover_during_index") or {}, cold.get("save_to_searchable") or {}
    lines += [
        f"The real server over stdio (`bench/bench_server.py`), embedder `{doc.get('embedder')}`, "
        f"provider `{doc.get('provider')}`; workspace of {ws.get('indexed_files')} indexed files, "
        f"{ws.get('chunks')} chunks.",
        "",
    ]
    rows = [
        [
            "initialize → first cited `codeqa.ask` (target <= 2 s)",
            fmt(dig(cold, "first_cited_ask", "seconds")) + " s",
            f"index still running: {fmt(dig(cold, 'first_cited_ask', 'index_still_running'))}",
        ],
        ["initialize response", fmt(cold.get("initialize_response_s"), 3) + " s", ""],
        [
            "full index (cold)",
            fmt(cold.get("full_index_s"), 1) + " s",
            cold.get("index_end_message") or "",
        ],
        [
            "hover during the full index (target p95 <= 100 ms)",
            f"p50 {fmt(hover.get('p50_ms'), 1)} ms · p95 {fmt(hover.get('p95_ms'), 1)} ms",
            f"n = {hover.get('n')}",
        ],
        [
            f"didSave → searchable (a whole new {save.get('lines')}-line file)",
            f"p50 {fmt(save.get('p50_ms'), 0)} ms · p95 {fmt(save.get('p95_ms'), 0)} ms",
            f"includes {save.get('includes_debounce_ms')} ms debounce",
        ],
        [
            "warm start: index run",
            fmt(warm.get("index_run_s"), 2) + " s",
            warm.get("index_end_message") or "",
        ],
        ["warm start: first cited ask", fmt(dig(warm, "first_cited_ask", "seconds")) + " s", ""],
    ]
    note = [f"_{doc['note']}_", ""] if doc and doc.get("note") else []
    return lines + table(["measurement", "value", "note"], rows) + note


def _latency_baseline(speed: Doc | None) -> list[str]:
    """The same benchmark run on another commit just before (`baseline_main`), side by side:
    timings on a shared machine only compare within one run."""
    base = dig(speed, "baseline_main")
    if not base:
        return []
    mine = {p["point"]: p for p in dig(speed, "latency") or []}
    rows = []
    for p in base.get("latency") or []:
        ours = mine.get(p["point"]) or {}
        rows.append(
            [
                p["point"],
                p.get("chunks"),
                _p50_p95(p),
                _p50_p95(ours),
                f"{fmt(dig(p, 'index', 'wall_s'))} / {fmt(dig(ours, 'index', 'wall_s'))}",
            ]
        )
    large = (dig(base, "large_index", "wall_s"), dig(speed, "large_index", "wall_s"))
    commit = str(base.get("commit") or "?")[:9]
    return [
        f"Baseline in the same session: commit {commit} (load average "
        f"{base.get('load_average_start')} → {base.get('load_average_end')}), then this one. "
        + (
            f"The ~100k-chunk index took {fmt(large[0])} s to build before, {fmt(large[1])} s now."
            if large[0] is not None
            else f"The ~100k-chunk index took {fmt(large[1])} s to build (the baseline's "
            "benchmark did not record its build)."
        ),
        "",
        *table(
            [
                "index",
                "chunks",
                "baseline retrieval p50 / p95 ms",
                "retrieval p50 / p95 ms",
                "index s (baseline / now)",
            ],
            rows,
        ),
    ]


def _p50_p95(point: Doc) -> str:
    return f"{fmt(dig(point, 'retrieval', 'p50_ms'))} / {fmt(dig(point, 'retrieval', 'p95_ms'))}"
