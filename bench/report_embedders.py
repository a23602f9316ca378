"""BENCHMARKS.md section for the offline embedder (issue 13): quality of each numeric variant
against the torch model it replaced (`embedders.json`), indexing and query speed
(`speed-embedders.json`), thread and batch settings and the server's reader while it embeds
(`speed-threads.json`)."""

from __future__ import annotations

from typing import Any

from report_sections import dig, fmt, machine_line, table

Doc = dict[str, Any]
FILES = ("embedders", "speed-embedders", "speed-threads")


def embedders_section(docs: dict[str, Doc | None]) -> list[str]:
    lines = ["## Offline embedder: numerics, speed, threads", ""]
    lines += _quality(docs.get("embedders"))
    lines += _speed(docs.get("speed-embedders"))
    lines += _threads(docs.get("speed-threads"))
    return lines if len(lines) > 2 else []


def _load(doc: Doc) -> str:
    start, end = doc.get("load_average_start"), doc.get("load_average_end")
    return f"load average {fmt(start, 1)} at the start, {fmt(end, 1)} at the end"


def _quality(doc: Doc | None) -> list[str]:
    if not doc:
        return []
    lines = ["### Quality of each variant, one run", "", machine_line(doc) + f" · {_load(doc)}", ""]
    ref_key = next((k for k in doc if k.startswith("cosine_to_")), "cosine_to_torch")
    ref = ref_key.removeprefix("cosine_to_")
    cos = doc.get(ref_key) or {}
    rows = []
    for kind, run in (doc.get("runs") or {}).items():
        agreement = cos.get(kind) or ({"mean": 1.0, "min": 1.0} if kind == ref else {})
        rows.append(
            [
                kind,
                fmt(dig(run, "arms", "dense", "ndcg@10"), 3),
                fmt(dig(run, "arms", "hybrid", "ndcg@10"), 3),
                fmt(agreement.get("mean"), 4),
                fmt(agreement.get("min"), 4),
                run.get("chunks"),
            ]
        )
    if rows:
        lines += [
            f"CoSQA dev ({doc.get('queries')} queries), nDCG@10 per arm, and cosine of each "
            f"chunk's vector to `{ref}`'s on the same text:",
            "",
        ]
        lines += [
            *table(["embedder", "dense", "hybrid", "cosine mean", "cosine min", "chunks"], rows),
            "",
        ]
    questions = doc.get("questions")
    if questions:
        ref_key = next((k for k in questions if k.startswith("cosine_to_")), None)
        agreement = questions.get(ref_key) or {}
        rows = []
        for kind, run in (questions.get("runs") or {}).items():
            arms = run.get("arms") or {}
            row = [kind]
            for arm in ("bm25", "dense", "hybrid"):
                g = dig(arms, arm, "all") or {}
                row.append(f"{fmt(g.get('hit@5'))} / {fmt(g.get('mrr@10'))}")
            low = dig(arms, "hybrid", "overlap:low") or {}
            row += [
                fmt(low.get("hit@5")),
                fmt(dig(agreement, kind, "mean"), 4) if kind in agreement else "ref.",
            ]
            rows.append(row)
        lines += [
            f"The shared questions ({', '.join(questions.get('sets') or [])}), hit@5 / MRR@10 per "
            f"arm; cosine to `{ref_key.removeprefix('cosine_to_') if ref_key else '?'}` on every "
            "chunk:",
            "",
        ]
        lines += table(
            ["embedder", "bm25", "dense", "hybrid", "hybrid low-overlap hit@5", "cosine mean"], rows
        )
        lines.append("")
        if questions.get("note"):
            lines += [f"_{questions['note']}_", ""]
    if doc.get("notes"):
        lines += [f"_{doc['notes']}_", ""]
    return lines


def _speed(doc: Doc | None) -> list[str]:
    if not doc:
        return []
    lines = [
        "### Indexing and query speed, one run",
        "",
        machine_line(doc) + f" · {_load(doc)}",
        "",
    ]
    rows = []
    for kind, run in (doc.get("index") or {}).items():
        rows.append(
            [
                kind,
                fmt(run.get("wall_s"), 1),
                fmt(run.get("chunks_per_s"), 1),
                fmt(run.get("tree_peak_rss_mb"), 0),
                run.get("embedded") or run.get("chunks"),
            ]
        )
    lines += [
        f"Clean index of {doc.get('root')} in a fresh process per embedder (wall includes start "
        "and model load; chunks/s = embedded chunks over that wall):",
        "",
    ]
    lines += [*table(["embedder", "wall s", "chunks/s", "peak RSS MB", "chunks"], rows), ""]
    qe = doc.get("query_embed") or {}
    if qe:
        rows = [
            [
                kind,
                fmt(r.get("load_and_first_s"), 3),
                fmt(dig(r, "query", "p50_ms"), 1),
                fmt(dig(r, "query", "p95_ms"), 1),
            ]
            for kind, r in qe.items()
        ]
        lines += [
            "One short question at a time (fresh process; load = import, tokenizer, session, first "
            "call):",
            "",
        ]
        lines += [*table(["embedder", "load + first s", "query p50 ms", "query p95 ms"], rows), ""]
    for key in ("index_note", "query_embed_note"):
        if doc.get(key):
            lines += [f"_{doc[key]}_", ""]
    per_call = doc.get("search_per_call_s") or {}
    if per_call:
        lines += [
            "`codeqa search` per call on the built index (median of "
            f"{len((doc.get('search_calls_s') or {}).get('hash') or [])}, interleaved): default "
            f"{fmt(per_call.get('local'), 3)} s, `--embedder hash` {fmt(per_call.get('hash'), 3)} "
            f"s, ratio **{fmt(doc.get('search_local_over_hash'))}×** (target ≤ 1.5×).",
            "",
        ]
    if doc.get("search_note"):
        lines += [f"_{doc['search_note']}_", ""]
    return lines


def _threads(doc: Doc | None) -> list[str]:
    if not doc:
        return []
    lines = ["### Threads, spinning and batch size", "", machine_line(doc), ""]
    idle = dig(doc, "idle", "chunks_per_s") or {}
    busy = dig(doc, "one_core_busy", "chunks_per_s") or {}
    if idle:
        sample = doc.get("sample") or {}
        lines += [
            f"Embedding throughput on {sample.get('chunks')} click/src chunks (chunks/s, median; "
            f"×: against the first row). As found: {_load(doc['idle'])}. With one more core busy "
            f"in another process: {_load(doc['one_core_busy']) if busy else 'not run'}.",
            "",
        ]
        rows = [
            [
                key,
                fmt(r.get("median"), 1),
                fmt(r.get("vs_first")),
                fmt(dig(doc, "idle", "query_ms", key), 1),
                fmt(dig(busy, key, "median"), 1),
                fmt(dig(busy, key, "vs_first")),
            ]
            for key, r in idle.items()
        ]
        lines += [
            *table(["setting", "as found", "×", "short query ms", "one more core busy", "×"], rows),
            "",
        ]
    probe = doc.get("idle_probe")
    if probe:
        cells = ", ".join(
            f"{k}: {fmt(v, 1)} ms" for k, v in (probe.get("query_ms_median") or {}).items()
        )
        lines += [
            "One short question, median, near idle (load average "
            f"{fmt(probe.get('load_average'), 1)}, "
            f"{probe.get('date')}): {cells}.",
            "",
        ]
    server = doc.get("server")
    if server:
        rows = [
            [
                f"spin={int(r.get('spinning'))} threads={r.get('threads')}",
                fmt(r.get("index_s"), 1),
                r.get("chunks"),
                fmt(dig(r, "hover_during_index", "p50_ms"), 1),
                fmt(dig(r, "hover_during_index", "p95_ms"), 1),
                fmt(dig(r, "hover_during_index", "max_ms"), 0),
                fmt(dig(r, "hover_after_index", "p50_ms"), 1),
            ]
            for r in server.get("runs") or []
        ]
        lines += [
            f"The real server over stdio building a clean `local` index of {server.get('root')}: "
            "hover round "
            "trips one after another during the run, then 100 after it (same server). "
            f"{_load(server)}.",
            "",
        ]
        lines += table(
            [
                "pool threads",
                "index s",
                "chunks",
                "hover p50 ms",
                "p95 ms",
                "max ms",
                "after: p50 ms",
            ],
            rows,
        )
        lines.append("")
    if doc.get("note"):
        lines += [f"_{doc['note']}_", ""]
    return lines
