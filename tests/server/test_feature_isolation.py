"""Features are isolated: one that cannot register, or whose handler raises, breaks nothing else.

The server is the production `build_server` over stdio with two broken features added
(tests/server/broken_server.py); the working features are driven through real requests.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from codeqa_lsp.server import setup
from tests.server.broken_server import BOOM
from tests.server.rawclient import RawClient
from tests.server.workspace import HASH_OPTIONS, make_workspace

REPO = Path(__file__).resolve().parents[2]
HANG_GUARD = 120.0
INTERNAL_ERROR = -32603


def test_every_feature_module_is_registered_from_setup() -> None:
    """The list in setup.py is the whole server: every module exposing `register` is in it."""
    server_dir = Path(setup.__file__).parent
    with_register = {
        path.stem
        for path in server_dir.glob("*.py")
        if "\ndef register(server" in path.read_text(encoding="utf-8")
    }
    assert with_register == {m.__name__.rsplit(".", 1)[-1] for m in setup.FEATURES}


def test_no_feature_imports_another_feature_or_is_imported_by_the_core() -> None:
    """The feature↔app cycle stays broken: features import the core, never each other."""
    server_dir = Path(setup.__file__).parent
    features = {m.__name__ for m in setup.FEATURES}
    for path in server_dir.glob("*.py"):
        module = f"codeqa_lsp.server.{path.stem}"
        if module == setup.__name__:
            continue
        text = path.read_text(encoding="utf-8")
        for feature in features - {module}:
            short = feature.rsplit(".", 1)[-1]
            assert f"import {feature}" not in text and f"from {feature} import" not in text, (
                module,
                feature,
            )
            assert f"from codeqa_lsp.server import {short}" not in text, (module, feature)


async def _indexed(client: RawClient) -> None:
    while True:
        status = (await client.command("codeqa.status"))["result"]
        if status["chunks"] and not status["indexing"]:
            return
        await asyncio.sleep(0.1)


async def test_a_broken_feature_leaves_the_others_working(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws")
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tests.server.broken_server",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        cwd=REPO,
        env={
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
        },
        limit=64 * 1024 * 1024,
    )
    client = RawClient(proc)
    try:
        init = await asyncio.wait_for(
            client.initialize(root, {**HASH_OPTIONS, "indexDir": str(tmp_path / "index")}),
            HANG_GUARD,
        )
        assert "result" in init, init
        failed = await asyncio.wait_for(client.command(BOOM), HANG_GUARD)
        assert failed["error"]["code"] == INTERNAL_ERROR, failed
        assert "this handler always fails" in failed["error"]["message"], failed
        # The same server keeps answering every other feature, with real results.
        await asyncio.wait_for(_indexed(client), HANG_GUARD)
        search = await asyncio.wait_for(
            client.command("codeqa.search", {"query": "load settings"}), HANG_GUARD
        )
        assert any(hit["symbol"].endswith("load_settings") for hit in search["result"]), search
        uri = (root / "app" / "session.py").as_uri()
        line = (
            (root / "app" / "session.py")
            .read_text()
            .splitlines()
            .index("        self.settings = load_settings(config_path)")
        )
        hover = await asyncio.wait_for(
            client.request(
                "textDocument/hover",
                {
                    "textDocument": {"uri": uri},
                    "position": {"line": line, "character": 26},
                },
            ),
            HANG_GUARD,
        )
        assert "load_settings" in hover["result"]["contents"]["value"], hover
        again = await asyncio.wait_for(client.command(BOOM), HANG_GUARD)
        assert again["error"]["code"] == INTERNAL_ERROR, again
        status = await asyncio.wait_for(client.command("codeqa.status"), HANG_GUARD)
        assert status["result"]["folders"] == [str(root)], status
    finally:
        assert await client.close() == 0
