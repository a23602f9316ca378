"""The onnxruntime embedder against the torch one it replaced, on every set, in one run.

For each embedder (torch reference, onnxruntime fp32, onnxruntime int8 per-channel): index
the 6,267 CoSQA functions through the real `Indexer`, score the dense and hybrid arms
(nDCG@10, MRR@10), and keep each chunk's vector; then report the cosine agreement of every
variant's vectors with torch's on the same chunk texts, and indexing throughput.
With `--question-kinds`, the same for the 100 shared questions (requests, click, express,
rxjs: hit@5 / MRR@10 per arm, and cosine agreement with the first kind listed).

    python bench/embedders.py [--kinds torch,onnx-fp32,onnx-int8] [--limit N]
                              [--question-kinds onnx-fp32,onnx-int8]

Writes bench/results/embedders.json.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import RESULTS_DIR, machine_info
from corpora import CACHE_DIR
from cosqa import SEARCH_DEPTH, load_queries, run_arm, write_snippets
from reference_embedder import indexer_embedder, make_embedder


def run_kind(
    kind: str, root: Path, queries: list[tuple[str, str]], arms: list[str]
) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    from codeqa_lsp.config import Settings
    from codeqa_lsp.index.indexer import Indexer
    from codeqa_lsp.retrieval.search import HybridSearcher

    embedder = make_embedder(kind)
    index_dir = CACHE_DIR / "indexes" / f"{root.name}-embedders-{kind}"
    settings = Settings(embedder="local", index_dir=str(index_dir))
    with indexer_embedder(lambda: embedder):
        indexer = Indexer(root, settings)
    try:
        started = time.perf_counter()
        cpu0 = time.process_time()
        report = indexer.index()
        index_seconds = time.perf_counter() - started
        searcher = HybridSearcher(indexer, settings)
        results: dict[str, Any] = {}
        for arm in arms:

            def search(text: str, arm: str = arm) -> list[str]:
                return [
                    hit.chunk.path
                    for hit in searcher.search(text, top_k=SEARCH_DEPTH, mode=arm).hits
                ]

            results[arm] = run_arm(queries, search)
        chunks = indexer.chunks()
        texts = [c.embed_text() for c in chunks]
        cached = indexer.cache.get_many(texts, indexer.embedder.dim)
        vectors = {c.id: v for c, v in zip(chunks, cached, strict=True) if v is not None}
        summary = {
            "kind": kind,
            "model": indexer.embedder.model,
            "chunks": len(chunks),
            "embedded": report.embedded,
            "index_seconds": round(index_seconds, 1),
            "index_cpu_seconds": round(time.process_time() - cpu0, 1),
            "chunks_per_second": round(report.embedded / index_seconds, 1)
            if report.embedded
            else None,
            "arms": results,
        }
    finally:
        indexer.close()
    print(json.dumps(summary), file=sys.stderr)
    return summary, vectors


def run_questions_kind(
    kind: str, names: list[str], arms: list[str]
) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The question sets through the real pipeline with embedder `kind`, each in its own
    index (`<set>-embedders-<kind>`: never the shared `<set>-local` ones other runs use)."""
    from corpora import corpus_root, corpus_settings, fetch_all, questions_path

    from codeqa_lsp.config import Settings
    from codeqa_lsp.index.indexer import Indexer
    from codeqa_lsp.retrieval.evaluation import (
        QuestionResult,
        Retrieved,
        evaluate,
        load_questions,
        report,
    )
    from codeqa_lsp.retrieval.search import HybridSearcher

    fetch_all(quiet=True)
    embedder = make_embedder(kind)
    results: dict[str, list[QuestionResult]] = {arm: [] for arm in arms}
    vectors: dict[str, np.ndarray] = {}
    indexes: dict[str, Any] = {}
    for name in names:
        settings = Settings(
            embedder="local",
            index_dir=str(CACHE_DIR / "indexes" / f"{name}-embedders-{kind}"),
            **corpus_settings(name),
        )  # type: ignore[arg-type]
        with indexer_embedder(lambda: embedder):
            indexer = Indexer(corpus_root(name), settings)
        try:
            started = time.perf_counter()
            done = indexer.index()
            indexes[name] = {
                "chunks": indexer.status().chunks,
                "embedded": done.embedded,
                "seconds": round(time.perf_counter() - started, 1),
            }
            searcher = HybridSearcher(indexer, settings)
            questions = load_questions(questions_path(name))
            for arm in arms:

                def search(
                    text: str, arm: str = arm, searcher: HybridSearcher = searcher
                ) -> list[Retrieved]:
                    hits = searcher.search(text, top_k=10, mode=arm).hits  # type: ignore[arg-type]
                    return [
                        Retrieved(h.chunk.path, h.chunk.symbol, h.chunk.part, h.chunk.parts)
                        for h in hits
                    ]

                results[arm].extend(evaluate(questions, search))
            chunks = indexer.chunks()
            cached = indexer.cache.get_many([c.embed_text() for c in chunks], indexer.embedder.dim)
            vectors.update(
                {f"{name}:{c.id}": v for c, v in zip(chunks, cached, strict=True) if v is not None}
            )
        finally:
            indexer.close()
    summary = {
        "kind": kind,
        "model": embedder.model,
        "indexes": indexes,
        "arms": {
            arm: {
                g: m
                for g, m in report(results[arm])["groups"].items()
                if g == "all" or g.startswith(("set:", "overlap:"))
            }
            for arm in arms
        },
    }
    print(
        json.dumps({"kind": kind, "all": {a: summary["arms"][a]["all"] for a in arms}}),
        file=sys.stderr,
    )
    return summary, vectors


def sample_root(root: Path, queries: list[tuple[str, str]], size: int) -> Path:
    """A smaller CoSQA corpus for a loaded machine: every query's answer plus evenly spread
    distractors up to `size` files (easier than the full 6,267, so compare embedders on it,
    not with full-set numbers)."""
    answers = {wanted for _, wanted in queries}
    others = sorted(
        (p.name for p in root.iterdir() if p.name not in answers),
        key=lambda n: int(n.split(".")[0]),
    )
    room = max(0, size - len(answers))
    step = max(1, len(others) // room) if room else len(others) + 1
    chosen = answers | set(others[::step][:room])
    small = CACHE_DIR / "cosqa" / f"sample-{size}-{len(queries)}"
    small.mkdir(parents=True, exist_ok=True)
    for name in chosen:
        if not (small / name).is_file():
            (small / name).write_text((root / name).read_text())
    return small


def agreement(reference: dict[str, np.ndarray], other: dict[str, np.ndarray]) -> dict[str, float]:
    common = sorted(reference.keys() & other.keys())
    a = np.stack([reference[k] for k in common])
    b = np.stack([other[k] for k in common])
    cos = (a * b).sum(axis=1)
    return {
        "count": len(common),
        "mean": round(float(cos.mean()), 5),
        "min": round(float(cos.min()), 5),
        "p01": round(float(np.percentile(cos, 1)), 5),
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kinds", default="torch,onnx-fp32,onnx-int8")
    parser.add_argument("--arms", default="dense,hybrid")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--out", default=str(RESULTS_DIR / "embedders.json"))
    parser.add_argument(
        "--sample",
        type=int,
        default=None,
        help="index only N functions: the queries' answers plus evenly spread others",
    )
    parser.add_argument(
        "--question-kinds",
        default="",
        help="also run the 100 questions with these kinds (first = cosine reference)",
    )
    parser.add_argument("--sets", default="requests,click,express,rxjs")
    args = parser.parse_args(argv)
    root = write_snippets()
    queries = load_queries(args.limit)
    if args.sample:
        root = sample_root(root, queries, args.sample)
    runs: dict[str, Any] = {}
    vectors: dict[str, dict[str, np.ndarray]] = {}
    load0 = os.getloadavg()[0]
    for kind in filter(None, args.kinds.split(",")):  # --kinds "" skips CoSQA
        runs[kind], vectors[kind] = run_kind(kind, root, queries, args.arms.split(","))
    doc: dict[str, Any] = {
        "machine": machine_info(),
        "load_average_start": round(load0, 2),
        "set": "cosqa-dev",
        "queries": len(queries),
        "runs": runs,
    }
    # The reference is torch when it ran, else the first kind (onnx-fp32 reproduces torch:
    # cosine 1.0000 on every CoSQA chunk of the 2026-11-23 sample run, and in the tests).
    if vectors:
        ref = "torch" if "torch" in vectors else next(iter(vectors))
        doc[f"cosine_to_{ref}"] = {
            k: agreement(vectors[ref], v) for k, v in vectors.items() if k != ref
        }
    if args.question_kinds:
        kinds = args.question_kinds.split(",")
        q_runs: dict[str, Any] = {}
        q_vectors: dict[str, dict[str, np.ndarray]] = {}
        for kind in kinds:
            q_runs[kind], q_vectors[kind] = run_questions_kind(
                kind, args.sets.split(","), ["bm25", "dense", "hybrid"]
            )
        doc["questions"] = {
            "sets": args.sets.split(","),
            "runs": q_runs,
            f"cosine_to_{kinds[0]}": {
                k: agreement(q_vectors[kinds[0]], v) for k, v in q_vectors.items() if k != kinds[0]
            },
        }
    doc["load_average_end"] = round(os.getloadavg()[0], 2)
    Path(args.out).write_text(json.dumps(doc, indent=2) + "\n")
    print(json.dumps(doc, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
