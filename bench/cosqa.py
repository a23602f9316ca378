"""CoSQA dev (500 web queries over 6,267 Python functions) through the real pipeline.

Each function is written to its own file `snippets/<id>.py`, the folder is indexed by the
same `Indexer` the editor uses, and each query runs through `HybridSearcher` per arm. The
score is the rank of the *file* whose id is the query's `retrieval_idx` (results collapsed to
distinct files): nDCG@10 (one relevant item: 1/log2(rank+1)) and MRR@10.

    python bench/cosqa.py [--embedder local|hash] [--arms bm25,dense,hybrid] [--limit N]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpora import CACHE_DIR, EVAL_DIR, open_searcher

COSQA_DIR = EVAL_DIR / "cosqa"
SNIPPETS_DIR = CACHE_DIR / "cosqa" / "snippets"
SEARCH_DEPTH = 30  # chunks fetched per query before collapsing to files (>= 10 files)


def write_snippets() -> Path:
    """One file per function, idempotent (a file is rewritten only when its text differs)."""
    mapping: dict[str, int] = json.loads((COSQA_DIR / "code_idx_map.txt").read_text())
    SNIPPETS_DIR.mkdir(parents=True, exist_ok=True)
    for code, idx in mapping.items():
        path = SNIPPETS_DIR / f"{idx}.py"
        text = code if code.endswith("\n") else code + "\n"
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
    return SNIPPETS_DIR


def load_queries(limit: int | None = None) -> list[tuple[str, str]]:
    """(query text, expected file name) pairs of the dev split."""
    raw = json.loads((COSQA_DIR / "cosqa-retrieval-dev-500.json").read_text())
    pairs = [(item["doc"], f"{item['retrieval_idx']}.py") for item in raw]
    return pairs[:limit] if limit else pairs


def file_rank(paths: Sequence[str], wanted: str) -> int | None:
    """Rank of `wanted` among the distinct files of a ranked chunk list."""
    distinct = list(dict.fromkeys(paths))
    return distinct.index(wanted) + 1 if wanted in distinct else None


def score(ranks: Sequence[int | None]) -> dict[str, float]:
    n = len(ranks) or 1
    in10 = [r for r in ranks if r is not None and r <= 10]
    return {
        "count": len(ranks),
        "ndcg@10": round(sum(1 / math.log2(r + 1) for r in in10) / n, 4),
        "mrr@10": round(sum(1 / r for r in in10) / n, 4),
        "hit@1": round(sum(1 for r in in10 if r == 1) / n, 4),
        "hit@10": round(len(in10) / n, 4),
    }


def run_arm(
    queries: Sequence[tuple[str, str]], search: Callable[[str], Sequence[str]]
) -> dict[str, Any]:
    started = time.perf_counter()
    ranks = [file_rank(search(text), wanted) for text, wanted in queries]
    result = score(ranks)
    result["seconds"] = round(time.perf_counter() - started, 2)
    return result


def run(
    embedder: str,
    arms: Sequence[str],
    limit: int | None = None,
    searcher_factory: Callable[[Any], Any] | None = None,
) -> dict[str, Any]:
    """Index the snippets with `embedder` and score each arm. Returns JSON-ready results."""
    root = write_snippets()
    queries = load_queries(limit)
    base, index_seconds = open_searcher("cosqa", root, embedder)
    try:
        searcher = searcher_factory(base) if searcher_factory else base
        results: dict[str, Any] = {}
        for arm in arms:

            def search(text: str, arm: str = arm) -> list[str]:
                response = searcher.search(text, top_k=SEARCH_DEPTH, mode=arm)
                return [hit.chunk.path for hit in response.hits]

            results[arm] = run_arm(queries, search)
        status = base.indexer.status()
    finally:
        base.indexer.close()
    return {
        "set": "cosqa-dev",
        "embedder": status.embedder,
        "embedding_model": status.embedding_model,
        "chunks": status.chunks,
        "files": status.files,
        "index_seconds": round(index_seconds, 1),
        "arms": results,
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embedder", default="local")
    parser.add_argument("--arms", default="bm25,dense,hybrid")
    parser.add_argument("--limit", type=int, default=None, help="first N queries only")
    args = parser.parse_args(argv)
    result = run(args.embedder, args.arms.split(","), args.limit)
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
