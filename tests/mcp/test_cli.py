"""`codeqa mcp` argument errors: one line on stderr and exit 2, never a traceback or a hang."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.mcp.conftest import SOURCE_ROOT


def _codeqa(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "codeqa_lsp.cli", *args],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(SOURCE_ROOT), "PATH": "/usr/bin:/bin"},
        stdin=subprocess.DEVNULL,
        timeout=120,
    )


def test_a_missing_root_is_a_usage_error(tmp_path: Path) -> None:
    result = _codeqa("mcp", "--root", str(tmp_path / "nope"))
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [f"codeqa: not a directory: {tmp_path / 'nope'}"]
    assert result.stdout == ""


def test_an_unknown_provider_is_a_usage_error(tmp_path: Path) -> None:
    result = _codeqa("mcp", "--root", str(tmp_path), "--provider", "cloud-of-doom")
    assert result.returncode == 2 and "invalid choice" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
