"""Held-out questions over repositories in the languages the question sets do not cover.

The shared question sets are Python, JavaScript and TypeScript; the product indexes twelve
languages. `tryout_questions.jsonl` holds 89 real questions over nine public repositories
(Go, Rust, Java, Ruby, C, C++, C#, PHP and one more Python library), written on 2026-11-26 by
reading each repository as a new user would, before any ranking was looked at, and never
used to tune anything. Two styles: *direct* questions use the project's own words ("how is
the bash completion script generated"); *paraphrased* ones avoid them, like the shared
sets' low-overlap questions ("how does a child command inherit options declared on its
ancestors?"). A third style, *offtopic* (45, five per repository, added 2026-11-26 before
they were run), asks about what the repository does not do: four questions no such project
answers ("how are uploaded images resized into thumbnails?") and one near its domain ("how
are log files uploaded to a cloud storage bucket?" of a logging library), each checked with
grep. The honest answer is "no confident source". With them the benchmark
checks the confidence floor on code it was not set on: the share of real questions answered
confidently (want at least 0.90) and of off-topic ones (want at most 0.10), by the same
`evaluation.confidence_shares` the question sets use.

A result answers a question when its symbol contains one of the question's expected names
(`Command.ValidateRequiredFlags` answers "validateRequiredFlags"-style expectations; names are
as the chunker writes them): looser than the shared sets' path + symbol matcher, because the
expectations were written from reading the code, not from the index.

Trees are exported from the git mirrors the search tool's `fetch` leaves (`<mirrors>/
<owner>+<name>/repo`, the same folder as the SWE-bench harness's), at the pinned commits;
without them the benchmark says so and exits 0.

    python bench/tryout.py [--embedder local] [--mirrors DIR]

Writes bench/results/tryout.json: hit@5 and MRR@10 per arm (bm25, dense, hybrid), per style
and per repository, every question the hybrid pipeline misses, and the confident shares.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tarfile
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import write_result
from corpora import CACHE_DIR
from swebench import MIRRORS

from codeqa_lsp.retrieval.evaluation import Expected, Question, confidence_shares, question_metrics

QUESTIONS = Path(__file__).resolve().parent / "tryout_questions.jsonl"
WORK = CACHE_DIR / "tryout"
ARMS = ("bm25", "dense", "hybrid")
TOP_K = 10
OFFTOPIC = "offtopic"  # the style of questions the repository has no answer to


def load_questions(path: Path = QUESTIONS) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def answer_rank(symbols: Sequence[str], expected: Iterable[str]) -> int | None:
    """1-based rank of the first result whose symbol contains an expected name."""
    names = tuple(expected)
    return next((i for i, s in enumerate(symbols, 1) if any(n in s for n in names)), None)


def score(ranks: Sequence[int | None]) -> dict[str, float | int]:
    """hit@5 and MRR@10 of a list of answer ranks (None: not in the results), by the
    question sets' own per-question metrics (`evaluation.question_metrics`)."""
    per_question = [question_metrics(rank, None) for rank in ranks]
    n = len(per_question)
    return {
        "count": n,
        **{
            name: round(sum(m[name] for m in per_question) / n, 4) if n else 0.0
            for name in ("hit@5", "mrr@10")
        },
    }


def export_tree(repo: str, commit: str, mirrors: Path) -> Path | None:
    """The repository's tree at `commit`, exported once from its bare mirror."""
    git_dir = mirrors / repo.replace("/", "+") / "repo"
    dest = WORK / "trees" / f"{repo.replace('/', '+')}@{commit[:12]}"
    if (dest / ".complete").is_file():
        return dest
    if not git_dir.is_dir():
        return None
    dest.mkdir(parents=True, exist_ok=True)
    archive = dest.with_suffix(".tar")
    with archive.open("wb") as out:
        subprocess.run(
            ["git", "--git-dir", str(git_dir), "archive", commit], stdout=out, check=True
        )
    with tarfile.open(archive) as tar:
        tar.extractall(dest, filter="data")
    archive.unlink()
    (dest / ".complete").touch()
    return dest


def run(embedder: str, mirrors: Path) -> dict[str, Any] | None:
    from codeqa_lsp.config import Settings
    from codeqa_lsp.index.indexer import Indexer
    from codeqa_lsp.retrieval.search import HybridSearcher

    questions = load_questions()
    by_repo: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for q in questions:
        by_repo.setdefault((q["repo"], q["commit"]), []).append(q)
    rows: list[dict[str, Any]] = []
    indexes: dict[str, Any] = {}
    for (repo, commit), asked in by_repo.items():
        root = export_tree(repo, commit, mirrors)
        if root is None:
            print(f"tryout: no mirror of {repo} under {mirrors}; skipped", file=sys.stderr)
            continue
        name = f"{repo.replace('/', '+')}@{commit[:12]}-{embedder}"
        config = Settings(embedder=embedder, index_dir=str(WORK / "indexes" / name))  # type: ignore[arg-type]
        indexer = Indexer(root, config)
        started = time.perf_counter()
        try:
            report = indexer.index()
            status = indexer.status()
            indexes[repo] = {
                "commit": commit,
                "files": status.files,
                "chunks": status.chunks,
                "languages": status.languages,
                "seconds": round(time.perf_counter() - started, 1),
                "embedded": report.embedded,
            }
            searcher = HybridSearcher(indexer, config)
            for q in asked:
                row = {k: q[k] for k in ("repo", "question", "expected", "style")}
                for arm in ARMS if q["style"] != OFFTOPIC else ("hybrid",):
                    response = searcher.search(q["question"], top_k=TOP_K, mode=arm)  # type: ignore[arg-type]
                    hits = response.hits
                    row[arm] = answer_rank([h.chunk.symbol for h in hits], q["expected"])
                    if arm == "hybrid":
                        row["top5"] = [f"{h.chunk.path}:{h.chunk.symbol}" for h in hits[:5]]
                        row["confident"] = response.confident
                rows.append(row)
        finally:
            indexer.close()
    if not rows:
        return None
    real = [r for r in rows if r["style"] != OFFTOPIC]
    return {
        "embedder": embedder,
        "questions": QUESTIONS.name,
        "indexes": indexes,
        "arms": {arm: summarize(real, arm) for arm in ARMS},
        "misses": [
            {k: r[k] for k in ("repo", "style", "question", "expected", "hybrid", "top5")}
            for r in real
            if r["hybrid"] is None or r["hybrid"] > 5
        ],
        "confidence": confidence(rows),
    }


def confidence(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The hybrid pipeline's confident shares, over all repositories and per repository,
    with the confident off-topic questions and the real questions it was unsure of."""

    def shares(group: Sequence[dict[str, Any]]) -> dict[str, Any]:
        questions = [
            Question(str(i), r["question"], tuple(Expected(r["repo"], e) for e in r["expected"]))
            for i, r in enumerate(group)
        ]
        sure = {str(i) for i, r in enumerate(group) if r["confident"]}
        return confidence_shares(questions, lambda q: q.id in sure)

    out = shares(rows)
    out["real_count"] = sum(1 for r in rows if r["expected"])
    out["real_unconfident_questions"] = [
        r["question"] for r in rows if r["expected"] and not r["confident"]
    ]
    out["offtopic_confident_questions"] = [
        {"repo": r["repo"], "question": r["question"], "best": (r["top5"] or ["-"])[0]}
        for r in rows
        if not r["expected"] and r["confident"]
    ]
    by_repo: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        by_repo.setdefault(r["repo"], []).append(r)
    out["repos"] = {}
    for repo, group in by_repo.items():
        found = shares(group)
        out["repos"][repo] = {k: found[k] for k in ("real_confident", "offtopic_confident")}
    return out


def summarize(rows: Sequence[dict[str, Any]], arm: str) -> dict[str, Any]:
    """An arm's scores over all questions, per style and per repository."""
    groups: dict[str, list[int | None]] = {"all": []}
    for r in rows:
        for key in ("all", f"style:{r['style']}", f"repo:{r['repo']}"):
            groups.setdefault(key, []).append(r[arm])
    return {key: score(ranks) for key, ranks in groups.items()}


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--embedder", default="local", choices=["local", "hash"])
    parser.add_argument("--mirrors", type=Path, default=MIRRORS)
    args = parser.parse_args(list(argv))
    doc = run(args.embedder, args.mirrors)
    if doc is None:
        print(f"tryout: no mirrors under {args.mirrors}; skipped", file=sys.stderr)
        return 0
    path = write_result("tryout", doc, quick=False)
    for arm, groups in doc["arms"].items():
        styles = ", ".join(
            f"{k.split(':', 1)[1]} {v['hit@5']:.2f}/{v['mrr@10']:.3f}"
            for k, v in groups.items()
            if k.startswith("style:")
        )
        print(f"{arm:7} all {groups['all']['hit@5']:.2f}/{groups['all']['mrr@10']:.3f}  {styles}")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
