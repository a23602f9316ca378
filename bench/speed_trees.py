"""The source trees the speed benchmark indexes, built once and reused across runs.

* `large`: every `.py` file of the running Python's standard library plus the `openai` and
  `anthropic` SDK sources from the project's virtualenv (about 6,800 files, about 100k
  chunks) - real, varied Python that every machine running this benchmark already has.
  Only `.py` files are copied so the tree does not depend on what else a distribution ships.
* `scale-<n>`: deterministic subsets of `large` holding about n chunks (files are taken in
  a hash order that mixes the three sources until our chunker's count reaches n), for the
  query-latency-versus-index-size curve.

Trees live under `~/.cache/codeqa-bench/trees/` with a manifest; a tree whose manifest
does not match what would be built now (another Python, other SDK versions) is rebuilt.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
import sysconfig
from importlib import metadata
from pathlib import Path
from typing import Any

from common import CACHE_DIR

TREES_DIR = CACHE_DIR / "trees"
SDKS = ("openai", "anthropic")


def _sources() -> dict[str, Path]:
    site = Path(sysconfig.get_paths()["purelib"])
    out = {"stdlib": Path(sysconfig.get_paths()["stdlib"])}
    for name in SDKS:
        out[name] = site / name
    return out


def _python_files(name: str, src: Path) -> list[Path]:
    files = []
    for path in src.rglob("*.py"):
        rel = path.relative_to(src)
        if name == "stdlib" and rel.parts[0] in ("site-packages", "dist-packages"):
            continue
        if "__pycache__" in rel.parts:
            continue
        files.append(path)
    return sorted(files)


def _manifest() -> dict[str, Any]:
    versions = {}
    for name in SDKS:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return {"python": sys.version.split()[0], "sdks": versions, "format": 1}


def _ready(tree: Path, manifest: dict[str, Any]) -> bool:
    try:
        saved = json.loads((tree / ".bench-manifest.json").read_text())
    except (OSError, ValueError):
        return False
    return bool(saved.get("build") == manifest)


def _finish(tree: Path, staging: Path, manifest: dict[str, Any], info: dict[str, Any]) -> None:
    (staging / ".bench-manifest.json").write_text(json.dumps({"build": manifest, **info}))
    if tree.exists():
        shutil.rmtree(tree)
    staging.rename(tree)


def tree_info(tree: Path) -> dict[str, Any]:
    data = json.loads((tree / ".bench-manifest.json").read_text())
    return {k: v for k, v in data.items() if k != "build"}


def large_tree() -> Path:
    """The >= 5,000-file tree (built on first use; about 60 MB, a few seconds to copy)."""
    tree = TREES_DIR / "large"
    manifest = _manifest()
    if _ready(tree, manifest):
        return tree
    staging = TREES_DIR / ".large-staging"
    shutil.rmtree(staging, ignore_errors=True)
    counts: dict[str, int] = {}
    total_bytes = 0
    for name, src in _sources().items():
        if not src.is_dir():
            raise RuntimeError(f"{name} sources not found at {src}")
        files = _python_files(name, src)
        for path in files:
            dest = staging / name / path.relative_to(src)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, dest)
            total_bytes += dest.stat().st_size
        counts[name] = len(files)
    info = {
        "files": sum(counts.values()),
        "files_by_source": counts,
        "bytes": total_bytes,
        "description": "stdlib + openai + anthropic SDK .py files",
        **manifest,
    }
    _finish(tree, staging, manifest, info)
    return tree


def _mix_order(rel: str) -> str:
    return hashlib.sha256(rel.encode()).hexdigest()


def subset_tree(target_chunks: int, chunk_tokens: int) -> Path:
    """A subset of `large` with about `target_chunks` chunks (by our chunker)."""
    from codeqa_lsp.chunking.chunker import chunk_source

    large = large_tree()
    tree = TREES_DIR / f"scale-{target_chunks}"
    manifest = {**_manifest(), "target": target_chunks, "chunk_tokens": chunk_tokens}
    if _ready(tree, manifest):
        return tree
    staging = TREES_DIR / f".scale-{target_chunks}-staging"
    shutil.rmtree(staging, ignore_errors=True)
    rels = sorted((p.relative_to(large).as_posix() for p in large.rglob("*.py")), key=_mix_order)
    chunks = files = 0
    for rel in rels:
        if chunks >= target_chunks:
            break
        text = (large / rel).read_text(encoding="utf-8", errors="replace")
        n = len(chunk_source(rel, text, max_tokens=chunk_tokens))
        if n == 0:
            continue
        dest = staging / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(text, encoding="utf-8")
        chunks += n
        files += 1
    _finish(
        tree,
        staging,
        manifest,
        {
            "files": files,
            "chunks_by_chunker": chunks,
            "description": f"subset of large, ~{target_chunks} chunks",
        },
    )
    return tree
