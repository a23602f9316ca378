"""Retrieval quality: arms × embedders × question sets, CoSQA, and a ripgrep baseline.

    python bench/quality.py            # full: hash + local embedders, 4 sets, CoSQA dev 500
    python bench/quality.py --quick    # hash embedder only, CoSQA first 100 queries

Writes `bench/results/quality.json` (question sets and ripgrep) and `bench/results/cosqa.json`,
each with the machine block, and per arm the metrics by set and by `lexical_overlap`, the
rank of every question and the misses (question, expected, what came back). Every arm runs
through the same `HybridSearcher` the editor uses (`mode=bm25|dense|hybrid`).

The ripgrep baseline is what a developer does without us: search the tree for the
question's words and open the files with the most matches. Terms are the question's
non-stopword words (the same stopword list as our BM25 queries); files are ranked by the
total number of matches; only file hit@5 is meaningful for it.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import cosqa
from common import read_result, write_result
from corpora import (
    EVAL_DIR,
    SETS,
    corpus_root,
    corpus_settings,
    fetch_all,
    open_searcher,
    questions_path,
)

from codeqa_lsp.index.tokens import STOPWORDS
from codeqa_lsp.retrieval.evaluation import (
    Question,
    QuestionResult,
    Retrieved,
    evaluate,
    grouped,
    load_questions,
    report,
)

ARMS = ("bm25", "dense", "hybrid")
TOP_K = 10


def run_set(name: str, embedder: str, arms: tuple[str, ...]) -> dict[str, Any]:
    questions = load_questions(questions_path(name))
    searcher, index_seconds = open_searcher(
        name, corpus_root(name), embedder, **corpus_settings(name)
    )
    try:
        out: dict[str, Any] = {}
        offtopic = offtopic_questions(name)
        for arm in arms:
            confident: list[bool] = []

            def search(
                text: str, arm: str = arm, confident: list[bool] = confident
            ) -> list[Retrieved]:
                response = searcher.search(text, top_k=TOP_K, mode=arm)  # type: ignore[arg-type]
                confident.append(response.confident)
                return [
                    Retrieved(h.chunk.path, h.chunk.symbol, h.chunk.part, h.chunk.parts)
                    for h in response.hits
                ]

            started = time.perf_counter()
            results = evaluate(questions, search)
            off = [(q, searcher.search(q, top_k=TOP_K, mode=arm)) for q in offtopic]  # type: ignore[arg-type]
            out[arm] = {
                "results": results,
                "seconds": time.perf_counter() - started,
                "confident": sum(confident),
                "asked": len(confident),
                "offtopic_confident": [
                    {"question": q, "best": r.hits[0].chunk.path if r.hits else None}
                    for q, r in off
                    if r.confident
                ],
                "offtopic_asked": len(off),
            }
        status = searcher.indexer.status()
    finally:
        searcher.indexer.close()
    return {
        "arms": out,
        "index": {
            "chunks": status.chunks,
            "files": status.files,
            "seconds": round(index_seconds, 1),
            "embedding_model": status.embedding_model,
        },
    }


def offtopic_questions(name: str) -> list[str]:
    """The set's off-topic questions (honest answer: no confident source); [] if absent."""
    path = EVAL_DIR / "offtopic" / f"{name}.jsonl"
    if not path.is_file():
        return []
    return [json.loads(line)["question"] for line in path.read_text().splitlines() if line.strip()]


def confidence_report(per_set: list[dict[str, Any]]) -> dict[str, Any]:
    """Share of real questions answered confidently (want >= 0.9) and of off-topic ones
    (want <= 0.1), with the off-topic questions that were confident and their best file."""
    asked = sum(r["asked"] for r in per_set)
    off_asked = sum(r["offtopic_asked"] for r in per_set)
    off = [item for r in per_set for item in r["offtopic_confident"]]
    return {
        "real_confident": round(sum(r["confident"] for r in per_set) / max(asked, 1), 4),
        "offtopic_confident": round(len(off) / max(off_asked, 1), 4),
        "offtopic_asked": off_asked,
        "offtopic_confident_questions": off,
    }


# -- ripgrep baseline -----------------------------------------------------------------------

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def rg_terms(question: str) -> list[str]:
    words = [w for w in _WORD.findall(question) if len(w) > 2 and w.lower() not in STOPWORDS]
    return list(dict.fromkeys(words))


def _rg_counts(
    root: Path, terms: list[str], settings: dict[str, tuple[str, ...]]
) -> dict[str, int]:
    """Case-insensitive whole-word match count per file for `terms` (one ripgrep run)."""
    cmd = [
        "rg",
        "--count-matches",
        "--ignore-case",
        "--word-regexp",
        "--no-messages",
        "--fixed-strings",
        "--with-filename",
    ]
    for glob in settings.get("exclude", ()):
        cmd += ["--glob", "!" + glob.rstrip("/")]
    for term in terms:
        cmd += ["-e", term]
    targets = [sub.rstrip("/") for sub in settings.get("include", ())] or ["."]
    proc = subprocess.run(
        [*cmd, "--", *targets], cwd=root, capture_output=True, text=True, check=False
    )
    counts: dict[str, int] = {}
    for line in proc.stdout.splitlines():
        path, _, count = line.rpartition(":")
        if path and count.isdigit():
            counts[path.removeprefix("./")] = int(count)
    return counts


def rg_rank(
    root: Path, question: str, settings: dict[str, tuple[str, ...]], distinct_first: bool = False
) -> list[str]:
    """Files ranked by total matches of the question's terms (the plain grep habit), or,
    with `distinct_first`, by how many different terms a file contains, then by matches
    (a stronger grep user: one run per term)."""
    terms = rg_terms(question)
    if not terms:
        return []
    total = _rg_counts(root, terms, settings)
    if not distinct_first:
        return sorted(total, key=lambda p: (-total[p], p))
    distinct: dict[str, int] = {}
    for term in terms:
        for path in _rg_counts(root, [term], settings):
            distinct[path] = distinct.get(path, 0) + 1
    return sorted(total, key=lambda p: (-distinct.get(p, 0), -total[p], p))


def run_ripgrep(names: tuple[str, ...]) -> dict[str, Any] | None:
    if shutil.which("rg") is None:
        print(
            "ripgrep not installed (apt-get install -y ripgrep); baseline skipped", file=sys.stderr
        )
        return None
    version = subprocess.run(
        ["rg", "--version"], capture_output=True, text=True, check=False
    ).stdout
    variants: dict[str, Any] = {}
    for variant, distinct_first in (("match_count", False), ("distinct_terms_then_count", True)):
        results: list[QuestionResult] = []
        for name in names:
            root = corpus_root(name)
            settings = corpus_settings(name)
            for q in load_questions(questions_path(name)):
                files = rg_rank(root, q.question, settings, distinct_first)
                # One pseudo-result per file: only file-level metrics mean anything for grep.
                ranked = [Retrieved(path, "") for path in files[:TOP_K]]
                results.append(_file_only(q, ranked))
        variants[variant] = {name: s.to_json() for name, s in grouped(results).items()}
    return {
        "version": version.splitlines()[0] if version else "?",
        "terms": "question words of 3+ letters minus the BM25 query stopwords",
        "metric": "file_hit@5 only (grep returns files, not definitions)",
        "variants": variants,
    }


def _file_only(question: Question, ranked: list[Retrieved]) -> QuestionResult:
    from codeqa_lsp.retrieval.evaluation import first_file_rank

    return QuestionResult(
        question,
        rank=None,
        file_rank=first_file_rank(ranked, question.expected),
        retrieved=tuple(ranked),
    )


# -- driver -----------------------------------------------------------------------------------


def run_questions(
    embedders: tuple[str, ...], names: tuple[str, ...], quick: bool
) -> dict[str, Any]:
    """The question sets for every embedder, plus ripgrep; writes quality.json."""
    fetch_all(quiet=True)
    per_embedder: dict[str, Any] = {}
    for embedder in embedders:
        arm_results: dict[str, list[QuestionResult]] = {arm: [] for arm in ARMS}
        arm_sets: dict[str, list[dict[str, Any]]] = {arm: [] for arm in ARMS}
        indexes: dict[str, Any] = {}
        for name in names:
            print(f"[quality] {embedder} · {name}", file=sys.stderr, flush=True)
            result = run_set(name, embedder, ARMS)
            indexes[name] = result["index"]
            for arm in ARMS:
                arm_results[arm].extend(result["arms"][arm]["results"])
                arm_sets[arm].append(result["arms"][arm])
        per_embedder[embedder] = {
            "indexes": indexes,
            "arms": {
                arm: {**report(arm_results[arm]), "confidence": confidence_report(arm_sets[arm])}
                for arm in ARMS
            },
        }
    doc: dict[str, Any] = {
        "description": (
            "Definition-level retrieval on the shared question sets (requests, click, express, "
            "rxjs; 25 questions each). Matching rule and metrics: shared/eval/README.md. "
            "Groups: all, overlap:low/high, set:<name>. 'misses' = not in the top 5."
        ),
        "sets": list(names),
        "top_k": TOP_K,
        "embedders": {**carried_embedders(embedders, names, quick), **per_embedder},
        "ripgrep": run_ripgrep(names),
    }
    write_result("quality", doc, quick)
    return doc


def carried_embedders(
    embedders: tuple[str, ...], names: tuple[str, ...], quick: bool
) -> dict[str, Any]:
    """The previous run's rows for embedders this run leaves out (`--embedders local` keeps
    the hash rows), when it measured the same sets the same way; each keeps the date of the
    run that measured it (`measured`), which the report prints."""
    previous = read_result("quality")
    if not previous or previous.get("sets") != list(names) or bool(previous.get("quick")) != quick:
        return {}
    date = (previous.get("machine") or {}).get("date")
    return {
        name: {"measured": entry.get("measured") or date, **entry}
        for name, entry in (previous.get("embedders") or {}).items()
        if name not in embedders
    }


def run_cosqa(embedders: tuple[str, ...], limit: int | None, quick: bool) -> dict[str, Any]:
    """CoSQA dev for every embedder; writes cosqa.json."""
    doc: dict[str, Any] = {
        "description": (
            "CoSQA dev (500 queries, 6,267 functions, one file per function): rank of the "
            "file holding the query's retrieval_idx function, results collapsed to files."
        ),
        "limit": limit,
        "embedders": {},
    }
    previous = read_result("cosqa")
    if previous and previous.get("limit") == limit:
        # Embedders measured in an earlier run with the same settings are kept (each entry
        # carries its own date), so `--embedders local` does not erase the hash numbers.
        doc["embedders"].update(previous.get("embedders", {}))
    for embedder in embedders:
        print(f"[quality] {embedder} · cosqa", file=sys.stderr, flush=True)
        result = cosqa.run(embedder, ARMS, limit)
        result["date"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        doc["embedders"][embedder] = result
    write_result("cosqa", doc, quick)
    return doc


def print_table(doc: dict[str, Any]) -> None:
    for embedder, data in doc["embedders"].items():
        for arm, result in data["arms"].items():
            groups = result["groups"]
            cells = " ".join(
                f"{g.split(':')[-1]}={groups[g]['hit@5']:.2f}/{groups[g]['mrr@10']:.2f}"
                for g in groups
            )
            conf = result.get("confidence", {})
            print(
                f"{embedder:<6} {arm:<7} hit@5/mrr: {cells} confident: "
                f"real={conf.get('real_confident', 0):.2f} "
                f"offtopic={conf.get('offtopic_confident', 0):.2f}"
            )
    for variant, groups in (doc.get("ripgrep") or {}).get("variants", {}).items():
        print(
            f"ripgrep {variant} file_hit@5: "
            + " ".join(f"{g}={v['file_hit@5']:.2f}" for g, v in groups.items())
        )
    for embedder, data in doc.get("cosqa", {}).get("embedders", {}).items():
        cells = " ".join(f"{arm}={r['ndcg@10']:.3f}" for arm, r in data["arms"].items())
        print(f"cosqa {embedder} ndcg@10: {cells}")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="retrieval quality benchmark")
    parser.add_argument("--quick", action="store_true", help="hash embedder, CoSQA 100 queries")
    parser.add_argument("--embedders", default=None, help="comma-separated (default hash,local)")
    parser.add_argument("--sets", default=",".join(SETS))
    parser.add_argument("--no-cosqa", action="store_true", help="skip CoSQA")
    parser.add_argument("--no-questions", action="store_true", help="CoSQA only")
    parser.add_argument("--cosqa-limit", type=int, default=None)
    args = parser.parse_args(argv)
    embedders = tuple((args.embedders or ("hash" if args.quick else "hash,local")).split(","))
    limit = args.cosqa_limit or (100 if args.quick else None)
    doc: dict[str, Any] = {"embedders": {}}
    if not args.no_questions:
        doc = run_questions(embedders, tuple(args.sets.split(",")), args.quick)
    if not args.no_cosqa:
        doc["cosqa"] = run_cosqa(embedders, limit, args.quick)
    print_table(doc)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
