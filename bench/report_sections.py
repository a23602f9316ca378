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


def run_date(doc: Doc | None) -> str:
    """When a result file was written (its machine date: ISO strings sort by time)."""
    return str(dig(doc, "machine", "date") or "")


def newest(docs: dict[str, Doc | None], names: tuple[str, ...], key: str) -> Doc | None:
    """Of the result files `names` that hold `key`, the one run last. A focused re-run
    (`speed.py --latency`, `--vs-vectorcode`, `--large`) stands for its part of the full run
    only while it is the newer of the two: a later full run replaces it again."""
    holding = [doc for doc in (docs.get(name) for name in names) if doc and doc.get(key)]
    return max(holding, key=run_date, default=None)


def latency_doc(docs: dict[str, Doc | None]) -> Doc:
    """The newest query-latency run: `speed.py --latency` (speed-latency.json) or the full
    run's points."""
    return newest(docs, ("speed-latency", "speed"), "latency") or docs.get("speed") or {}


def click_doc(docs: dict[str, Doc | None]) -> Doc | None:
    """The newest clean-index run on click/src: `speed.py --vs-vectorcode N`
    (speed-vectorcode.json) or the full run."""
    return newest(docs, ("speed-vectorcode", "speed"), "click_src")


def latency_points(doc: Doc) -> list[Doc]:
    """The measured latency points, one per index: where one (the large tree) was measured
    with real MiniLM vectors and with hash vectors, the real one stands for it, unless its
    vectors did not cover the index (built with other numerics: the dense arm was skipped,
    so it timed BM25 alone)."""
    by_index: dict[Any, Doc] = {}
    ok = [
        p
        for p in doc.get("latency") or []
        if p.get("ok") and (p.get("vectors") != "local" or (p.get("coverage") or 0) >= 1)
    ]
    for p in sorted(ok, key=lambda p: p.get("vectors") == "local"):
        by_index[p.get("point")] = p
    return sorted(by_index.values(), key=lambda p: p.get("chunks") or 0)


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
    click = dig(click_doc(docs), "click_src") or {}
    for embedder, runs in (click.get("runs") or {}).items():
        median = runs.get("clean_median") or {}
        rows.append(
            {
                "name": f"codeqa ({embedder})",
                "wall_s": median.get("wall_s"),
                "wall_all": median.get("wall_s_all"),
                "dense_ready_s": median.get("dense_ready_seconds"),
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
    swe_runs = dig(docs.get("swebench"), "runs") or {}
    swe_name = next((n for n in ("local", "hash") if n in swe_runs), None)
    acc5 = dig(swe_runs, swe_name, "overall", "acc@5") if swe_name else None
    add(
        "SWE-bench Lite dev file Acc@5 >= 0.85 (`codeqa search`)",
        f"{acc5:.3f} ({swe_name}, n={swe_runs[swe_name].get('n')})" if acc5 is not None else None,
        None if acc5 is None else acc5 >= 0.85,
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
    searches = docs.get("speed-embedders") or {}
    ratio = searches.get("search_local_over_hash")
    per_call = searches.get("search_per_call_s") or {}
    add(
        "`codeqa search` with the default embedder <= 1.5× `--embedder hash`",
        f"{ratio:.2f}× ({per_call.get('local')} vs {per_call.get('hash')} s)" if ratio else None,
        None if ratio is None else ratio <= 1.5,
    )
    default_kind = next(iter(searches.get("query_embed") or {}), None)  # the default comes first
    p95 = dig(searches, "query_embed", default_kind, "query", "p95_ms") if default_kind else None
    add(
        "a short question's embedding < 10 ms (p95, fresh process)",
        f"{p95:.1f} ms ({default_kind}, the default)" if p95 is not None else None,
        None if p95 is None else p95 < 10,
    )
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
    large = [p for p in latency_points(latency_doc(docs)) if p.get("point") == "large"]
    # Issue 12's target excludes the query embedding; runs before the split only had totals.
    p95 = dig(large, 0, "retrieval", "p95_ms")
    total95 = dig(large, 0, "latency", "p95_ms")
    vectors = "MiniLM" if dig(large, 0, "vectors") == "local" else "hash"
    add(
        "query p95 <= 30 ms at ~100k chunks, excluding the query embedding",
        f"{p95:.1f} ms at {dig(large, 0, 'chunks')} chunks, {vectors} vectors "
        f"({total95:.1f} ms with the query's embedding)"
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
        "Targets from issues 8, 12 and 13 (the 100-question, CoSQA, SWE-bench and speed "
        'targets are unchanged; off-topic confidence has its own section below). "not run" '
        "means the result file (or that part of it) is missing.",
        "",
        *table(["target", "measured", "status"], _target_rows(docs)),
    ]
