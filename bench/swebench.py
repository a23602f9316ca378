"""SWE-bench Lite file localisation through the product's own `codeqa search --queries`.

Runs `shared/eval/swebench/swe_eval.py` (the harness: issue text → the files its fix
touched, scored as file Acc@k / Recall@k / MRR) with the CLI of *this* checkout as the ranker,
so what is measured is exactly what a user who pastes a bug report into `codeqa search` gets.

    python bench/swebench.py                    # hash embedder, 6 instances per repo (n=48)
    python bench/swebench.py --embedder local   # the default embedder (slow until onnx lands)
    python bench/swebench.py --baseline         # the harness's BM25 over whole .py files

Indexes go under a private XDG cache (`--cache`), one per tree, so re-runs are warm. Writes
`bench/results/swebench.json` (per embedder: overall, per repo, and every instance whose
gold files are not all in the top 5). Needs the mirrors next to `shared/` (see its README);
without them it says so and exits 0, so a fresh clone's benchmark run does not fail.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import read_result, write_result
from corpora import CACHE_DIR, EVAL_DIR

HARNESS = EVAL_DIR / "swebench" / "swe_eval.py"
MIRRORS = Path(os.environ.get("MIRRORS", str(EVAL_DIR.parent.parent / ".mirror")))
TOP_K = 50


def ranker_command(embedder: str) -> str:
    """The shell template the harness runs per (repo, commit): this checkout's CLI."""
    python = shlex.quote(sys.executable)
    cli = "import sys; from codeqa_lsp.cli import main; sys.exit(main())"
    return (
        f"{python} -c {shlex.quote(cli)} search --root {{root}} --queries {{queries}} "
        f"--json --top-k {TOP_K} --embedder {embedder}"
    )


def mirrors_present() -> bool:
    return HARNESS.is_file() and (MIRRORS / "aorwall+moatless-tools").is_dir()


def run(
    embedder: str | None, per_repo: int, cache: Path, extra: list[str], name: str
) -> dict[str, Any]:
    """One harness run; `embedder` None runs the harness's BM25 baseline."""
    env = dict(os.environ, XDG_CACHE_HOME=str(cache), MIRRORS=str(MIRRORS))
    out = cache / f"rows-{name}.jsonl"
    cmd = [
        sys.executable,
        str(HARNESS),
        "--split",
        "lite",
        "--per-repo",
        str(per_repo),
        "--out",
        str(out),
        *extra,
    ]
    cmd += ["--baseline", "bm25"] if embedder is None else ["--cmd", ranker_command(embedder)]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if not lines:
        raise RuntimeError(f"harness failed (rc={proc.returncode}): {proc.stderr[-1500:]}")
    summary: dict[str, Any] = json.loads(lines[-1])
    rows = [json.loads(line) for line in out.read_text().splitlines() if line.strip()]
    summary["misses@5"] = [
        {
            "id": r["instance_id"],
            "gold": r["gold"],
            "gold_ranks": r["gold_ranks"],
            "top5": r["top10"][:5],
        }
        for r in rows
        if r["metrics"]["acc@5"] < 1.0
    ]
    summary["table"] = "\n".join(
        line for line in proc.stdout.splitlines() if not line.startswith("{")
    )
    summary["date"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    return summary


def result_keys(embedder: str, name: str, subset: str) -> tuple[str, str]:
    """The result keys of a run (baseline, ranker): a `subset` run keeps its own rows, so a
    run over other instances never replaces the default selection's."""
    suffix = f"-{subset}" if subset else ""
    return f"baseline-bm25{suffix}", (name or embedder) + suffix


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embedder", default="hash")
    parser.add_argument("--baseline", action="store_true", help="the harness's BM25 baseline too")
    parser.add_argument("--per-repo", type=int, default=6)
    parser.add_argument("--cache", type=Path, default=CACHE_DIR / "swebench")
    parser.add_argument("--name", default="", help="result key (default: the embedder)")
    parser.add_argument(
        "--subset",
        default="",
        help="a label for a selection other than the default (e.g. with --ids): appended to "
        "every result key of the run, the baseline's included, so the default rows stay",
    )
    args, extra = parser.parse_known_args(argv)
    if not mirrors_present():
        print(
            f"swebench: no harness or mirrors under {EVAL_DIR} / {MIRRORS}; skipped",
            file=sys.stderr,
        )
        return 0
    args.cache.mkdir(parents=True, exist_ok=True)
    doc: dict[str, Any] = read_result("swebench") or {}
    doc.pop("benchmark", None), doc.pop("quick", None), doc.pop("machine", None)
    doc.setdefault(
        "description",
        "SWE-bench Lite issue text → files of the gold patch "
        f"(shared/eval/swebench), per-repo {args.per_repo}, ranker `codeqa search --top-k {TOP_K}`",
    )
    runs = doc.setdefault("runs", {})
    baseline_key, name = result_keys(args.embedder, args.name, args.subset)
    if args.baseline:
        runs[baseline_key] = run(None, args.per_repo, args.cache, extra, baseline_key)
    result = run(args.embedder, args.per_repo, args.cache, extra, name)
    runs[name] = result
    write_result("swebench", doc, quick=False)
    for name, data in runs.items():
        o = data["overall"]
        print(
            f"{name:<16} n={data['n']} Acc@1 {o['acc@1']:.3f} Acc@5 {o['acc@5']:.3f} "
            f"Acc@10 {o['acc@10']:.3f} MRR {o['mrr']:.3f}"
        )
    print(result["table"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
