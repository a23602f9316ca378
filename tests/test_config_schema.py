"""The editors' copies of the settings stay in step with `codeqa_lsp/config.py`.

package.json's `contributes.configuration` (and its Restricted Mode list) and PROTOCOL.md's
settings table are generated (`python -m codeqa_lsp.config_schema`); the hand-written
examples in the editors' READMEs and the extension's list of keys it forwards are checked
against the same fields.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from codeqa_lsp.config import SETTINGS, Settings
from codeqa_lsp.config_schema import (
    PACKAGE_JSON,
    PROTOCOL_MD,
    json_default,
    main,
    stale_files,
    vscode_settings,
)

ROOT = Path(__file__).resolve().parents[1]
REGENERATE = "run `python -m codeqa_lsp.config_schema` and commit the result"


def test_generated_editor_files_match_config() -> None:
    assert stale_files(ROOT, write=False) == [], REGENERATE


def test_check_reports_a_hand_edited_default_and_regenerating_restores_it(tmp_path: Path) -> None:
    for rel in (PACKAGE_JSON, PROTOCOL_MD):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, tmp_path / rel)
    package = json.loads((tmp_path / PACKAGE_JSON).read_text(encoding="utf-8"))
    package["contributes"]["configuration"]["properties"]["codeqa.topK"]["default"] = 5
    (tmp_path / PACKAGE_JSON).write_text(json.dumps(package, indent=2) + "\n", encoding="utf-8")
    protocol = (tmp_path / PROTOCOL_MD).read_text(encoding="utf-8")
    (tmp_path / PROTOCOL_MD).write_text(protocol.replace("| `8` |", "| `5` |"), encoding="utf-8")

    assert main(["--check", "--root", str(tmp_path)]) == 1
    assert main(["--root", str(tmp_path)]) == 0
    assert main(["--check", "--root", str(tmp_path)]) == 0
    for rel in (PACKAGE_JSON, PROTOCOL_MD):
        assert (tmp_path / rel).read_text(encoding="utf-8") == (ROOT / rel).read_text(
            encoding="utf-8"
        )


def test_package_json_declares_every_server_default_and_bound() -> None:
    properties = json.loads((ROOT / PACKAGE_JSON).read_text(encoding="utf-8"))["contributes"][
        "configuration"
    ]["properties"]
    for facts in SETTINGS.values():
        if not facts.spec.editor:
            assert f"codeqa.{facts.wire}" not in properties
            continue
        prop = properties[f"codeqa.{facts.wire}"]
        assert prop["default"] == json_default(facts.default)
        settings, problems = Settings.from_wire({facts.wire: prop["default"]})
        assert problems == [] and settings == Settings()
        if "minimum" in prop:
            assert Settings.from_wire({facts.wire: prop["minimum"] - 1})[1]
        if "maximum" in prop:
            assert Settings.from_wire({facts.wire: prop["maximum"] + 1})[1]


def test_the_extension_forwards_exactly_the_contributed_server_settings() -> None:
    """`SERVER_SETTING_KEYS` in settings.ts is what reaches the server: a contributed setting
    missing from it would be shown to users and do nothing."""
    source = (ROOT / "editors/vscode/src/settings.ts").read_text(encoding="utf-8")
    listed = re.search(r"SERVER_SETTING_KEYS = \[(.*?)\] as const", source, re.DOTALL)
    assert listed, "SERVER_SETTING_KEYS not found in settings.ts"
    forwarded = set(re.findall(r'"([A-Za-z.]+)"', listed.group(1)))
    assert forwarded == {f.wire for f in SETTINGS.values() if f.spec.editor}
    assert forwarded | {"server.path"} == set(vscode_settings())


def lua_literal(value: object) -> str:
    if value is None:
        return "nil"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f"'{value}'"
    if isinstance(value, tuple) and not value:
        return "{}"
    return str(json_default(value))


def test_neovim_readme_settings_example_shows_the_defaults() -> None:
    readme = (ROOT / "editors/neovim/README.md").read_text(encoding="utf-8")
    block = re.search(r"```lua\nsettings = \{\n(.*?)\n\}\n```", readme, re.DOTALL)
    assert block, "the `settings = {...}` example is gone from editors/neovim/README.md"
    code = re.sub(r"--[^\n]*", "", block.group(1))
    shown = dict(re.findall(r"(\w+)\s*=\s*('[^']*'|true|false|nil|\{\}|-?[\d.]+)", code))
    assert len(shown) >= 5
    by_wire = {f.wire: f for f in SETTINGS.values()}
    for key, literal in shown.items():
        assert key in by_wire, f"'{key}' is not a server setting"
        assert literal == lua_literal(by_wire[key].default), key


def test_vscode_readme_table_shows_the_contributed_defaults() -> None:
    readme = (ROOT / "editors/vscode/README.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| ((?:`codeqa\.[\w.]+`(?: / )?)+) \| `([^`]*)` \|", readme, re.MULTILINE)
    assert len(rows) >= 10
    contributed = vscode_settings()
    for keys, default in rows:
        for key in re.findall(r"`codeqa\.([\w.]+)`", keys):
            expected = contributed[key]["default"]
            assert default in (json.dumps(expected), str(expected)), key
