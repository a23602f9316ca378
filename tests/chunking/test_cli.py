"""`codeqa chunks`: files and folders, JSON lines and table, usage errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from codeqa_lsp.cli import main

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "chunking"


def test_json_lines_for_a_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["chunks", "--json", str(FIXTURES / "sample.go")]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert rows[1] == {
        "path": str(FIXTURES / "sample.go"),
        "symbol": "Cart",
        "kind": "class",
        "language": "go",
        "start_line": 5,
        "end_line": 8,
    }
    assert [r["symbol"] for r in rows] == [
        "<module>",
        "Cart",
        "Cart.Total",
        "Store.Name",
        "New",
        "Reader",
        "Pair",
        "Namer",
    ]


def test_folder_is_walked_with_the_scanner(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("def a():\n    return 1\n")
    (tmp_path / "node_modules").mkdir()
    (tmp_path / "node_modules" / "b.js").write_text("function b() {}\n")
    (tmp_path / ".env").write_text("KEY=1\n")
    assert main(["chunks", "--json", str(tmp_path)]) == 0
    captured = capsys.readouterr()
    rows = [json.loads(line) for line in captured.out.splitlines()]
    assert [(r["path"], r["symbol"]) for r in rows] == [((tmp_path / "src/a.py").as_posix(), "a")]
    assert "skipped: default-excluded 1, secret-name 1" in captured.err


def test_table_output(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["chunks", str(FIXTURES / "sample.py")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert any(line.endswith("method   Cart.__init__") and ":27-28 " in line for line in lines)


def test_bad_path_is_a_usage_error() -> None:
    result = subprocess.run(
        [str(Path(sys.executable).parent / "codeqa"), "chunks", "/no/such/path"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 2
    assert result.stderr.strip() == "codeqa: no such file or directory: /no/such/path"
    assert result.stdout == ""


def test_explicit_secret_files_are_not_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    key = tmp_path / "id_rsa"
    key.write_text("not really a key\n")
    leaky = tmp_path / "config.py"
    leaky.write_text('TOKEN = "ghp_' + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8" + '"\n')
    assert main(["chunks", "--json", str(key), str(leaky)]) == 0
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "skipped: secret-content 1, secret-name 1" in captured.err
