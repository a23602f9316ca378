"""The sections of BENCHMARKS.md, one function each, over the result files' JSON.

Kept apart from `report.py` (which loads, plots and writes) so each renderer stays short.
Every renderer takes the loaded documents (None = not run) and returns Markdown lines; it
may raise on a JSON shape it does not know, and `report.py` turns that into a note.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

Doc = dict[str, Any]
NOT_RUN = "not run"


# -- formatting -------------------------------------------------------------------------------


def fmt(value: Any, digits: int = 2) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "**no**"
    if isinstance(value, float):
        return f"{value:.{digits}f}" if abs(value) < 100 else f"{value:.0f}"
    return str(value)


def ratio(ours: float | None, theirs: float | None) -> str:
    if not ours or not theirs:
        return "–"
    return f"{ours / theirs:.2f}×"


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[str]:
    out = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    out += ["| " + " | ".join(fmt(c) for c in row) + " |" for row in rows]
    return [*out, ""]


def latency_doc(docs: dict[str, Doc | None]) -> Doc:
    """The newest query-latency run: `speed.py --latency` writes speed-latency.json on its
    own (it takes ~15 minutes, the whole speed run ~40), else the full run's points."""
    focused = docs.get("speed-latency")
    return focused if focused and focused.get("latency") else (docs.get("speed") or {})


def machine_line(doc: Doc | None) -> str:
    """`_Run: date · cores · RAM · CPU · versions_` from either machine-block shape."""
    if not doc:
        return ""
    m = doc.get("machine") or {}
    parts = [
        m.get("date", "date ?"),
        f"{m.get('cores', '?')} cores",
        f"{m.get('ram_gb', '?')} GB RAM",
    ]
    if m.get("cpu"):
        parts.append(m["cpu"])
    parts.append(f"Python {m.get('python', '?')}")
    if m.get("load_avg_1m") is not None:
        parts.append(f"load average {m['load_avg_1m']} at the end")
    versions = dict(m.get("versions") or {})
    if "tree_sitter" in m:
        versions.setdefault("tree-sitter", m["tree_sitter"])
    git = versions.pop("git", None)
    parts += [f"{k} {v}" for k, v in versions.items() if v]
    if git:
        parts.append(f"commit {git}")
    if doc.get("quick"):
        parts.append("**quick mode**")
    return "_Run: " + " · ".join(str(p) for p in parts) + "_"


def flatten(value: Any, prefix: str = "", skip: Sequence[str] = ()) -> Iterator[tuple[str, Any]]:
    """(dotted key, scalar) pairs of a JSON document, for results we have no table for."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key in skip:
                continue
            yield from flatten(item, f"{prefix}.{key}" if prefix else str(key), ())
    elif isinstance(value, list):
        if all(not isinstance(v, dict | list) for v in value):
            yield prefix, ", ".join(map(str, value[:10])) + (" …" if len(value) > 10 else "")
        else:
            for i, item in enumerate(value[:5]):
                yield from flatten(item, f"{prefix}[{i}]", ())
    else:
        yield prefix, value


def dig(doc: Any, *path: Any) -> Any:
    """`doc[p0][p1]...` or None anywhere along the way."""
    for key in path:
        if isinstance(doc, dict):
            doc = doc.get(key)
        elif isinstance(doc, list) and isinstance(key, int) and -len(doc) <= key < len(doc):
            doc = doc[key]
        else:
            return None
    return doc


# -- data pulled from several files -------------------------------------------------------------


def quality_arms(docs: dict[str, Doc | None]) -> list[tuple[str, Doc]]:
    """(label, report) for every arm measured on the 100 questions, VectorCode included."""
    rows: list[tuple[str, Doc]] = []
    for embedder, data in (dig(docs.get("quality"), "embedders") or {}).items():
        for arm, result in (data.get("arms") or {}).items():
            rows.append((f"codeqa {arm} · {embedder}", result))
    sets = dig(docs.get("peers"), "quality", "sets") or []
    for mode, result in (dig(docs.get("peers"), "quality", "mappings") or {}).items():
        groups = result.get("groups") or {}
        if len(sets) == 1 and not any(k.startswith("set:") for k in groups):
            # One set only (quick run): the evaluator adds no per-set group; "all" is that set.
            result = {**result, "groups": {**groups, f"set:{sets[0]}": groups.get("all")}}
        rows.append((f"VectorCode · symbol {mode}", result))
    return rows


def best_hybrid(docs: dict[str, Doc | None]) -> tuple[str, Doc] | None:
    embedders = dig(docs.get("quality"), "embedders") or {}
    for embedder in ("local", "hash", *embedders):
        result = dig(embedders, embedder, "arms", "hybrid")
        if result:
            return embedder, result
    return None


def click_index_rows(docs: dict[str, Doc | None]) -> list[Doc]:
    """Clean-index rows on click/src: ours per embedder, then VectorCode (same run if any)."""
    rows: list[Doc] = []
    # speed-vectorcode.json (`speed.py --vs-vectorcode N`) is the focused, later re-run.
    click = (
        dig(docs.get("speed-vectorcode"), "click_src") or dig(docs.get("speed"), "click_src") or {}
    )
    for embedder, runs in (click.get("runs") or {}).items():
        median = runs.get("clean_median") or {}
        rows.append(
            {
                "name": f"codeqa ({embedder})",
                "wall_s": median.get("wall_s"),
                "wall_all": median.get("wall_s_all"),
                "rss_mb": median.get("tree_peak_rss_mb_max"),
                "chunks": median.get("chunks"),
                "files": median.get("files"),
                "size_bytes": median.get("size_bytes"),
                "per_1k": median.get("size_mb_per_1k_chunks"),
                "same_run": True,
            }
        )
    vc = dig(click, "vectorcode", "clean_median")
    same_run = vc is not None
    if vc is None:
        peers_click = dig(docs.get("peers"), "click_src") or {}
        if peers_click.get("ok"):
            vc = {
                "wall_s": peers_click.get("index_wall_s"),
                "wall_s_all": peers_click.get("index_wall_s_all"),
                "tree_peak_rss_mb_max": peers_click.get("index_tree_peak_rss_mb"),
                "chunks": peers_click.get("chunks"),
                "files": peers_click.get("files"),
                "db_bytes": peers_click.get("db_bytes"),
            }
    if vc:
        chunks = vc.get("chunks")
        size = vc.get("db_bytes")
        rows.append(
            {
                "name": "VectorCode",
                "wall_s": vc.get("wall_s"),
                "wall_all": vc.get("wall_s_all"),
                "rss_mb": vc.get("tree_peak_rss_mb_max") or vc.get("tree_peak_rss_mb"),
                "chunks": chunks,
                "files": vc.get("files"),
                "size_bytes": size,
                "per_1k": round(size / 2**20 / chunks * 1000, 3) if size and chunks else None,
                "same_run": same_run,
            }
        )
    return rows


# -- summary ------------------------------------------------------------------------------------


def _status(ok: bool | None) -> str:
    return NOT_RUN if ok is None else ("met" if ok else "**missed**")


def _target_rows(docs: dict[str, Doc | None]) -> list[list[Any]]:
    rows: list[list[Any]] = []
    hybrid = best_hybrid(docs)
    g = dig(hybrid[1], "groups") if hybrid else None
    label = f"hybrid · {hybrid[0]}" if hybrid else "hybrid"

    def add(target: str, measured: Any, ok: bool | None) -> None:
        rows.append([target, NOT_RUN if measured is None else measured, _status(ok)])

    def metric(group: str, name: str) -> float | None:
        value = dig(g, group, name)
        return float(value) if value is not None else None

    for target, group, name, floor in (
        ("hit@5 >= 0.90 (100 questions)", "all", "hit@5", 0.90),
        ("MRR@10 >= 0.70 (100 questions)", "all", "mrr@10", 0.70),
        ("hit@5 >= 0.85 on low-overlap questions", "overlap:low", "hit@5", 0.85),
    ):
        value = metric(group, name)
        add(
            target,
            f"{value:.2f} ({label})" if value is not None else None,
            None if value is None else value >= floor,
        )
    cosqa = dig(docs.get("cosqa"), "embedders") or {}
    emb = "local" if "local" in cosqa else next(iter(cosqa), None)
    nd = dig(cosqa, emb, "arms", "hybrid", "ndcg@10") if emb else None
    add(
        "CoSQA dev nDCG@10 >= 0.65",
        f"{nd:.3f} (hybrid · {emb})" if nd is not None else None,
        None if nd is None else nd >= 0.65,
    )
    beats = _hybrid_beats(docs)
    add("hybrid beats BM25, dense, ripgrep and VectorCode on every set", beats[0], beats[1])

    rows_click = {r["name"]: r for r in click_index_rows(docs)}
    ours, vc = rows_click.get("codeqa (local)"), rows_click.get("VectorCode")
    for target, key, limit in (
        ("click/src index wall time <= 1/3 of VectorCode's", "wall_s", 1 / 3),
        ("click/src peak RSS <= 1/2 of VectorCode's", "rss_mb", 1 / 2),
    ):
        if ours and vc and ours.get(key) and vc.get(key):
            r = ours[key] / vc[key]
            add(target, f"{r:.2f}× ({fmt(ours[key], 1)} vs {fmt(vc[key], 1)})", r <= limit)
        else:
            add(target, None, None)
    speed = docs.get("speed") or {}
    warm = [
        (f"{tree} · {emb}", dig(runs, "warm", "embedded"))
        for tree, block in (
            ("click/src", dig(speed, "click_src", "runs")),
            ("large", dig(speed, "large", "runs")),
        )
        for emb, runs in (block or {}).items()
        if dig(runs, "warm", "embedded") is not None
    ]
    add(
        "warm start embeds 0 chunks",
        ", ".join(f"{k}: {v}" for k, v in warm) or None,
        all(v == 0 for _, v in warm) if warm else None,
    )
    did = speed.get("did_save") or {}
    add(
        "didSave of one function re-embeds 1 chunk",
        did.get("embedded_max"),
        None if did.get("embedded_max") is None else did["embedded_max"] == 1,
    )
    latency = latency_doc(docs)
    large = [p for p in latency.get("latency", []) if p.get("point") == "large" and p.get("ok")]
    # Issue 12's target excludes the query embedding; runs before the split only had totals.
    p95 = dig(large, 0, "retrieval", "p95_ms")
    total95 = dig(large, 0, "latency", "p95_ms")
    add(
        "query p95 <= 30 ms at ~100k chunks, excluding the query embedding",
        f"{p95:.1f} ms at {dig(large, 0, 'chunks')} chunks ({total95:.1f} ms with it)"
        if p95 is not None
        else (f"{total95:.1f} ms with the embedding (older run)" if total95 is not None else None),
        None if p95 is None else p95 <= 30,
    )
    server = docs.get("server")
    first_ask = dig(server, "cold", "first_cited_ask", "seconds")
    add(
        "server: initialize → first cited codeqa.ask <= 2 s",
        f"{first_ask:.2f} s on {dig(server, 'workspace', 'indexed_files')} files"
        if first_ask is not None
        else None,
        None if first_ask is None else first_ask <= 2,
    )
    hover95 = dig(server, "cold", "hover_during_index", "p95_ms")
    add(
        "server: hover p95 <= 100 ms during a full index",
        f"{hover95:.1f} ms" if hover95 is not None else None,
        None if hover95 is None else hover95 <= 100,
    )
    soak = dig(speed, "soak_50k") or docs.get("soak")
    soak_rss = dig(soak, "peak_rss_mb")
    add(
        "50,000 small files index with bounded memory (issue 9; soak limit 1024 MB)",
        f"{soak_rss:.0f} MB peak RSS, {dig(soak, 'files')} files in {dig(soak, 'seconds')} s"
        if soak_rss is not None
        else None,
        None if soak_rss is None else soak_rss < 1024,
    )
    ratio_chunking = dig(docs.get("chunking"), "results", "all", "chunking_vs_parse_speed")
    add(
        "chunking >= 50% of raw tree-sitter parse speed",
        f"{ratio_chunking:.0%}" if ratio_chunking is not None else None,
        None if ratio_chunking is None else ratio_chunking >= 0.5,
    )
    return rows


def _hybrid_beats(docs: dict[str, Doc | None]) -> tuple[str | None, bool | None]:
    """Per set: hybrid hit@5 vs BM25, dense and VectorCode; file hit@5 vs ripgrep."""
    hybrid = best_hybrid(docs)
    if not hybrid:
        return None, None
    embedder, result = hybrid
    arms = dig(docs.get("quality"), "embedders", embedder, "arms") or {}
    others: dict[str, tuple[Doc, str]] = {
        arm: (arms[arm]["groups"], "hit@5") for arm in ("bm25", "dense") if arm in arms
    }
    vc = dig(docs.get("peers"), "quality", "mappings", "contained", "groups")
    if vc:
        others["VectorCode"] = (vc, "hit@5")
    rg = dig(docs.get("quality"), "ripgrep", "groups")
    if rg:
        others["ripgrep"] = (rg, "file_hit@5")
    losses, checked = [], 0
    for group, mine in result["groups"].items():
        if not group.startswith("set:"):
            continue
        for name, (theirs, metric) in others.items():
            if group not in theirs:
                continue
            checked += 1
            if not mine[metric] > theirs[group][metric]:
                losses.append(
                    f"{group[4:]} vs {name} ({mine[metric]:.2f} ≤ {theirs[group][metric]:.2f})"
                )
    if not checked:
        return None, None
    text = f"{checked - len(losses)}/{checked} comparisons won"
    if losses:
        text += "; not on: " + ", ".join(losses)
    return text, not losses


def summary_section(docs: dict[str, Doc | None]) -> list[str]:
    return [
        "## Summary against the targets",
        "",
        "Targets from issues 8, 12 and 13 (the 100-question, CoSQA and speed targets are "
        'unchanged; SWE-bench and off-topic confidence have their own sections below). "not run" '
        "means the result file (or that part of it) is missing.",
        "",
        *table(["target", "measured", "status"], _target_rows(docs)),
    ]


# -- quality -------------------------------------------------------------------------------------


def quality_section(docs: dict[str, Doc | None], plots: dict[str, str]) -> list[str]:
    quality, peers, cosqa = docs.get("quality"), docs.get("peers"), docs.get("cosqa")
    lines = [
        "## Retrieval quality",
        "",
        "### The 100 questions (requests, click, express, rxjs)",
        "",
        machine_line(quality),
    ]
    if peers and peers.get("quality"):
        lines.append(f"VectorCode {peers.get('version', '?')}: " + machine_line(peers))
    lines += [
        "",
        "Definition-level hit@k and MRR@10 by the matcher in `codeqa_lsp/retrieval/evaluation.py` "
        "(rules: `shared/eval/README.md`); file hit@5 = any result from an expected file in the "
        "top 5. VectorCode returns line ranges: *contained* maps a chunk to the innermost of our "
        "definitions containing it (headline); *covers* credits a chunk with an expected "
        "definition it covers at least half of (an upper bound). ripgrep ranks files by matches "
        "of the question's non-stopword terms, so only its file hit@5 means anything.",
        "",
    ]
    arms = quality_arms(docs)
    if not arms and not dig(quality, "ripgrep"):
        return [*lines, f"_{NOT_RUN}_", ""]
    rows = []
    for label, result in arms:
        g = result["groups"]
        rows.append(
            [
                label,
                g["all"]["hit@1"],
                g["all"]["hit@5"],
                g["all"]["hit@10"],
                g["all"]["mrr@10"],
                g["all"]["file_hit@5"],
                dig(g, "overlap:low", "hit@5"),
                dig(g, "overlap:high", "hit@5"),
                g["all"]["count"],
            ]
        )
    rg = dig(quality, "ripgrep", "groups")
    if rg:
        rows.append(
            [
                f"ripgrep ({dig(quality, 'ripgrep', 'version')})",
                None,
                None,
                None,
                None,
                rg["all"]["file_hit@5"],
                dig(rg, "overlap:low", "file_hit@5"),
                dig(rg, "overlap:high", "file_hit@5"),
                rg["all"]["count"],
            ]
        )
    lines += table(
        [
            "arm",
            "hit@1",
            "hit@5",
            "hit@10",
            "MRR@10",
            "file hit@5",
            "low-overlap hit@5",
            "high-overlap hit@5",
            "questions",
        ],
        rows,
    )
    sets = sorted({k[4:] for _, r in arms for k in r["groups"] if k.startswith("set:")})
    if sets:
        lines += ["By set (hit@5 / MRR@10; ripgrep: file hit@5):", ""]
        per_set = [
            [label]
            + [
                f"{fmt(dig(r, 'groups', 'set:' + s, 'hit@5'))} / "
                f"{fmt(dig(r, 'groups', 'set:' + s, 'mrr@10'))}"
                for s in sets
            ]
            for label, r in arms
        ]
        if rg:
            per_set.append(["ripgrep"] + [fmt(dig(rg, "set:" + s, "file_hit@5")) for s in sets])
        lines += table(["arm", *sets], per_set)
    if "quality" in plots:
        lines += [f"![retrieval quality]({plots['quality']})", ""]
    lines += _misses(arms)
    lines += _confidence(arms)
    lines += _cosqa(cosqa)
    lines += _swebench(docs.get("swebench"))
    return lines


def _confidence(arms: list[tuple[str, Doc]]) -> list[str]:
    rows = [
        [
            label,
            dig(r, "confidence", "real_confident"),
            dig(r, "confidence", "offtopic_confident"),
            dig(r, "confidence", "offtopic_asked"),
        ]
        for label, r in arms
        if r.get("confidence")
    ]
    if not rows:
        return []
    lines = [
        "### Confidence: real and off-topic questions",
        "",
        "Share answered confidently: the 100 real questions (want at least 0.90) and the 32 "
        "off-topic ones of `shared/eval/offtopic` (want at most 0.10).",
        "",
    ]
    lines += table(["arm", "real confident", "off-topic confident", "off-topic asked"], rows)
    for label, r in arms:
        wrong = dig(r, "confidence", "offtopic_confident_questions") or []
        if wrong:
            lines.append(
                f"- {label}: confident off-topic: "
                + "; ".join(f"{w['question']} → {w['best']}" for w in wrong)
            )
    return [*lines, ""]


def _swebench(doc: Doc | None) -> list[str]:
    lines = ["### SWE-bench Lite: issue text → files", "", machine_line(doc), ""]
    runs = dig(doc, "runs") or {}
    if not runs:
        return [*lines, f"_{NOT_RUN}_", ""]
    lines += [
        "`bench/swebench.py`: `shared/eval/swebench/swe_eval.py` with `codeqa search --queries "
        "--top-k 50` as the ranker (file Acc@k = all gold files in the top k).",
        "",
    ]
    rows = [
        [
            name,
            r.get("n"),
            dig(r, "overall", "acc@1"),
            dig(r, "overall", "acc@5"),
            dig(r, "overall", "acc@10"),
            dig(r, "overall", "mrr"),
        ]
        for name, r in runs.items()
    ]
    lines += table(["ranker", "n", "Acc@1", "Acc@5", "Acc@10", "MRR"], rows)
    for name, r in runs.items():
        misses = r.get("misses@5") or []
        if misses:
            lines.append(f"- {name} misses@5: " + ", ".join(m["id"] for m in misses))
    return [*lines, ""]


def _misses(arms: list[tuple[str, Doc]]) -> list[str]:
    out = ["<details><summary>Questions each arm misses (not in the top 5)</summary>", ""]
    for label, result in arms:
        misses = result.get("misses") or []
        ids = ", ".join(m["id"] for m in misses) or "none"
        out.append(f"- **{label}** ({len(misses)}): {ids}")
    return [*out, "", "</details>", ""]


def _cosqa(cosqa: Doc | None) -> list[str]:
    lines = ["### CoSQA dev", "", machine_line(cosqa), ""]
    embedders = dig(cosqa, "embedders") or {}
    if not embedders:
        return [*lines, f"_{NOT_RUN}_", ""]
    rows = []
    for embedder, data in embedders.items():
        for arm, r in (data.get("arms") or {}).items():
            rows.append(
                [
                    f"{arm} · {embedder}",
                    r.get("ndcg@10"),
                    r.get("mrr@10"),
                    r.get("hit@1"),
                    r.get("hit@10"),
                    r.get("count"),
                    data.get("chunks"),
                ]
            )
    lines += [
        "Rank of the file holding each query's one relevant function (500 queries, 6,267 "
        "functions; anchors on this machine: BM25 0.364, MiniLM dense 0.603 nDCG@10).",
        "",
    ]
    return lines + table(["arm", "nDCG@10", "MRR@10", "hit@1", "hit@10", "queries", "chunks"], rows)


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
        "same run.",
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
    if "index_click" in plots:
        lines += [f"![click/src index]({plots['index_click']})", ""]
    lines += _large(speed) + _warm(speed) + _did_save(speed)
    lines += _latency(latency_doc(docs), speed, peers, plots)
    return lines


def _large(speed: Doc | None) -> list[str]:
    large = dig(speed, "large")
    lines = ["### Full index, clean cache: large tree", ""]
    if not large:
        return [*lines, f"_{NOT_RUN}_", ""]
    tree = large.get("tree") or {}
    lines += [
        f"{tree.get('description', '')}: {tree.get('files')} files "
        f"({fmt((tree.get('bytes') or 0) / 2**20, 0)} MB; {tree.get('files_by_source')}).",
        "",
    ]
    rows = []
    for embedder, runs in (large.get("runs") or {}).items():
        if "not_run" in runs:
            rows.append([embedder, runs["not_run"], None, None, None, None, None])
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
            "*hash vectors* were built with the hashing embedder (same 384 dimensions, same "
            "hnswlib index) because embedding ~100k chunks with MiniLM takes hours on 2 cores; "
            "each query still runs the MiniLM forward pass and searches an index of that size, so "
            "the work per query is the same. The click/src row is a real MiniLM index, as a "
            "check. *Total* is each question's first search, query embedding included. "
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
            f"didSave → searchable ({save.get('lines')}-line file)",
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
    return lines + table(["measurement", "value", "note"], rows)
