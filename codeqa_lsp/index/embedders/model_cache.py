"""The local embedder's model cache: is a cached graph still the one that was built?

A built graph is trusted by a manifest beside it (sizes, sha256, and the stat stamps they
were verified at), so a start checks a few stats instead of hashing 90 MB; the weights'
own hash (which names the cached graph) is memoised the same way.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)


def _manifest_path(model: Path) -> Path:
    return model.with_name(model.name + ".json")


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def _model_files(model: Path) -> tuple[Path, Path]:
    """The graph file and the weights file beside it (`minilm_graph.data_path`)."""
    from codeqa_lsp.index.embedders.minilm_graph import data_path

    return model, data_path(model)


def write_manifest(model: Path, build_seconds: float) -> None:
    files = _model_files(model)
    _store_manifest(
        model,
        {
            "sha256": [_file_sha256(f) for f in files],
            "size": [f.stat().st_size for f in files],
            "build_seconds": round(build_seconds, 1),
            "verified": [_stat_stamp(f) for f in files],
        },
    )


def _store_manifest(model: Path, manifest: dict[str, Any]) -> None:
    tmp = model.with_name(f".{model.name}.json.{os.getpid()}")
    tmp.write_text(json.dumps(manifest))
    os.replace(tmp, _manifest_path(model))


def _stat_stamp(path: Path) -> list[int]:
    stat = path.stat()
    return [stat.st_size, stat.st_mtime_ns, stat.st_ino]


def cached_file_problem(model: Path) -> str | None:
    """Why the cached model (graph + weights files) cannot be trusted, or None.

    The files are hashed in full once (after the build, and again whenever a size, mtime or
    inode changed), which catches damage that still parses and would embed garbage
    silently; unchanged files are trusted on their stat alone, because hashing the 90 MB
    fp32 weights on every start costs 0.06-0.4 s (measured idle / under load). A model
    cached by an earlier version (one file, one checksum) is rebuilt once in this layout,
    under the same name, so no stale 90 MB file is left behind."""
    files = _model_files(model)
    try:
        manifest = json.loads(_manifest_path(model).read_text())
        if not isinstance(manifest.get("size"), list):
            return "cached by an earlier version"
        if not all(f.is_file() for f in files):
            return "missing"
        stamps = [_stat_stamp(f) for f in files]
        if [stamp[0] for stamp in stamps] != manifest["size"]:
            return "wrong size"
        if manifest.get("verified") == stamps:
            return None
        if [_file_sha256(f) for f in files] != manifest["sha256"]:
            return "checksum mismatch"
        manifest["verified"] = stamps
        _store_manifest(model, manifest)
    except (OSError, ValueError, KeyError, TypeError):
        return "missing" if not model.exists() else "no valid manifest"
    return None


def weights_digest(weights: Path, cache_dir: Path) -> str:
    """sha256 of the weights file, remembered per (path, size, mtime) so a start does not
    re-hash 90 MB (~0.1-0.4 s) just to find its cached model."""
    stat = weights.stat()
    key = f"{weights}|{stat.st_size}|{stat.st_mtime_ns}"
    memo_path = cache_dir / "weights-digests.json"
    try:
        memo = json.loads(memo_path.read_text())
        if isinstance(memo, dict) and isinstance(memo.get(key), str):
            return str(memo[key])
    except (OSError, ValueError):
        memo = {}
    digest = _file_sha256(weights)
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        memo = {key: digest}  # one installed copy of the weights at a time is the norm
        tmp = memo_path.with_name(f".{memo_path.name}.{os.getpid()}")
        tmp.write_text(json.dumps(memo))
        os.replace(tmp, memo_path)
    except OSError as exc:
        log.debug("could not remember the weights digest: %s", exc)
    return digest
