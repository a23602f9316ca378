"""Helpers every benchmark script shares: machine facts, process-tree memory, timers, output.

Why these exist rather than `/usr/bin/time`: a tool such as VectorCode runs as a tree of
processes (its CLI plus a Chroma server child), and `time -v` reports only the largest single
process. Peak memory is therefore sampled over the *whole process tree*, for every tool we
measure, with the same sampler, so the comparison is like for like.

Linux only (reads `/proc`); no third-party dependency, so any benchmark can import it.
"""

from __future__ import annotations

import json
import os
import platform
import signal
import statistics
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import IO, Any

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
RESULTS_DIR = BENCH_DIR / "results"
CACHE_DIR = Path(os.environ.get("CODEQA_BENCH_CACHE", Path.home() / ".cache" / "codeqa-bench"))

_PAGE = os.sysconf("SC_PAGE_SIZE")


# -- machine and versions -------------------------------------------------------------------


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _ram_gb() -> float:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 2**20, 1)
    except OSError:
        pass
    return 0.0


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def _git(*args: str) -> str | None:
    try:
        out = subprocess.run(
            ["git", "-C", str(REPO_ROOT), *args],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def _git_commit() -> str | None:
    """HEAD, with `+changes` when the measured code (the package or the benchmarks) differs
    from it: a result measured on a branch before its commit must not claim its parent."""
    commit = _git("rev-parse", "--short", "HEAD")
    if not commit:
        return None
    changed = _git("status", "--porcelain", "--", "codeqa_lsp", "bench")
    measured = [line for line in (changed or "").splitlines() if "bench/results/" not in line]
    return f"{commit}+changes" if measured else commit


def machine_info() -> dict[str, Any]:
    """Who ran this, where and when: printed above every table in BENCHMARKS.md."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "cores": cores,
        "ram_gb": _ram_gb(),
        "cpu": _cpu_model(),
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        # Other work on the machine skews every timing; say how busy it was.
        "load_avg_1m": round(os.getloadavg()[0], 2),
        "versions": {
            "codeqa-lsp": _version("codeqa-lsp"),
            "git": _git_commit(),
            "torch": _version("torch"),
            "sentence-transformers": _version("sentence-transformers"),
            "hnswlib": _version("hnswlib"),
            "tree-sitter": _version("tree-sitter"),
        },
    }


# -- output ---------------------------------------------------------------------------------


def write_result(name: str, data: Mapping[str, Any], quick: bool) -> Path:
    """Write `bench/results/<name>.json` with the machine block every report table needs."""
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    path = RESULTS_DIR / f"{name}.json"
    doc = {"benchmark": name, "quick": quick, "machine": machine_info(), **data}
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(doc, indent=2, sort_keys=False, default=str) + "\n")
    tmp.replace(path)  # a reader never sees half a file
    return path


def read_result(name: str) -> dict[str, Any] | None:
    path = RESULTS_DIR / f"{name}.json"
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


# -- timing ---------------------------------------------------------------------------------


@dataclass
class Stopwatch:
    seconds: float = 0.0


@contextmanager
def timed() -> Iterator[Stopwatch]:
    """`with timed() as t: ...; t.seconds` — wall time by `perf_counter`."""
    watch = Stopwatch()
    start = time.perf_counter()
    try:
        yield watch
    finally:
        watch.seconds = time.perf_counter() - start


def percentile(values: Sequence[float], pct: float) -> float:
    """Nearest-rank-interpolated percentile (what `numpy.percentile` does by default)."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    if len(ordered) == 1:
        return ordered[0]
    pos = (len(ordered) - 1) * pct / 100
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def latency_summary(seconds: Sequence[float]) -> dict[str, float]:
    ms = [s * 1000 for s in seconds]
    return {
        "n": len(ms),
        "p50_ms": round(percentile(ms, 50), 3),
        "p95_ms": round(percentile(ms, 95), 3),
        "mean_ms": round(statistics.fmean(ms), 3) if ms else float("nan"),
        "max_ms": round(max(ms), 3) if ms else float("nan"),
    }


# -- process-tree memory --------------------------------------------------------------------


def _children(pid: int) -> list[int]:
    kids: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return kids
    for tid in tasks:
        try:
            text = Path(f"/proc/{pid}/task/{tid}/children").read_text()
        except OSError:
            continue
        kids.extend(int(x) for x in text.split())
    return kids


def _rss_bytes(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * _PAGE
    except (OSError, IndexError, ValueError):
        return 0


def _start_time(pid: int) -> str | None:
    """Field 22 of /proc/PID/stat: tells a process from a later one reusing its pid.
    None when the process is gone (or a zombie: dead, only not yet reaped)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return None if fields[0] == "Z" else fields[19]


def tree_rss_bytes(root_pid: int, seen: dict[int, str | None] | None = None) -> int:
    """Resident memory of `root_pid` and all its descendants, summed.

    `seen` (pid -> start time) collects every process met, so descendants that outlive
    the root (a daemon a tool forks) can be found and stopped afterwards.
    """
    total, stack, visited = 0, [root_pid], set()
    while stack:
        pid = stack.pop()
        if pid in visited:
            continue
        visited.add(pid)
        total += _rss_bytes(pid)
        if seen is not None and pid not in seen:
            seen[pid] = _start_time(pid)
        stack.extend(_children(pid))
    return total


class TreeRssSampler:
    """Samples the summed RSS of a process tree every `interval` seconds in a thread."""

    def __init__(self, pid: int, interval: float = 0.05, extra: Sequence[int] = ()) -> None:
        self.pid = pid
        self.extra = tuple(extra)  # other trees counted in the sum, never stopped by us
        self.interval = interval
        self.peak = 0
        self.seen: dict[int, str | None] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            total = tree_rss_bytes(self.pid, self.seen) + sum(map(tree_rss_bytes, self.extra))
            self.peak = max(self.peak, total)
            self._stop.wait(self.interval)

    def __enter__(self) -> TreeRssSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    @property
    def peak_mb(self) -> float:
        return round(self.peak / 2**20, 1)

    def stop_leftovers(self) -> list[int]:
        """Terminate descendants still running after the root exited (only processes this
        sampler saw in the tree, matched by pid *and* start time). Returns their pids."""
        alive = [
            pid
            for pid, started in self.seen.items()
            if pid != self.pid and started is not None and _start_time(pid) == started
        ]
        stopped = list(alive)
        for sig in (signal.SIGTERM, signal.SIGKILL):
            for pid in alive:
                with suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, sig)
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline and any(_start_time(p) is not None for p in alive):
                time.sleep(0.1)
            alive = [pid for pid in alive if _start_time(pid) == self.seen[pid]]
            if not alive:
                break
        return stopped


@dataclass
class RunResult:
    returncode: int
    wall_s: float
    tree_peak_rss_mb: float
    stdout: str
    stderr: str

    def last_json(self) -> dict[str, Any] | None:
        """The last stdout line that parses as a JSON object (how child measurements report)."""
        for line in reversed(self.stdout.splitlines()):
            line = line.strip()
            if line.startswith("{"):
                try:
                    value = json.loads(line)
                except ValueError:
                    continue
                if isinstance(value, dict):
                    return value
        return None


def _output_file() -> IO[str]:
    return tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")


def run_measured(
    cmd: Sequence[str],
    env: Mapping[str, str] | None = None,
    cwd: str | Path | None = None,
    timeout: float | None = None,
    extra_pids: Sequence[int] = (),
) -> RunResult:
    """Run `cmd`, returning wall time, peak process-tree RSS and its captured output.

    Each measurement runs in its own process so one measurement's memory (a loaded model, a
    big index) never inflates the next one's peak. `extra_pids`: processes the command
    works with but did not start (a database server), added to the memory sum.
    """
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    # Output goes to files, not pipes: a daemon the tool leaves behind would hold a pipe
    # open and make us wait for it; we wait for the command itself.
    with _output_file() as out, _output_file() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(list(cmd), env=full_env, cwd=cwd, stdout=out, stderr=err)
        note = ""
        # A blocking wait, with a timer to kill: `Popen.wait(timeout=...)` polls with sleeps
        # of up to 50 ms, which put every wall time on a 50 ms grid (a 0.32 s `codeqa search`
        # read as 0.32 or 0.37 s at random).
        timed_out = threading.Event()

        def kill() -> None:
            timed_out.set()
            proc.kill()

        killer = threading.Timer(timeout, kill) if timeout is not None else None
        with TreeRssSampler(proc.pid, extra=extra_pids) as sampler:
            if killer is not None:
                killer.start()
            proc.wait()
            wall = time.perf_counter() - start
            if killer is not None:
                killer.cancel()
            if timed_out.is_set():
                note = f"\n[bench] killed after {timeout:.0f}s timeout"
        leftovers = sampler.stop_leftovers()
        if leftovers:
            note += f"\n[bench] stopped {len(leftovers)} leftover process(es) of the command"
        out.seek(0)
        err.seek(0)
        return RunResult(
            returncode=proc.returncode,
            wall_s=wall,
            tree_peak_rss_mb=sampler.peak_mb,
            stdout=out.read(),
            stderr=err.read() + note,
        )


def self_peak_rss_mb() -> float:
    """This process's own high-water RSS (kernel-tracked; exact, not sampled)."""
    import resource

    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def dir_size_bytes(path: Path) -> int:
    total = 0
    for dirpath, _dirs, files in os.walk(path):
        for name in files:
            with suppress(OSError):
                total += os.lstat(os.path.join(dirpath, name)).st_size
    return total
