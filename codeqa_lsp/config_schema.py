"""The editors' copies of the settings, generated from `config.Settings` (its fields' `Spec`s).

    python -m codeqa_lsp.config_schema          # rewrite the files below
    python -m codeqa_lsp.config_schema --check  # exit 1 naming each file that is out of step

It writes `contributes.configuration` and `capabilities.untrustedWorkspaces.
restrictedConfigurations` in `editors/vscode/package.json` (the rest of the file is kept
byte for byte: same key order, 2-space JSON) and the settings table of `editors/PROTOCOL.md`
(between the markers below). `tests/test_config_schema.py` regenerates both and fails when a
checked-in file differs, so a default, bound or description is only ever edited in config.py.

It lives in the package rather than under `scripts/` because it is code about `config` and
nothing else: imported by the test like any module, type-checked and linted with the package,
and runnable without a path hack. It imports only `config` (the bottom layer) and the standard
library; at run time nothing imports it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from codeqa_lsp.config import SETTINGS, SettingFacts

PACKAGE_JSON = Path("editors/vscode/package.json")
PROTOCOL_MD = Path("editors/PROTOCOL.md")
TABLE_BEGIN = (
    "<!-- settings table: generated from codeqa_lsp/config.py by "
    "`python -m codeqa_lsp.config_schema`; edit config.py, not this table -->"
)
TABLE_END = "<!-- end of the generated settings table -->"
SECTION = "codeqa"

# VS Code-only settings: the extension reads them, the server never sees them.
CLIENT_SETTINGS: dict[str, dict[str, Any]] = {
    "server.path": {
        "type": "string",
        "default": "",
        "scope": "machine-overridable",
        "restricted": True,  # which program runs: never from a folder's settings in Restricted Mode
        "markdownDescription": "Command that starts the language server. Empty: `codeqa-lsp` on "
        "`PATH`, else the selected Python interpreter's `-m codeqa_lsp` (Python extension), else "
        "`python3 -m codeqa_lsp`.",
    },
}
_JSON_TYPES = {
    "bool": "boolean",
    "int": "integer",
    "float": "number",
    "str": "string",
    "choice": "string",
    "globs": "array",
}
# What a trust tier means to a reader of each file (PROTOCOL.md speaks of the wire keys).
_VSCODE_TRUST = {"user": "Taken from user settings only."}
_PROTOCOL_TRUST = {
    "user": "Only from `userSettings` or the server's command line; ignored elsewhere.",
    "endpoint": "From workspace-scoped settings: loopback only, and never given the user's key.",
    "key": "From workspace-scoped settings it only goes to a workspace-scoped endpoint.",
}


def json_default(value: Any) -> Any:
    """A default as JSON shows it: tuples as lists, whole floats as integers (`60`, not `60.0`)."""
    if isinstance(value, tuple):
        return list(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def description(facts: SettingFacts) -> str:
    """VS Code's text: the field's doc, what null means, and where a user-only one comes from."""
    text = facts.spec.doc
    if facts.optional and facts.spec.unset:
        text += f" Null: {facts.spec.unset}."
    if facts.spec.trust in _VSCODE_TRUST:
        text += " " + _VSCODE_TRUST[facts.spec.trust]
    return text


def vscode_property(facts: SettingFacts) -> dict[str, Any]:
    """One `contributes.configuration` property, keys in the order package.json has used."""
    kind = _JSON_TYPES[facts.kind]
    prop: dict[str, Any] = {"type": [kind, "null"] if facts.optional else kind}
    if facts.kind == "globs":
        prop["items"] = {"type": "string"}
    if facts.kind == "choice":
        prop["enum"] = [choice for choice, _ in facts.spec.choices]
        prop["enumDescriptions"] = [doc for _, doc in facts.spec.choices]
    prop["default"] = json_default(facts.default)
    if facts.spec.trust == "user":
        prop["scope"] = "machine"  # VS Code then ignores it in workspace and folder settings
    low = facts.lower_bound
    if low is not None:
        prop["minimum" if low[1] else "exclusiveMinimum"] = json_default(float(low[0]))
    if facts.spec.maximum is not None:
        prop["maximum"] = json_default(float(facts.spec.maximum))
    text = description(facts)
    prop["markdownDescription" if "`" in text else "description"] = text
    return prop


def vscode_settings() -> dict[str, dict[str, Any]]:
    """Every VS Code setting below `codeqa.`: the client's own, then the server's in field order."""
    out = {
        key: {k: v for k, v in prop.items() if k != "restricted"}
        for key, prop in CLIENT_SETTINGS.items()
    }
    out.update({f.wire: vscode_property(f) for f in SETTINGS.values() if f.spec.editor})
    return out


def restricted_settings() -> list[str]:
    """The settings VS Code's Restricted Mode takes from user settings only."""
    client = [key for key, prop in CLIENT_SETTINGS.items() if prop.get("restricted")]
    server = [
        f.wire
        for f in SETTINGS.values()
        if f.spec.editor and f.spec.trust in ("restricted", "endpoint", "user")
    ]
    return [f"{SECTION}.{key}" for key in client + server]


def render_package_json(text: str) -> str:
    """package.json with its generated parts replaced and everything else as it was."""
    package = json.loads(text)
    package["contributes"]["configuration"] = {
        "title": "CodeQA",
        "properties": {f"{SECTION}.{key}": prop for key, prop in vscode_settings().items()},
    }
    package["capabilities"]["untrustedWorkspaces"]["restrictedConfigurations"] = (
        restricted_settings()
    )
    return json.dumps(package, indent=2, ensure_ascii=False) + "\n"


def _protocol_type(facts: SettingFacts) -> str:
    if facts.kind == "choice":
        return " \\| ".join(f'`"{choice}"`' for choice, _ in facts.spec.choices)
    name = {
        "bool": "bool",
        "int": "int",
        "float": "number",
        "str": "string",
        "globs": "string[] (globs)",
    }[facts.kind]
    low, top = facts.lower_bound, facts.spec.maximum
    if low is not None and top is not None:
        return f"{name} in [{json_default(float(low[0]))}, {json_default(float(top))}]"
    if low is not None:
        return f"{name} {'≥' if low[1] else '>'} {json_default(float(low[0]))}"
    return name


def _protocol_meaning(facts: SettingFacts) -> str:
    parts = [facts.spec.doc]
    parts += [f"`{choice}`: {doc}" for choice, doc in facts.spec.choices]
    if facts.spec.trust in _PROTOCOL_TRUST:
        parts.append(_PROTOCOL_TRUST[facts.spec.trust])
    return " ".join(parts).replace("|", "\\|")


def protocol_table() -> str:
    """PROTOCOL.md's table of every server setting, markers included."""
    rows = [TABLE_BEGIN, "", "| key | type | default | meaning |", "|---|---|---|---|"]
    for facts in SETTINGS.values():
        default = (
            f"`{json.dumps(json_default(facts.default))}`"
            if facts.default is not None
            else facts.spec.unset or "none"
        )
        rows.append(
            f"| `{facts.wire}` | {_protocol_type(facts)} | {default} | {_protocol_meaning(facts)} |"
        )
    return "\n".join([*rows, "", TABLE_END])


def render_protocol(text: str) -> str:
    """PROTOCOL.md with the text between the markers (inclusive) replaced by the table."""
    begin, end = text.find(TABLE_BEGIN), text.find(TABLE_END)
    if begin < 0 or end < begin:
        raise ValueError(f"{PROTOCOL_MD}: the settings table markers are missing")
    return text[:begin] + protocol_table() + text[end + len(TABLE_END) :]


def stale_files(root: Path, write: bool) -> list[Path]:
    """The generated files that differ from their rendering (rewritten when `write`)."""
    stale = []
    for rel, render in ((PACKAGE_JSON, render_package_json), (PROTOCOL_MD, render_protocol)):
        path = root / rel
        current = path.read_text(encoding="utf-8")
        fresh = render(current)
        if fresh != current:
            stale.append(rel)
            if write:
                path.write_text(fresh, encoding="utf-8")
    return stale


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m codeqa_lsp.config_schema",
        description=__doc__.splitlines()[0] if __doc__ else None,
    )
    parser.add_argument(
        "--check", action="store_true", help="only report the files that are out of step (exit 1)"
    )
    parser.add_argument(
        "--root",
        type=Path,
        default=Path(__file__).resolve().parents[1],
        help="the checkout holding editors/ (default: this package's)",
    )
    args = parser.parse_args(argv)
    if not (args.root / PACKAGE_JSON).is_file():
        print(
            f"error: no {PACKAGE_JSON} under {args.root}: run from a source checkout",
            file=sys.stderr,
        )
        return 2
    stale = stale_files(args.root, write=not args.check)
    for rel in stale:
        print(f"{rel}: {'out of step with codeqa_lsp/config.py' if args.check else 'regenerated'}")
    return 1 if stale and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
