"""The fixture workspace the server tests index: small, real Python with known definitions.

Expected definition spans come from Python's own `ast`, independent of the tree-sitter
chunker under test, so a citation range can be checked against the truth.
"""

from __future__ import annotations

import ast
from pathlib import Path

HASH_OPTIONS = {"embedder": "hash"}

FIXTURE_FILES: dict[str, str] = {
    "app/config.py": '''"""Configuration loading for the demo app."""

import json
from pathlib import Path


def load_settings(path):
    """Parse the JSON config file at `path` and return the settings dict."""
    with open(path) as handle:
        data = json.load(handle)
    data.setdefault("retries", 3)
    return data


def default_port():
    """The TCP port used when the config does not name one."""
    return 8080
''',
    "app/session.py": '''"""HTTP session with retries."""

from app.config import load_settings


class Session:
    """Sends requests and retries failures with exponential backoff."""

    def __init__(self, config_path):
        self.settings = load_settings(config_path)
        self.sent = 0

    def send(self, payload):
        """Send one payload, retrying up to `retries` times."""
        for attempt in range(self.settings["retries"]):
            self.sent += 1
            if self._try(payload, attempt):
                return True
        return False

    def _try(self, payload, attempt):
        return attempt >= 1 and bool(payload)
''',
    "app/cache.py": '''"""A tiny least-recently-used cache."""

from collections import OrderedDict


class LRUCache:
    """Keeps at most `capacity` entries, evicting the least recently used."""

    def __init__(self, capacity):
        self.capacity = capacity
        self.items = OrderedDict()

    def get(self, key):
        """Return the cached value and mark it as recently used."""
        value = self.items.pop(key)
        self.items[key] = value
        return value

    def put(self, key, value):
        """Insert a value, evicting the oldest entry when full."""
        self.items[key] = value
        if len(self.items) > self.capacity:
            self.items.popitem(last=False)
''',
    "README.md": "# Demo app\n\nLoads settings, sends payloads with retries, caches results.\n",
}


def make_workspace(root: Path) -> Path:
    for rel, text in FIXTURE_FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root.resolve()


def definitions(text: str) -> dict[str, tuple[int, int]]:
    """Qualified name → (first line, last line), 1-based inclusive, from `ast`."""
    spans: dict[str, tuple[int, int]] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.ClassDef):
                name = f"{prefix}{child.name}"
                spans[name] = (child.lineno, child.end_lineno or child.lineno)
                visit(child, f"{name}.")

    visit(ast.parse(text), "")
    return spans


def all_definitions(root: Path) -> dict[tuple[str, str], tuple[int, int]]:
    """(relative path, qualified name) → span, for every Python file of the fixture."""
    out: dict[tuple[str, str], tuple[int, int]] = {}
    for rel in FIXTURE_FILES:
        if rel.endswith(".py"):
            for name, span in definitions((root / rel).read_text()).items():
                out[(rel, name)] = span
    return out
