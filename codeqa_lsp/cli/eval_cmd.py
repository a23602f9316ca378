"""`codeqa eval QUESTIONS.jsonl --root ROOT`: measure retrieval on a question set.

Indexes ROOT (warm start when already indexed), runs every question through each requested
arm (`bm25`, `dense`, `hybrid`: the same `HybridSearcher` the editor uses), and prints
hit@1/5/10, MRR@10 and file hit@5 per arm, split by `lexical_overlap`, with the misses listed
(question, expected, what came back). The question format and the matching rule are those of
the shared evaluation README; see `codeqa_lsp/retrieval/evaluation.py`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codeqa_lsp.cli import CommandError, UsageError, add_root_option, print_json
from codeqa_lsp.config import EMBEDDERS, Settings
from codeqa_lsp.retrieval.evaluation import (
    METRIC_NAMES,
    QuestionFileError,
    Retrieved,
    confidence_shares,
    evaluate,
    load_questions,
    report,
)

if TYPE_CHECKING:
    from codeqa_lsp.retrieval.search import SearchMode

EVAL_TOP_K = 10  # metrics stop at 10


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "eval",
        help="measure retrieval quality on a questions file",
        description="Score retrieval arms on a JSON Lines questions file (see the eval README).",
    )
    parser.add_argument("questions", nargs="+", type=Path, metavar="QUESTIONS.jsonl")
    add_root_option(parser)
    parser.add_argument(
        "--arms",
        default="bm25,dense,hybrid",
        help=(
            "comma-separated arms among bm25, dense, hybrid and keyword (the pipeline without "
            "the query embedding, as served while the embedder loads); default: bm25,dense,hybrid"
        ),
    )
    parser.add_argument("--embedder", choices=EMBEDDERS, default=None)
    parser.add_argument("--index-dir", default=None, help="where the index lives")
    parser.add_argument(
        "--include",
        action="append",
        default=[],
        metavar="GLOB",
        help="index only paths matching GLOB (repeatable)",
    )
    parser.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="GLOB",
        help="skip paths matching GLOB (repeatable)",
    )
    parser.add_argument(
        "--misses", type=int, default=-1, help="list at most N misses per arm (default: all)"
    )
    parser.add_argument("--json", action="store_true", help="one JSON document on stdout")
    parser.set_defaults(func=run)


def parse_arms(value: str) -> tuple[SearchMode, ...]:
    from codeqa_lsp.retrieval.search import MODES

    arms = tuple(dict.fromkeys(a.strip() for a in value.split(",") if a.strip()))
    unknown = [a for a in arms if a not in MODES]
    if not arms or unknown:
        raise UsageError(
            f"--arms: unknown arm(s) {', '.join(unknown) or '(none)'}; choose from "
            f"{', '.join(MODES)}"
        )
    return tuple(mode for arm in arms for mode in MODES if mode == arm)


def run(args: argparse.Namespace) -> int:
    from codeqa_lsp.engine import CodeBase

    arms = parse_arms(args.arms)
    questions = []
    for path in args.questions:
        if not path.is_file():
            raise UsageError(f"no such questions file: {path}")
        try:
            questions.extend(load_questions(path))
        except QuestionFileError as exc:
            raise CommandError(str(exc)) from exc
    settings = Settings()
    changes: dict[str, Any] = {}
    if args.embedder:
        changes["embedder"] = args.embedder
    if args.index_dir:
        changes["index_dir"] = args.index_dir
    if args.include:
        changes["include"] = tuple(args.include)
    if args.exclude:
        changes["exclude"] = tuple(args.exclude)
    settings = settings.replace(**changes)

    workspace = CodeBase(args.root, settings)
    try:
        index_report = workspace.index()
        results: dict[str, Any] = {}
        for arm in arms:
            confident: dict[str, bool] = {}

            def search(
                text: str, arm: SearchMode = arm, confident: dict[str, bool] = confident
            ) -> list[Retrieved]:
                response = workspace.search(text, top_k=EVAL_TOP_K, mode=arm)
                confident[text] = response.confident
                return [
                    Retrieved(h.chunk.path, h.chunk.symbol, h.chunk.part, h.chunk.parts)
                    for h in response.hits
                ]

            results[arm] = report(evaluate(questions, search))
            for q in questions:
                if q.question not in confident:  # off-topic: asked for its confidence only
                    search(q.question)
            results[arm]["confidence"] = confidence_shares(
                questions,
                lambda q: confident[q.question],  # noqa: B023 (called right here, in this pass)
            )
        status = workspace.status()
    finally:
        workspace.close()

    document = {
        "root": str(args.root),
        "questions": [str(p) for p in args.questions],
        "count": len(questions),
        "embedder": status.embedder,
        "embedding_model": status.embedding_model,
        "chunks": index_report.chunks_total or status.chunks,
        "arms": results,
    }
    if args.json:
        print_json(document)
    else:
        _print_text(document, args.misses)
    return 0


def _print_text(document: dict[str, Any], miss_limit: int) -> None:
    out = sys.stdout
    out.write(
        f"{document['count']} questions · {document['chunks']} chunks · "
        f"embedder {document['embedder']} ({document['embedding_model']})\n\n"
    )
    header = f"{'arm':<8} {'group':<22} {'n':>4} " + " ".join(f"{m:>10}" for m in METRIC_NAMES)
    out.write(header + "\n")
    for arm, result in document["arms"].items():
        for group, summary in result["groups"].items():
            values = " ".join(f"{summary[m]:>10.3f}" for m in METRIC_NAMES)
            out.write(f"{arm:<8} {group:<22} {summary['count']:>4} {values}\n")
    for arm, result in document["arms"].items():
        conf = result.get("confidence") or {}
        shares = [
            f"{label} {conf[key]:.0%}"
            for key, label in (("real_confident", "questions"), ("offtopic_confident", "off-topic"))
            if conf.get(key) is not None
        ]
        if shares:
            out.write(f"{arm:<8} confident: {', '.join(shares)}\n")
    for arm, result in document["arms"].items():
        misses = result["misses"]
        if not misses:
            continue
        shown = misses if miss_limit < 0 else misses[:miss_limit]
        out.write(f"\n{arm}: {len(misses)} missed at hit@5\n")
        for miss in shown:
            rank = "not in top 10" if miss["rank"] is None else f"rank {miss['rank']}"
            out.write(f"- [{miss['id']}] {miss['question']}\n")
            out.write(f"    expected: {', '.join(miss['expected'])} ({rank})\n")
            for got in miss["got"]:
                out.write(f"    got: {got}\n")
