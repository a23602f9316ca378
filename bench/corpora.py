"""Fetch the pinned evaluation corpora from the package registries, idempotently.

The question sets in `../shared/eval/questions/` name paths relative to a source tree
fetched by exact version (see `../shared/eval/README.md`). We download with the registries'
own clients (`pip download`, `npm pack`) into a cache outside the repository, so the
benchmark never vendors third-party code and re-runs reuse the download.

    python bench/corpora.py            # fetch all four sets
    python bench/corpora.py requests   # fetch one

From code: `corpus_root(name)` gives the tree root to index (paths in the questions are
relative to it) and `corpus_settings(name)` the include/exclude globs to index it with.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from codeqa_lsp.retrieval.search import HybridSearcher

EVAL_DIR = Path(os.environ.get("CODEQA_EVAL_DIR", "/work/shared/eval"))
CACHE_DIR = Path(os.environ.get("CODEQA_BENCH_CACHE", Path.home() / ".cache" / "codeqa-bench"))
CORPORA_DIR = CACHE_DIR / "corpora"
QUESTIONS_DIR = EVAL_DIR / "questions"
SETS: tuple[str, ...] = ("requests", "click", "express", "rxjs")

# Trees we never want in the index of a corpus, whatever the set: build output and type
# declaration files duplicate the sources and would let a hit on a copy hide a miss.
_ALWAYS_EXCLUDE: tuple[str, ...] = ("dist/", "node_modules/", "**/*.d.ts", "*.min.js")


@dataclass(frozen=True)
class Corpus:
    name: str
    registry: str  # "pypi" | "npm"
    spec: str
    root: str  # directory inside the archive that question paths are relative to
    language: str
    index: tuple[str, ...] = ()  # sub-trees to index; empty = all

    @property
    def dest(self) -> Path:
        return CORPORA_DIR / self.name


def load_corpora() -> dict[str, Corpus]:
    raw: dict[str, dict[str, Any]] = json.loads((EVAL_DIR / "corpora.json").read_text())
    return {
        name: Corpus(
            name=name,
            registry=entry["registry"],
            spec=entry["spec"],
            root=entry["root"],
            language=entry["language"],
            index=tuple(entry.get("index", ())),
        )
        for name, entry in raw.items()
    }


def index_dir(name: str, embedder: str) -> Path:
    """Where the benchmark keeps the index of corpus `name` built with `embedder`."""
    return CACHE_DIR / "indexes" / f"{name}-{embedder}"


def open_searcher(
    name: str, root: Path, embedder: str, **settings: Any
) -> tuple[HybridSearcher, float]:
    """The real `Indexer` + `HybridSearcher` over `root` with its benchmark index, brought up
    to date (the same pair `CodeBase` wires; the answering layer is not needed here).

    Returns the searcher with the seconds indexing took (near zero on a warm start).
    `settings` are extra `Settings` fields (include/exclude globs, ...). Close with
    `searcher.indexer.close()`.
    """
    from codeqa_lsp.config import Settings
    from codeqa_lsp.index.indexer import Indexer
    from codeqa_lsp.retrieval.search import HybridSearcher

    config = Settings(embedder=embedder, index_dir=str(index_dir(name, embedder)), **settings)  # type: ignore[arg-type]
    indexer = Indexer(root, config)
    started = time.perf_counter()
    indexer.index()
    return HybridSearcher(indexer, config), time.perf_counter() - started


def questions_path(name: str) -> Path:
    return QUESTIONS_DIR / f"{name}.jsonl"


def corpus_root(name: str) -> Path:
    """The tree root to index for set `name` (fetching it first if needed)."""
    corpus = _get(name)
    root = corpus.dest / corpus.root
    if not _complete(corpus):
        fetch(name)
    return root


def corpus_settings(name: str) -> dict[str, tuple[str, ...]]:
    """`include` / `exclude` globs (gitignore-style, relative to `corpus_root`) for `Settings`.

    rxjs ships its sources under `src/` next to compiled `dist/` copies; only `src/` is
    indexed, and `.d.ts` declarations never are.
    """
    corpus = _get(name)
    include = tuple(f"{sub.rstrip('/')}/" for sub in corpus.index)
    return {"include": include, "exclude": _ALWAYS_EXCLUDE}


def fetch(name: str, quiet: bool = False) -> Path:
    """Download and unpack one corpus unless already there. Returns its tree root."""
    corpus = _get(name)
    root = corpus.dest / corpus.root
    if _complete(corpus):
        return root
    if corpus.dest.exists():
        shutil.rmtree(corpus.dest)  # a half-finished earlier attempt
    corpus.dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=corpus.dest.parent, prefix=f".{name}-") as tmp:
        work = Path(tmp)
        archive = _download(corpus, work / "download", quiet)
        unpacked = work / "tree"
        unpacked.mkdir()
        with tarfile.open(archive) as tar:
            tar.extractall(unpacked, filter="data")
        if not (unpacked / corpus.root).is_dir():
            raise RuntimeError(f"{archive.name} has no {corpus.root}/ directory")
        (unpacked / ".complete").write_text(corpus.spec + "\n")
        unpacked.rename(corpus.dest)
    if not quiet:
        print(f"{name}: {root}")
    return root


def fetch_all(quiet: bool = False) -> dict[str, Path]:
    return {name: fetch(name, quiet=quiet) for name in load_corpora()}


def _get(name: str) -> Corpus:
    corpora = load_corpora()
    if name not in corpora:
        raise KeyError(f"unknown corpus {name!r}; known: {', '.join(corpora)}")
    return corpora[name]


def _complete(corpus: Corpus) -> bool:
    marker = corpus.dest / ".complete"
    return marker.is_file() and marker.read_text().strip() == corpus.spec


def _download(corpus: Corpus, into: Path, quiet: bool) -> Path:
    into.mkdir(parents=True)
    if corpus.registry == "pypi":
        cmd = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--no-binary",
            ":all:",
            "--dest",
            str(into),
            corpus.spec,
        ]
        if quiet:
            cmd.append("--quiet")
    elif corpus.registry == "npm":
        # npm lists every file of the tarball on stderr; --silent keeps the log readable.
        cmd = ["npm", "pack", corpus.spec, "--pack-destination", str(into), "--silent"]
    else:
        raise RuntimeError(f"unknown registry {corpus.registry!r}")
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL if quiet else None)
    archives = sorted(p for p in into.iterdir() if p.name.endswith((".tar.gz", ".tgz")))
    if len(archives) != 1:
        raise RuntimeError(f"expected one source archive for {corpus.spec}, got {archives}")
    return archives[0]


def main(argv: list[str]) -> int:
    names = argv or list(load_corpora())
    for name in names:
        fetch(name)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
