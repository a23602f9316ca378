"""The measurements `speed.py` runs in a fresh process (`speed.py --child TASK JSON`), so each
peak RSS is that measurement's own: didSave, query latency, an index with a given embedder,
the query-embedding cost."""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import latency_summary, self_peak_rss_mb

EDIT_MARK = "codeqa bench edit"


# -- child tasks (run in their own process) -----------------------------------------------------


def _workspace(root: str, index_dir: str, embedder: str) -> Any:
    from codeqa_lsp.config import Settings
    from codeqa_lsp.engine import CodeBase

    return CodeBase(Path(root), Settings(embedder=embedder, index_dir=index_dir))  # type: ignore[arg-type]


def child_update(root: str, index_dir: str, embedder: str, edits: int) -> dict[str, Any]:
    """didSave of a ~1,000-line file, `edits` times, each changing one different function.

    The edit appends a comment to the function's last line: its text changes, its line
    count and every other definition stay as they were.
    """
    ws = _workspace(root, index_dir, embedder)
    warm = ws.index()
    started = time.perf_counter()
    ws.indexer.embed_query("load the model before timing")  # the server has it loaded too
    model_load_s = time.perf_counter() - started
    files = {c.path for c in ws.chunks()}
    lines = {p: len((ws.root / p).read_text().splitlines()) for p in files}
    target = min(lines, key=lambda p: abs(lines[p] - 1000))
    functions = [
        c for c in ws.chunks(path=target) if c.kind in ("function", "method") and c.parts == 1
    ]
    functions.sort(key=lambda c: c.start_line)
    step = max(1, len(functions) // (edits + 1))
    runs = []
    for i in range(edits):
        fn = functions[min(len(functions) - 1, (i + 1) * step)]
        path = ws.root / target
        text_lines = path.read_text().splitlines(keepends=True)
        token = f"zqxv{i}bench"
        last = text_lines[fn.end_line - 1]
        text_lines[fn.end_line - 1] = last.rstrip("\r\n") + f"  # {EDIT_MARK} {token}\n"
        path.write_text("".join(text_lines))
        t0 = time.perf_counter()
        report = ws.update_file(target)
        updated = time.perf_counter() - t0
        keyword_hits = ws.searcher.search(token, top_k=5, mode="bm25").hits
        searchable = time.perf_counter() - t0
        hybrid_hits = ws.search(token, top_k=5).hits
        runs.append(
            {
                "symbol": fn.symbol,
                "chunks_added": report.chunks_added,
                "chunks_removed": report.chunks_removed,
                "embedded": report.embedded,
                "update_s": round(updated, 4),
                "searchable_s": round(searchable, 4),
                "found_bm25": any(token in h.chunk.text for h in keyword_hits),
                "found_hybrid_top5": any(token in h.chunk.text for h in hybrid_hits),
            }
        )
    ws.close()
    return {
        "file": target,
        "file_lines": lines[target],
        "warm_index_embedded": warm.embedded,
        "model_load_s": round(model_load_s, 2),
        "edits": runs,
        "embedded_max": max(r["embedded"] for r in runs) if runs else None,
        "searchable_s_median": round(statistics.median(r["searchable_s"] for r in runs), 4)
        if runs
        else None,
        "all_found_bm25": all(r["found_bm25"] for r in runs),
        "all_found_hybrid_top5": all(r["found_hybrid_top5"] for r in runs),
        "self_peak_rss_mb": self_peak_rss_mb(),
    }


def child_latency(
    root: str, index_dir: str, embedder: str, query_embedder: str, queries: list[str]
) -> dict[str, Any]:
    """Retrieval-only latency (hybrid `CodeBase.search`, top 8) over distinct queries.

    With `query_embedder` different from `embedder` (an index built with `hash`, queried
    with `local`), queries are embedded by MiniLM while the stored vectors come from the
    hashing embedder: same dimension (384), same hnswlib index, so each query does exactly
    the work of a MiniLM-built index of that size, and the ~1k and ~10k points need no
    MiniLM indexing run; the rankings are meaningless, the timings are not. Real MiniLM
    indexes are measured too: click/src, and the large tree when `speed.py --large local`
    has built one (~30 minutes on 2 cores).
    """
    ws = _workspace(root, index_dir, embedder)
    if query_embedder != embedder:
        from codeqa_lsp.index.embedders.local import LocalEmbedder

        if query_embedder != "local":
            raise ValueError(f"unsupported query embedder {query_embedder}")
        ws.indexer._base_embedder = LocalEmbedder()
        # The search steps chosen per embedder follow the query embedder too: with MiniLM a
        # question's BM25 arm also runs the dense arm's feedback words (`feedback.py`).
        from codeqa_lsp.retrieval.feedback import feedback_for
        from codeqa_lsp.retrieval.fusion import fusion_for

        ws.searcher.fusion = fusion_for(query_embedder)
        ws.searcher.feedback = feedback_for(query_embedder)
    chunks = ws.status().chunks
    coverage = ws.indexer.coverage()  # < 1 would mean the dense arm is (partly) skipped
    for text in ("warm up: load the model", "and open the index", "and the thread pool"):
        ws.search(text, top_k=8)
    seconds = []
    embed_seconds = []
    for text in queries:
        t0 = time.perf_counter()
        ws.search(text, top_k=8)
        seconds.append(time.perf_counter() - t0)
    # Retrieval alone: the same queries again, their vectors now in the indexer's query
    # cache (nothing else is cached between searches), so this is everything a search does
    # except the embedder's forward pass: issue 12's "p95 excluding the query embedding".
    retrieval_seconds = []
    for text in queries:
        t0 = time.perf_counter()
        ws.search(text, top_k=8)
        retrieval_seconds.append(time.perf_counter() - t0)
    for text in queries[:20]:  # the query-embedding share, on texts not seen before
        t0 = time.perf_counter()
        ws.indexer._base_embedder.embed([text + " ?"])
        embed_seconds.append(time.perf_counter() - t0)
    ws.close()
    return {
        "chunks": chunks,
        "coverage": coverage,
        "latency": latency_summary(seconds),
        "retrieval": latency_summary(retrieval_seconds),
        "query_embedding": latency_summary(embed_seconds),
        "self_peak_rss_mb": self_peak_rss_mb(),
    }


def child_index(root: str, index_dir: str, kind: str) -> dict[str, Any]:
    """A clean index with a given embedder (`torch`, `onnx-int8`, ...; see
    reference_embedder.py) through the real `Indexer`, as `codeqa index` does it."""
    from reference_embedder import indexer_embedder, make_embedder

    from codeqa_lsp.config import Settings
    from codeqa_lsp.index.indexer import Indexer

    embedder = make_embedder(kind)
    with indexer_embedder(lambda: embedder):
        indexer = Indexer(Path(root), Settings(embedder="local", index_dir=index_dir))
    try:
        report = indexer.index()
        status = indexer.status()
    finally:
        indexer.close()
    return {
        "kind": kind,
        "embedding_model": status.embedding_model,
        "chunks": status.chunks,
        "embedded": report.embedded,
        "index_seconds": round(report.seconds, 2),
    }


def child_query_embed(kind: str, texts: list[str]) -> dict[str, Any]:
    """One short question at a time, as `search` embeds it: the load (import, tokenizer,
    session) and the first call, then every later call (each text distinct: no cache)."""
    started = time.perf_counter()
    from reference_embedder import make_embedder

    embedder = make_embedder(kind)
    embedder.embed([texts[0]])
    first = time.perf_counter() - started
    seconds = []
    for text in texts[1:]:
        t0 = time.perf_counter()
        embedder.embed([text])
        seconds.append(time.perf_counter() - t0)
    return {"kind": kind, "load_and_first_s": round(first, 3), "query": latency_summary(seconds)}


CHILD_TASKS = {
    "update": child_update,
    "latency": child_latency,
    "index": child_index,
    "query_embed": child_query_embed,
}
