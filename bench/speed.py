"""Speed and memory: full index, warm start, didSave, query latency at scale, RSS, disk.

    python bench/speed.py            # full (about 5 minutes on 2 cores, 2026-11-26)
    python bench/speed.py --quick    # hash embedder only, no large tree, no VectorCode

Every measurement runs in a fresh subprocess (the `codeqa` CLI, or this script with
`--child TASK`) so each peak RSS is that measurement's own, sampled over the whole process
tree exactly as VectorCode's is (`common.run_measured`). Wall times include interpreter
start, imports and model load, as a user running `codeqa index` would see them.

What is measured (issue 8):
* full index on a clean cache of click-8.1.7/src (`hash`, `local`), VectorCode on the same
  tree interleaved with ours (targets: <= 1/3 of its wall time, <= 1/2 of its peak RSS);
* the same on the large tree (>= 5,000 files); `local` there only with `--large-local`
  (or alone: `--large local`), because the tree holds ~100k chunks and MiniLM embeds ~50
  a second on 2 cores (about half an hour);
* warm start (nothing changed): texts embedded must be 0;
* didSave: `CodeBase.update_file` on a ~1,000-line file after one function changed:
  chunks re-embedded (must be 1) and time until a search finds the change;
* query latency p50/p95 at ~1k, ~10k, ~100k chunks (retrieval only, MiniLM query
  embedding; see `speed_children.child_latency` for how the large indexes get
  their vectors);
* index size on disk per 1k chunks.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (
    run_measured,
    write_result,
)
from corpora import corpus_root
from speed_children import CHILD_TASKS
from speed_runs import (
    CLI,
    WORK_DIR,
    child,
    cli_index,
    click_src_copy,
    fresh_dir,
    isolated_env,
    measured_json,
    questions,
)

SCALE_POINTS = (1_000, 10_000)  # the ~100k point is the large tree itself


def measure_click_src(
    embedders: tuple[str, ...], repeats: int, with_vectorcode: bool
) -> dict[str, Any]:
    """Clean + warm index per embedder; VectorCode interleaved with our `local` runs."""
    root = click_src_copy()
    out: dict[str, Any] = {"root": "click-8.1.7/src", "runs": {}}
    vc_runs: list[dict[str, Any]] = []
    for embedder in embedders:
        clean = []
        for i in range(repeats):
            work = fresh_dir(f"click-{embedder}-{i}")
            print(f"[speed] click/src · {embedder} · clean #{i + 1}", file=sys.stderr, flush=True)
            clean.append(cli_index(root, embedder, work / "index", "clean"))
            if with_vectorcode and embedder == "local":
                vc_runs.append(vectorcode_click_src())
        warm = cli_index(root, embedder, WORK_DIR / f"click-{embedder}-0" / "index", "warm")
        out["runs"][embedder] = {"clean": clean, "clean_median": _median_run(clean), "warm": warm}
    if vc_runs:
        ok = [r for r in vc_runs if r.get("ok")]
        out["vectorcode"] = {"runs": vc_runs, "clean_median": _median_run(ok) if ok else None}
    return out


def vectorcode_click_src() -> dict[str, Any]:
    from peers import VectorCode

    missing = VectorCode.available(lsp=False)
    if missing:
        return {"ok": False, "error": missing}
    print("[speed] click/src · VectorCode · clean", file=sys.stderr, flush=True)
    vc = VectorCode("speed-click-src")
    root = corpus_root("click") / "src"
    result = vc.index(root, [root])
    result["version"] = vc.version()
    return result


def _median_run(runs: list[dict[str, Any]]) -> dict[str, Any] | None:
    ok = sorted((r for r in runs if r.get("ok")), key=lambda r: r["wall_s"])
    if not ok:
        return None
    median = dict(ok[len(ok) // 2])
    median["wall_s_all"] = [r["wall_s"] for r in runs if r.get("ok")]
    median["tree_peak_rss_mb_max"] = max(r["tree_peak_rss_mb"] for r in ok)
    return median


def measure_large(embedders: tuple[str, ...]) -> dict[str, Any]:
    from speed_trees import large_tree, tree_info

    root = large_tree()
    out: dict[str, Any] = {"tree": tree_info(root), "runs": {}}
    for embedder in embedders:
        work = fresh_dir(f"large-{embedder}")
        print(f"[speed] large tree · {embedder} · clean", file=sys.stderr, flush=True)
        clean = cli_index(root, embedder, work / "index", "clean")
        print(f"[speed] large tree · {embedder} · warm", file=sys.stderr, flush=True)
        warm = cli_index(root, embedder, work / "index", "warm")
        out["runs"][embedder] = {"clean": clean, "warm": warm, "index_dir": str(work / "index")}
    return out


def measure_scale(
    large: dict[str, Any] | None,
    click_local_index: Path | None,
    root_click: Path | None,
    query_embedder: str,
    n_queries: int,
    points: tuple[int, ...],
) -> list[dict[str, Any]]:
    from speed_trees import subset_tree

    from codeqa_lsp.config import Settings

    texts = questions(n_queries)
    out = []
    if click_local_index is not None and root_click is not None:
        print("[speed] latency · click/src, real MiniLM index", file=sys.stderr, flush=True)
        r = child(
            "latency",
            root=str(root_click),
            index_dir=str(click_local_index),
            embedder="local",
            query_embedder="local",
            queries=texts,
        )
        out.append({"point": "click/src", "vectors": "local", **r})
    for target in points:
        tree = subset_tree(target, Settings().chunk_tokens)
        work = fresh_dir(f"scale-{target}")
        index = cli_index(tree, "hash", work / "index", "clean")
        print(f"[speed] latency · ~{target} chunks", file=sys.stderr, flush=True)
        r = child(
            "latency",
            root=str(tree),
            index_dir=str(work / "index"),
            embedder="hash",
            query_embedder=query_embedder,
            queries=texts,
        )
        out.append({"point": f"~{target}", "vectors": "hash", "index": index, **r})
    if large and "hash" in large["runs"] and large["runs"]["hash"]["clean"].get("ok"):
        from speed_trees import large_tree

        print("[speed] latency · large tree", file=sys.stderr, flush=True)
        r = child(
            "latency",
            root=str(large_tree()),
            index_dir=large["runs"]["hash"]["index_dir"],
            embedder="hash",
            query_embedder=query_embedder,
            queries=texts,
        )
        out.append({"point": "large", "vectors": "hash", **r})
    local_large = _large_local_index(large)
    if local_large is not None:
        from speed_trees import large_tree

        print("[speed] latency · large tree, real MiniLM index", file=sys.stderr, flush=True)
        r = child(
            "latency",
            root=str(large_tree()),
            index_dir=str(local_large),
            embedder="local",
            query_embedder="local",
            queries=texts,
        )
        out.append({"point": "large", "vectors": "local", **r})
    return out


def _large_local_index(large: dict[str, Any] | None) -> Path | None:
    """The large tree's real MiniLM index: this run's (`--large-local`), else the one an
    earlier `--large local` run left (it takes ~30 minutes to build, so the latency points
    reuse it; a warm start re-embeds only what changed in the tree since)."""
    run = ((large or {}).get("runs") or {}).get("local") or {}
    if (run.get("clean") or {}).get("ok"):
        return Path(run["index_dir"])
    left = WORK_DIR / "large-local" / "index"
    return left if left.is_dir() else None


def measure_soak(files: int = 50_000) -> dict[str, Any]:
    """Issue 9's resource bound through the index engineer's own soak worker: 50,000 small
    files (the same content as `tests/index/test_soak.py`), `hash` embedder."""
    from common import REPO_ROOT

    if not (REPO_ROOT / "tests" / "index" / "soak_worker.py").exists():
        return {"ok": False, "error": "tests/index/soak_worker.py missing"}
    root = WORK_DIR / f"soak-{files}"
    marker = root / ".complete"
    if not marker.exists():
        shutil.rmtree(root, ignore_errors=True)
        for i in range(files):
            directory = root / f"d{i // 500}"
            directory.mkdir(parents=True, exist_ok=True)
            (directory / f"m{i}.py").write_text(
                f"def handler_{i}(event):\n    return event.get('k{i}')\n"
            )
        marker.write_text(str(files))
    work = fresh_dir("soak-index")
    print(f"[speed] soak · {files} small files", file=sys.stderr, flush=True)
    return measured_json(
        [sys.executable, "-m", "tests.index.soak_worker", str(root), str(work / "index")],
        work,
        cwd=REPO_ROOT,
    )


def default_kind() -> str:
    """The `make_embedder` kind that runs what `local` runs here."""
    from codeqa_lsp.index.embedders.local import LocalEmbedder

    embedder = LocalEmbedder()
    return f"openvino-{embedder.variant}" if embedder.bulk else f"onnx-{embedder.variant}"


def measure_embedders(kinds: tuple[str, ...], search_calls: int = 7) -> dict[str, Any]:
    """The onnxruntime embedder against the torch one it replaced, same run, same tree
    (click/src), each clean index in its own process: chunks/s (embedded chunks over the
    whole process's wall time, model load included) and peak RSS. Then `codeqa search` per
    call on the built index, default embedder vs `--embedder hash` (issue 13's targets)."""
    from codeqa_lsp.index.embedders.local import LocalEmbedder

    root = click_src_copy()
    started = time.perf_counter()
    LocalEmbedder().embed(["build the cached model once, outside the timings"])
    out: dict[str, Any] = {
        "root": "click-8.1.7/src",
        "model_ready_s": round(time.perf_counter() - started, 2),
        "load_average_start": round(os.getloadavg()[0], 2),
        "index": {},
    }
    for kind in kinds:
        work = fresh_dir(f"embedders-{kind}")
        print(f"[speed] click/src · clean index · {kind}", file=sys.stderr, flush=True)
        run = child("index", root=str(root), index_dir=str(work / "index"), kind=kind)
        if run.get("embedded"):
            run["chunks_per_s"] = round(run["embedded"] / run["wall_s"], 1)
            run["chunks_per_s_embedding_only"] = round(run["embedded"] / run["index_seconds"], 1)
        out["index"][kind] = run
    # One short question at a time, in a fresh process per embedder (the query path).
    short = sorted(questions(), key=len)[:40]
    out["query_embed"] = {kind: child("query_embed", kind=kind, texts=short) for kind in kinds}
    # `codeqa search` per call on a built index: the default (local) and hash.
    hash_work = fresh_dir("embedders-hash")
    out["index"]["hash"] = cli_index(root, "hash", hash_work / "index", "clean")
    default_index = WORK_DIR / f"embedders-{kinds[0]}" / "index"
    texts = questions(search_calls + 1)
    calls: dict[str, list[float]] = {"local": [], "hash": []}
    for i, text in enumerate(texts):  # interleaved, so load swings hit both alike; the first
        # round only warms the page cache and the bytecode and is not counted
        for embedder, index in (("local", default_index), ("hash", hash_work / "index")):
            cmd = [
                CLI,
                "search",
                text,
                "--root",
                str(root),
                "--embedder",
                embedder,
                "--index-dir",
                str(index),
                "--top-k",
                "5",
            ]
            result = run_measured(cmd, env=isolated_env(index.parent), timeout=600)
            if result.returncode == 0 and i > 0:
                calls[embedder].append(result.wall_s)
    out["search_per_call_s"] = {
        k: round(statistics.median(v), 3) if v else None for k, v in calls.items()
    }
    out["search_calls_s"] = {k: [round(x, 3) for x in v] for k, v in calls.items()}
    local_s, hash_s = out["search_per_call_s"]["local"], out["search_per_call_s"]["hash"]
    out["search_local_over_hash"] = round(local_s / hash_s, 2) if local_s and hash_s else None
    out["load_average_end"] = round(os.getloadavg()[0], 2)
    return out


def run(quick: bool, large_local: bool, soak: bool = True) -> dict[str, Any]:
    """All measurements in order; the result file is rewritten after each stage (marked
    `"complete": false`), so a run stopped half-way still reports what it measured."""
    started = time.perf_counter()
    embedders = ("hash",) if quick else ("hash", "local")
    doc: dict[str, Any] = {
        "description": "codeqa-lsp speed and memory; every measurement in its own process",
        "embedders": list(embedders),
        "query_embedder": "hash" if quick else "local",
    }
    doc["click_src"] = measure_click_src(
        embedders, repeats=1 if quick else 2, with_vectorcode=not quick
    )
    _checkpoint(doc, quick)
    if not quick:
        # The default against onnxruntime alone (fp32, and ffn-int8: the default before
        # OpenVINO), in the focused mode's own file (the report reads it from there). Not
        # torch: the retired embedder is pip-installed on demand (reference_embedder.py,
        # about 1 GB) and was compared once, in embedders.json.
        kinds = tuple(dict.fromkeys((default_kind(), "onnx-ffn-int8", "onnx-fp32")))
        write_result("speed-embedders", measure_embedders(kinds), quick)
    root_click = WORK_DIR / "trees" / "click-src"
    update_embedder = embedders[-1]
    print(f"[speed] didSave · {update_embedder}", file=sys.stderr, flush=True)
    doc["did_save"] = child(
        "update",
        root=str(root_click),
        index_dir=str(WORK_DIR / f"click-{update_embedder}-0" / "index"),
        embedder=update_embedder,
        edits=3 if quick else 5,
    )
    _checkpoint(doc, quick)
    large = None
    if not quick:
        large = measure_large(("hash", "local") if large_local else ("hash",))
        if not large_local:
            # The report estimates the time from the newest click/src rate.
            large["runs"]["local"] = {"not_run": "skipped (run with --large-local)"}
        doc["large"] = large
        _checkpoint(doc, quick)
    click_local = WORK_DIR / "click-local-0" / "index" if "local" in embedders else None
    doc["latency"] = measure_scale(
        large,
        click_local,
        root_click if click_local else None,
        doc["query_embedder"],
        40 if quick else 100,
        (1_000,) if quick else SCALE_POINTS,
    )
    _checkpoint(doc, quick)
    if soak and not quick:
        doc["soak_50k"] = measure_soak()
    doc["targets"] = {
        "index_wall_vs_vectorcode": "<= 1/3",
        "index_rss_vs_vectorcode": "<= 1/2",
        "warm_embedded": 0,
        "did_save_embedded": 1,
        "p95_ms_at_100k": 30,
    }
    doc["seconds"] = round(time.perf_counter() - started, 1)
    doc["complete"] = True
    return doc


def _checkpoint(doc: dict[str, Any], quick: bool) -> None:
    write_result("speed", {**doc, "complete": False}, quick)


def measure_latency() -> dict[str, Any]:
    """The query-latency points alone (`--latency`): a clean large hash index first."""
    large = measure_large(("hash",))
    root_click = corpus_root("click") / "src"  # read-only here: no private copy
    click_local = fresh_dir("latency-click-local") / "index"
    cli_index(root_click, "local", click_local, "clean")
    return {
        "query_embedder": "local",
        "latency": measure_scale(large, click_local, root_click, "local", 100, SCALE_POINTS),
        # The ~100k-chunk index the large point searches: how long it took, how big it is.
        "large_index": large["runs"].get("hash", {}).get("clean"),
    }


def _measured_idle(measure: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """`measure()`'s result with the load average before and after it: a focused re-run
    states how idle the machine was, since its timings are compared with other runs."""
    start = round(os.getloadavg()[0], 2)
    result = measure()
    result.update(load_average_start=start, load_average_end=round(os.getloadavg()[0], 2))
    return result


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="codeqa-lsp speed and memory benchmark")
    parser.add_argument(
        "--quick", action="store_true", help="hash only, no large tree, no VectorCode"
    )
    parser.add_argument(
        "--large-local", action="store_true", help="also index the large tree with MiniLM (hours)"
    )
    parser.add_argument("--no-soak", action="store_true", help="skip the 50,000-file soak")
    parser.add_argument(
        "--embedders",
        metavar="KINDS",
        default=None,
        help="only the embedder comparison, e.g. onnx-int8,torch (first: the one `local` runs); "
        "writes results/speed-embedders.json",
    )
    parser.add_argument(
        "--vs-vectorcode",
        metavar="N",
        type=int,
        default=0,
        help="only click/src clean indexes, ours (local, hash) interleaved with VectorCode's, "
        "N rounds; writes results/speed-vectorcode.json",
    )
    parser.add_argument(
        "--latency",
        action="store_true",
        help="only the query-latency points (a clean large hash index first, ~12 minutes); "
        "writes results/speed-latency.json",
    )
    parser.add_argument(
        "--large",
        metavar="KINDS",
        default=None,
        help="only the large tree, clean then warm, with these embedders (e.g. local); "
        "writes results/speed-large.json, whose runs the report shows over speed.json's",
    )
    parser.add_argument("--child", nargs=2, metavar=("TASK", "JSON"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        task, params = args.child
        result = CHILD_TASKS[task](**json.loads(params))
        print(json.dumps(result))
        return 0
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    WORK_DIR.mkdir(parents=True, exist_ok=True)
    if args.embedders:
        path = write_result(
            "speed-embedders", measure_embedders(tuple(args.embedders.split(","))), False
        )
        print(f"wrote {path}")
        return 0
    if args.vs_vectorcode:
        click = _measured_idle(
            lambda: measure_click_src(
                ("local", "hash"), repeats=args.vs_vectorcode, with_vectorcode=True
            )
        )
        click["default_variant"] = default_kind()
        path = write_result("speed-vectorcode", {"click_src": click}, False)
        print(f"wrote {path}")
        return 0
    if args.large:
        large = _measured_idle(lambda: measure_large(tuple(args.large.split(","))))
        path = write_result("speed-large", {"large": large}, False)
        print(f"wrote {path}")
        return 0
    if args.latency:
        path = write_result("speed-latency", _measured_idle(measure_latency), False)
        print(f"wrote {path}")
        return 0
    doc = run(args.quick, args.large_local, soak=not args.no_soak)
    path = write_result("speed", doc, args.quick)
    print(f"wrote {path} in {doc['seconds']} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
