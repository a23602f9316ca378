"""Fixtures for the index tests: small real workspaces, hash-embedder settings, helpers."""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from codeqa_lsp.config import Settings
from codeqa_lsp.index.indexer import Indexer
from codeqa_lsp.index.store import label_for
from tests.fakes import fake_llm  # noqa: F401


def module_source(index: int, functions: int = 4) -> str:
    """A Python module with distinct, realistic-looking functions and one class."""
    parts = [f'"""Module {index}: helpers for area {index}."""\n\nimport os\n\n']
    for j in range(functions):
        parts.append(
            textwrap.dedent(f'''
            def compute_total_{index}_{j}(values, scale={j}):
                """Sum the values of group {index} and scale the result by {j}."""
                total = 0
                for value in values:
                    total += value * scale
                return total + {index}

            ''')
        )
    parts.append(
        textwrap.dedent(f'''
        class Session{index}:
            """A connection session number {index}."""

            def send_request_{index}(self, payload):
                """Send the payload over the wire and wait for the reply."""
                return self.transport.write(payload)
        ''')
    )
    return "".join(parts)


@pytest.fixture
def make_workspace(tmp_path: Path) -> Callable[..., Path]:
    def make(files: int = 6, functions: int = 4, name: str = "ws") -> Path:
        root = tmp_path / name
        (root / "pkg").mkdir(parents=True, exist_ok=True)
        for i in range(files):
            (root / "pkg" / f"mod{i}.py").write_text(module_source(i, functions), "utf-8")
        return root

    return make


@pytest.fixture
def hash_settings(tmp_path: Path) -> Callable[[str], Settings]:
    def make(name: str = "index") -> Settings:
        return Settings(embedder="hash", index_dir=str(tmp_path / name))

    return make


@pytest.fixture
def open_indexer() -> Iterator[Callable[[Path, Settings], Indexer]]:
    opened: list[Indexer] = []

    def open_(root: Path, settings: Settings) -> Indexer:
        indexer = Indexer(root, settings)
        opened.append(indexer)
        return indexer

    yield open_
    for indexer in opened:
        indexer.close()


def snapshot(indexer: Indexer) -> tuple[set[str], set[int]]:
    """(chunk ids in SQLite, live vector labels), asserting every chunk has exactly one vector."""
    ids = {c.id for c in indexer.chunks()}
    labels = indexer.vectors.live_labels()
    assert len(ids) == indexer.status().chunks, "duplicate chunk rows"
    assert labels == {label_for(i) for i in ids}, "vectors and chunks disagree"
    return ids, labels
