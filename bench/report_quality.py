"""BENCHMARKS.md's retrieval-quality part: the 100 questions per arm and set, confidence on
real and off-topic questions, SWE-bench Lite and CoSQA (from quality/cosqa/swebench.json)."""

from __future__ import annotations

from report_sections import (
    NOT_RUN,
    Doc,
    dig,
    fmt,
    machine_line,
    quality_arms,
    table,
)

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
    for name, entry in ((quality or {}).get("embedders") or {}).items():
        if entry.get("measured"):  # a row kept from an earlier run (quality.py --embedders)
            lines += ["", f"_The {name} rows are from the run of {entry['measured']}._"]
    if quality and quality.get("baseline_note"):
        lines += ["", f"_{quality['baseline_note']}_"]
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
    lines += _tryout(docs.get("tryout"))
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
        if r.get("note"):
            lines.append(f"- {name}: {r['note']}")
        misses = r.get("misses@5") or []
        if misses:
            lines.append(f"- {name} misses@5: " + ", ".join(m["id"] for m in misses))
    return [*lines, ""]


def _tryout(doc: Doc | None) -> list[str]:
    lines = ["### Held out: other languages (`bench/tryout.py`)", "", machine_line(doc), ""]
    arms = dig(doc, "arms") or {}
    if not arms:
        return [*lines, f"_{NOT_RUN}_", ""]
    repos = dig(doc, "indexes") or {}
    lines += [
        f"{dig(arms, 'hybrid', 'all', 'count')} questions written without looking at any "
        f"ranking, over {len(repos)} repositories the tuning never saw, mostly in languages "
        f"the sets above do not cover ({', '.join(sorted(repos))}; "
        "`bench/tryout_questions.jsonl`). *Direct* questions "
        "use the project's words, *paraphrased* ones avoid them. A result answers when its "
        "symbol contains an expected name. hit@5 / MRR@10:",
        "",
    ]
    keys = ["all", "style:direct", "style:paraphrased", *(f"repo:{r}" for r in sorted(repos))]
    rows = [
        [arm, *(f"{fmt(dig(g, k, 'hit@5'))} / {fmt(dig(g, k, 'mrr@10'))}" for k in keys)]
        for arm, g in arms.items()
    ]
    lines += table(["arm", *(k.split(":", 1)[-1].split("/")[-1] for k in keys)], rows)
    if note := dig(doc, "note"):
        lines += [f"_{note}_", ""]
    misses = dig(doc, "misses") or []
    if misses:
        lines += [f"<details><summary>Hybrid misses ({len(misses)})</summary>", ""]
        lines += [
            f"- {m['repo']} ({m['style']}): {m['question']} (want {', '.join(m['expected'])}; "
            f"rank {m['hybrid'] or '-'})"
            for m in misses
        ]
        lines += ["", "</details>"]
    return [*lines, "", *_tryout_confidence(dig(doc, "confidence"), sorted(repos))]


def _tryout_confidence(conf: Doc | None, repos: list[str]) -> list[str]:
    """The held-out check of the confidence floor: real and off-topic questions."""
    if not conf:
        return []
    lines = [
        f"Confidence on the same repositories (hybrid): {conf.get('real_count')} real questions "
        f"(want at least 0.90 confident) and {conf.get('offtopic_count')} off-topic ones, five "
        "per repository, four about what no such project does and one near its domain (want "
        "at most 0.10):",
        "",
    ]
    shares = dig(conf, "repos") or {}
    lines += table(
        ["answered confidently", "all", *(r.split("/")[-1] for r in repos)],
        [
            [label, fmt(conf.get(key)), *(fmt(dig(shares, r, key)) for r in repos)]
            for label, key in (("real", "real_confident"), ("off-topic", "offtopic_confident"))
        ],
    )
    wrong = conf.get("offtopic_confident_questions") or []
    lines += [f"- confident off-topic: {w['repo']}: {w['question']} → {w['best']}" for w in wrong]
    unsure = conf.get("real_unconfident_questions") or []
    if unsure:
        lines.append(f"- real questions not confident ({len(unsure)}): " + "; ".join(unsure))
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
