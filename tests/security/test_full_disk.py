"""Issue 15 (Medium): a full disk during `codeqa index`.

Before: a traceback, and afterwards search / stats / list / ask all failed until space was
freed; worse, opening the index on a full disk reported the database as corrupt and wiped
it. Now: a one-line error, the previous index stays readable (opened read-only when writes
fail), and the next run completes when space returns. Run on a real small tmpfs, which needs
root (mount); skipped otherwise. Also: a read-only index database file (Low).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import codeqa_lsp

PACKAGE = Path(codeqa_lsp.__file__).parent
CODE = "import sys; from codeqa_lsp.cli import main; sys.exit(main(sys.argv[1:]))"


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", CODE, *args], capture_output=True, text=True, timeout=600
    )


def fill(mount: Path, leave_kb: int = 0) -> Path:
    filler = mount / "filler"
    stat = os.statvfs(mount)
    free_kb = stat.f_bavail * stat.f_frsize // 1024
    with filler.open("ab") as handle:
        try:
            handle.write(b"\0" * max(0, free_kb - leave_kb) * 1024)
            handle.flush()
        except OSError:
            pass
    return filler


def assert_one_line_error(result: subprocess.CompletedProcess[str]) -> None:
    assert result.returncode == 1, result
    assert "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("codeqa:")]
    assert len(errors) == 1, result.stderr


@pytest.fixture
def small_tmpfs(tmp_path: Path) -> Iterator[Path]:
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    mount = tmp_path / "mnt"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(mount)], capture_output=True
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


@pytest.mark.parametrize("leave_kb", [0, 120], ids=["full-before-the-run", "fills-during-the-run"])
def test_full_disk_keeps_the_previous_index_and_recovers(
    small_tmpfs: Path, tmp_path: Path, leave_kb: int
) -> None:
    root = tmp_path / "ws"
    shutil.copytree(PACKAGE / "chunking", root / "chunking")
    store = ["--embedder", "hash", "--index-dir", str(small_tmpfs / "idx")]
    first = cli("index", str(root), *store)
    assert first.returncode == 0, first.stderr

    shutil.copytree(PACKAGE / "answering", root / "answering")  # new work for the next run
    filler = fill(small_tmpfs, leave_kb)
    failed = cli("index", str(root), *store)
    assert_one_line_error(failed)

    # The previous index: still searchable, still answering, while the disk is full.
    for args in (
        ("search", "secret_content_rule"),
        ("ask", "where is secret_content_rule defined?"),
    ):
        result = cli(*args, "--root", str(root), *store)
        assert result.returncode == 0, result.stderr
        assert "secret_rules.py" in result.stdout and "Traceback" not in result.stderr
    stats = cli("stats", "--root", str(root), *store)
    assert stats.returncode == 0 and "Traceback" not in stats.stderr, stats.stderr

    filler.unlink()
    recovered = cli("index", str(root), *store)
    assert recovered.returncode == 0, recovered.stderr
    found = cli("search", "sanitize_markdown", "--root", str(root), *store)
    assert "answering/sanitize.py" in found.stdout, found.stdout


def test_read_only_index_file_is_searched_not_rebuilt(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    shutil.copytree(PACKAGE / "chunking", root / "chunking")
    index_dir = tmp_path / "idx"
    store = ["--embedder", "hash", "--index-dir", str(index_dir)]
    assert cli("index", str(root), *store).returncode == 0
    db = index_dir / "index.sqlite"
    size = db.stat().st_size
    if os.geteuid() == 0:
        # root ignores file modes; a read-only bind of the folder is what a user would hit.
        done = subprocess.run(
            ["mount", "--bind", "-o", "ro", str(index_dir), str(index_dir)], capture_output=True
        )
        if done.returncode != 0:
            pytest.skip("cannot make a read-only bind mount here")
        subprocess.run(["mount", "-o", "remount,ro,bind", str(index_dir)], check=False)
    else:
        db.chmod(0o444)
        index_dir.chmod(0o555)
    try:
        refused = cli("index", str(root), *store)
        assert_one_line_error(refused)
        found = cli("search", "secret_content_rule", "--root", str(root), *store)
        assert found.returncode == 0 and "secret_rules.py" in found.stdout, found.stderr
    finally:
        if os.geteuid() == 0:
            subprocess.run(["umount", "-l", str(index_dir)], check=False)
        else:
            index_dir.chmod(0o755)
            db.chmod(0o644)
    assert db.stat().st_size == size  # never wiped
