"""The processes `speed.py` measures: `codeqa index` and `speed.py --child` runs, each with
a private cache, timed with its whole process tree's peak RSS; and the inputs they share (a
private copy of click/src, the 100 questions as query texts).

Split from `speed.py` (the ~500-line rule), which keeps what is measured and in which order.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import CACHE_DIR, dir_size_bytes, run_measured
from corpora import SETS, corpus_root, questions_path

CLI = str(Path(sys.executable).with_name("codeqa"))
WORK_DIR = CACHE_DIR / "speed"
SPEED_SCRIPT = Path(__file__).resolve().with_name("speed.py")  # its --child runs tasks


# -- measurements run by the parent ---------------------------------------------------------


def isolated_env(work: Path) -> dict[str, str]:
    """Nothing shared with the user's caches (a clean cache means clean), except the ONNX
    model: it is built once per machine (~10 s, timed separately), not once per index."""
    from codeqa_lsp.index.embedders.local import default_model_cache

    models = work / "xdg" / "codeqa-lsp" / "models"
    if not models.exists():
        models.parent.mkdir(parents=True, exist_ok=True)
        models.symlink_to(default_model_cache(), target_is_directory=True)
    # Bytecode is written and reused (PYTHONDONTWRITEBYTECODE unset): an installed package has
    # its .pyc files, and compiling ~60 of our modules on every start (~0.3 s, measured with
    # cProfile on `codeqa search`) is this machine's setting, not what a user's start costs.
    return {
        "XDG_CACHE_HOME": str(work / "xdg"),
        "TOKENIZERS_PARALLELISM": "false",
        "PYTHONDONTWRITEBYTECODE": "",
    }


def cli_index(root: Path, embedder: str, index_dir: Path, label: str) -> dict[str, Any]:
    """`codeqa index ROOT --json` in its own process: wall time, tree RSS, what it did."""
    cmd = [CLI, "index", str(root), "--embedder", embedder, "--index-dir", str(index_dir), "--json"]
    run = run_measured(cmd, env=isolated_env(index_dir.parent), timeout=3 * 3600)
    report = run.last_json()
    out: dict[str, Any] = {
        "label": label,
        "embedder": embedder,
        "ok": run.returncode == 0 and bool(report),
        "wall_s": round(run.wall_s, 2),
        "tree_peak_rss_mb": run.tree_peak_rss_mb,
    }
    if not report:
        out["error"] = run.stderr.strip().splitlines()[-5:]
        return out
    status = report.get("status", {})
    chunks = int(status.get("chunks") or report.get("chunks_total") or 0)
    # The embedding cache lives inside an explicit --index-dir; the index proper is the rest.
    size = dir_size_bytes(index_dir) - dir_size_bytes(index_dir / "embedding-cache")
    out.update(
        {
            "index_seconds": report.get("seconds"),
            "files": status.get("files"),
            "chunks": chunks,
            "embedded": report.get("embedded"),
            # Every chunk had its first vector (dense search over everything) at this point
            # of the run; later windows of long chunks follow (`index/embedding.py`).
            "dense_ready_seconds": report.get("dense_ready_seconds"),
            "windows_embedded": report.get("windows_embedded"),
            "skipped": report.get("skipped"),
            "size_bytes": size,
            "embedding_cache_bytes": dir_size_bytes(index_dir / "embedding-cache"),
            "size_mb_per_1k_chunks": round(size / 2**20 / chunks * 1000, 3) if chunks else None,
            "embedding_model": status.get("embedding_model"),
            "chunks_per_s": round(chunks / run.wall_s, 1) if report.get("embedded") else None,
        }
    )
    if run.returncode != 0:
        out["error"] = run.stderr.strip().splitlines()[-3:]
    return out


def child(task: str, **params: Any) -> dict[str, Any]:
    """Run `speed.py --child TASK` and merge its JSON line with wall time and tree RSS."""
    cmd = [sys.executable, str(SPEED_SCRIPT), "--child", task, json.dumps(params, default=str)]
    return measured_json(cmd, Path(params.get("index_dir", WORK_DIR / "x")).parent)


def measured_json(cmd: list[str], work: Path, cwd: Path | None = None) -> dict[str, Any]:
    """A process that prints its result as a JSON line, plus its wall time and tree RSS."""
    run = run_measured(cmd, env=isolated_env(work), cwd=cwd, timeout=3600)
    result = run.last_json() or {}
    result.update(
        {
            "ok": run.returncode == 0 and bool(result),
            "wall_s": round(run.wall_s, 2),
            "tree_peak_rss_mb": run.tree_peak_rss_mb,
        }
    )
    if run.returncode != 0:
        result["error"] = run.stderr.strip().splitlines()[-5:]
    return result


def fresh_dir(name: str) -> Path:
    path = WORK_DIR / name
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    return path


def questions(limit: int | None = None) -> list[str]:
    """The 100 shared questions: distinct, realistic query texts (never repeated, so no
    query-embedding cache hit flatters the latency)."""
    texts: list[str] = []
    for name in SETS:
        for line in questions_path(name).read_text().splitlines():
            if line.strip():
                texts.append(json.loads(line)["question"])
    return texts[:limit] if limit else texts


# -- the run ------------------------------------------------------------------------------------


def click_src_copy() -> Path:
    """A private copy of click/src: the didSave benchmark edits files."""
    dest = fresh_dir("trees") / "click-src"
    shutil.copytree(corpus_root("click") / "src", dest)
    return dest
