"""Subprocess body for the kill -9 test: a full index, then an endless burst of saves.

Run as `python -m tests.index.crash_worker ROOT INDEX_DIR SEED`; prints `ready` once its
imports are done so the parent's random kill delay measures indexing work, not start-up.
"""

from __future__ import annotations

import os
import random
import sys
from pathlib import Path

from codeqa_lsp.config import Settings
from codeqa_lsp.index.indexer import Indexer


def rewrite(root: Path, rng: random.Random) -> str:
    files = sorted((root / "pkg").glob("*.py"))
    target = rng.choice(files)
    lines = target.read_text("utf-8").splitlines(keepends=True)
    returns = [i for i, line in enumerate(lines) if line.strip().startswith("return total")]
    i = rng.choice(returns)
    lines[i] = f"        return total + {rng.randrange(10**6)}\n"
    # Atomic, so a kill never leaves a half-written *workspace* file: the index is on trial.
    tmp = target.with_name(f".{target.name}.tmp")
    tmp.write_text("".join(lines), "utf-8")
    os.replace(tmp, target)
    return target.relative_to(root).as_posix()


def main() -> None:
    root, index_dir, seed = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    rng = random.Random(seed)
    print("ready", flush=True)
    indexer = Indexer(root, Settings(embedder="hash", index_dir=index_dir))
    indexer.index()
    print("indexed", flush=True)
    while True:
        indexer.update_file(rewrite(root, rng))


if __name__ == "__main__":
    main()
