"""Bad files, end to end: the server indexes everything else and keeps answering.

A workspace mixing good code (some of it invalid UTF-8 or with mixed line endings) with
random bytes, a 10 MB single-line minified bundle, 5,000-deep brackets / parens / braces,
5,000 nested Python functions, symlink loops and a dangling link is indexed by the real
server over stdio. Every good file must be
searchable, `codeqa.status` must count the skips by reason, editor features on the worst
files (code lens, hover, explain of an open buffer, saves) must answer, and the session
must end cleanly. The indexer's own hostile-input tests cover the same files in-process.
"""

from __future__ import annotations

import os
import random
import shutil
from pathlib import Path

import pytest

from tests.reliability.harness import served
from tests.server.workspace import FIXTURE_FILES, make_workspace

DEPTH = 5000
MAX_FILE_BYTES = 11 * 1024 * 1024  # the 10 MB bundle is read and judged by its content
# Good files beside the bad ones: path → a name only that file defines.
GOOD = {
    "good/latin1.py": (
        "def cafe_latin1_total(prices):\n    return sum(prices)  # caf\xe9 cr\xe8me\n".encode(
            "latin-1"
        ),
        "cafe_latin1_total",
    ),
    "good/mixed_endings.py": (
        b"def mixed_line_endings_probe(a):\r\n    return a\rdef second_probe(b):\n    return b\r\n",
        "mixed_line_endings_probe",
    ),
    "good/widget.js": (
        b"export function renderWidgetToolbar(items) {\n  return items.map(String);\n}\n",
        "renderWidgetToolbar",
    ),
    "good/invalid_utf8.go": (
        b'package good\n\nfunc BrokenBytesProbe() string {\n\treturn "\xff\xfe\xc3\x28"\n}\n',
        "BrokenBytesProbe",
    ),
}


def write(root: Path, rel: str, data: bytes | str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        path.write_text(data, encoding="utf-8")
    else:
        path.write_bytes(data)
    return path


def nested_python_defs(depth: int) -> str:
    return "".join(" " * i + f"def d{i}():\n" for i in range(depth)) + " " * depth + "pass\n"


def nested_js_functions(depth: int) -> str:
    return "".join(f"function f{i}() {{\n" for i in range(depth)) + "}\n" * depth


def hostile_workspace(root: Path) -> dict[str, int]:
    """Seed the workspace; returns the skip count expected for each reason."""
    make_workspace(root)
    for rel, (data, _) in GOOD.items():
        write(root, rel, data)
    rng = random.Random(9)
    noise = bytes(rng.randrange(256) for _ in range(16384))
    write(root, "bad/random.py", noise[:100] + b"\x00" + noise[100:])  # binary: has a NUL
    write(
        root, "bad/noise.js", noise.replace(b"\x00", b"\x01")
    )  # garbage text: indexed or not, no crash
    write(
        root, "bad/bundle.js", "var a=1;" * (10 * 1024 * 1024 // 8)
    )  # 10 MB, one line: read, then refused
    write(root, "bad/inline.js", "function q(){return 1};" * 20_000)  # 460 KB, one line
    write(root, "deep/brackets.py", "x = " + "[" * DEPTH + "]" * DEPTH + "\n")
    write(root, "deep/parens.js", "const v = " + "(" * DEPTH + "1" + ")" * DEPTH + ";\n")
    write(root, "deep/braces.c", "int main(void) " + "{" * DEPTH + "return 0;" + "}" * DEPTH + "\n")
    write(root, "deep/defs.py", nested_python_defs(DEPTH))  # 12.5 MB of indentation: over the limit
    # Every line an ALL_CAPS macro pair: blanking declaration macros for the C/C++ parser must
    # stay linear (a single regex over the file took 55 s on these 160 KB).
    write(root, "deep/macros.h", "A_B C_D\n" * 20_000)
    (root / "loops").mkdir()
    (root / "loops" / "self").symlink_to(root / "loops", target_is_directory=True)
    (root / "loops" / "a.py").symlink_to(root / "loops" / "b.py")
    (root / "loops" / "b.py").symlink_to(root / "loops" / "a.py")
    (root / "bad" / "dangling.py").symlink_to(root / "nowhere.py")
    return {"binary": 1, "too-large": 1, "minified": 2, "symlink-loop": 3, "vanished": 1}


async def test_bad_files_are_skipped_by_reason_and_good_ones_searchable(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    expected = hostile_workspace(root)
    root = root.resolve()
    async with served(
        tmp_path, root, {"embedder": "hash", "maxFileBytes": MAX_FILE_BYTES}
    ) as server:
        status = await server.settled()
        for reason, count in expected.items():
            assert status["skipped"].get(reason) == count, (reason, status["skipped"])
        assert status["coverage"] == 1.0 and status["errors"] == {}, status
        assert status["files"] >= len(FIXTURE_FILES) + len(GOOD)

        for rel, (_, name) in GOOD.items():
            hits = await server.command("codeqa.search", {"query": name, "topK": 5})
            assert hits and hits[0]["path"] == rel and name in hits[0]["symbol"], (rel, hits)
        for rel in FIXTURE_FILES:
            assert any(
                h["path"] == rel
                for h in await server.command(
                    "codeqa.search", {"query": Path(rel).stem, "topK": 20}
                )
            ), rel

        # Editor features on the worst files, as open buffers.
        for rel in (
            "deep/parens.js",
            "deep/brackets.py",
            "deep/braces.c",
            "bad/inline.js",
            "bad/bundle.js",
        ):
            uri = (root / rel).as_uri()
            text = (root / rel).read_text()
            server.client.notify(
                "textDocument/didOpen",
                {
                    "textDocument": {
                        "uri": uri,
                        "languageId": {".js": "javascript", ".py": "python", ".c": "c"}[
                            Path(rel).suffix
                        ],
                        "version": 1,
                        "text": text,
                    }
                },
            )
            lenses = await server.result("textDocument/codeLens", {"textDocument": {"uri": uri}})
            assert isinstance(lenses, list), rel
            await server.result(
                "textDocument/hover",
                {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 10}},
            )
            explained = await server.command(
                "codeqa.explain", {"uri": uri, "position": {"line": 0, "character": 10}}
            )
            assert isinstance(explained["answer"], str) and explained["error"] is None, (
                rel,
                explained,
            )

        # Saves of every bad file go through the single-file path: same reasons, nothing breaks.
        for rel in (
            "bad/random.py",
            "bad/bundle.js",
            "bad/inline.js",
            "bad/dangling.py",
            "loops/a.py",
            "deep/defs.py",
        ):
            server.client.notify(
                "textDocument/didSave", {"textDocument": {"uri": (root / rel).as_uri()}}
            )
        settled = await server.settled()
        assert settled["files"] == status["files"] and settled["chunks"] == status["chunks"], (
            status,
            settled,
        )

        # And the server still answers a real question with citations.
        answer = await server.command(
            "codeqa.ask", {"question": "how are settings loaded from the config file?"}
        )
        assert any(c["symbol"] == "load_settings" for c in answer["citations"]), answer
    assert "Traceback" not in server.stderr(), server.stderr()[-6000:]


def without_root_file_access() -> list[str]:
    """A command prefix under which permission bits bind (as root: no DAC override)."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: chmod 000 cannot stop the server reading")
    return [setpriv, "--bounding-set=-dac_override,-dac_read_search"]


async def test_unreadable_files_are_counted(tmp_path: Path) -> None:
    prefix = without_root_file_access()
    root = make_workspace(tmp_path / "ws")
    locked_file = write(root, "locked/private.py", "def locked_away():\n    return 1\n")
    locked_dir = write(root, "sealed/inner.py", "def sealed_in():\n    return 2\n").parent
    locked_file.chmod(0)
    locked_dir.chmod(0)
    try:
        async with served(tmp_path, root, {"embedder": "hash"}, prefix=prefix) as server:
            status = await server.settled()
            assert status["skipped"].get("unreadable") == 2, status["skipped"]
            assert status["files"] == len(FIXTURE_FILES)
            hits = await server.command("codeqa.search", {"query": "load_settings"})
            assert hits and hits[0]["symbol"] == "load_settings"
            server.client.notify(
                "textDocument/didSave", {"textDocument": {"uri": locked_file.as_uri()}}
            )
            assert (await server.settled())["files"] == len(FIXTURE_FILES)
    finally:
        locked_dir.chmod(0o755)
        locked_file.chmod(0o644)


AMPLIFICATION_LIMIT = 20  # chunk text stored per byte of source, at most


async def test_nested_definitions_do_not_amplify_the_index(tmp_path: Path) -> None:
    import sqlite3

    root = make_workspace(tmp_path / "ws")
    source = write(root, "deep/functions.js", nested_js_functions(400))
    async with served(tmp_path, root, {"embedder": "hash"}) as server:
        await server.settled()
        hits = await server.command("codeqa.search", {"query": "load_settings"})
        assert hits and hits[0]["symbol"] == "load_settings"
    with sqlite3.connect(server.index_dir / "index.sqlite") as db:
        (stored,) = db.execute(
            "SELECT sum(length(CAST(text AS BLOB))) FROM chunks WHERE path = 'deep/functions.js'"
        ).fetchone()
    assert stored is not None and stored <= AMPLIFICATION_LIMIT * source.stat().st_size, (
        f"{stored} bytes of chunk text for a {source.stat().st_size}-byte file"
    )
