"""Issue 9 soak: 50,000 small files index with bounded memory (peak RSS reported).

Slow (minutes): runs only with `CODEQA_SOAK=1` (or a `--soak` option when one is defined).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FILES = int(os.environ.get("CODEQA_SOAK_FILES", "50000"))
PEAK_RSS_LIMIT_MB = 1024


def _soak_enabled(config: pytest.Config) -> bool:
    try:
        option = bool(config.getoption("--soak"))
    except ValueError:
        option = False
    return option or os.environ.get("CODEQA_SOAK") == "1"


@pytest.mark.slow
def test_fifty_thousand_small_files(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    if not _soak_enabled(request.config):
        pytest.skip("soak test: set CODEQA_SOAK=1 to run")
    root = tmp_path / "ws"
    for i in range(FILES):
        directory = root / f"d{i // 500}"
        directory.mkdir(parents=True, exist_ok=True)
        (directory / f"m{i}.py").write_text(
            f"def handler_{i}(event):\n    return event.get('k{i}')\n"
        )
    run = subprocess.run(
        [sys.executable, "-m", "tests.index.soak_worker", str(root), str(tmp_path / "idx")],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    )
    result = json.loads(run.stdout.strip().splitlines()[-1])
    print(f"\nsoak: {result}")
    assert result["files"] == FILES and result["chunks"] == FILES == result["embedded"]
    assert result["peak_rss_mb"] < PEAK_RSS_LIMIT_MB
