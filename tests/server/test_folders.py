"""`FolderRegistry.workspace_for`: the one rule for which folder's index serves a file.

Real folders on disk and real engine `CodeBase`s (hash embedder), opened the way the
server's writer threads open them (`Folder.open_codebase`).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from codeqa_lsp.config import Settings
from codeqa_lsp.server.folders import Folder, FolderRegistry


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    for rel in ("outer/top.py", "outer/inner/deep.py", "other/side.py", "elsewhere/scratch.py"):
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("def f():\n    return 1\n", encoding="utf-8")
    return tmp_path.resolve()


@pytest.fixture
def registry(tmp_path: Path) -> Iterator[FolderRegistry]:
    settings = Settings(embedder="hash", index_dir=str(tmp_path / "index"))
    registry = FolderRegistry(lambda: settings)
    yield registry
    for folder in registry.folders:
        folder.close_codebase()
        folder.writer.shutdown(wait=True)


def _open(registry: FolderRegistry, folder: Folder) -> None:
    folder.open_codebase(registry.settings_for(folder))


def _uri(path: Path) -> str:
    return path.as_uri()


def test_no_folders_serve_nothing(registry: FolderRegistry, tree: Path) -> None:
    assert registry.workspace_for(_uri(tree / "outer" / "top.py")) is None
    assert registry.workspace_for_glob(None) is None
    assert registry.workspace_for_glob("src/**") is None


def test_nested_folders_the_innermost_open_one_serves(registry: FolderRegistry, tree: Path) -> None:
    outer = registry.register(_uri(tree / "outer"), "outer")
    inner = registry.register(_uri(tree / "outer" / "inner"), "inner")
    assert outer is not None and inner is not None
    deep = _uri(tree / "outer" / "inner" / "deep.py")

    assert registry.workspace_for(deep) is None  # nothing open yet: no answer from nowhere

    _open(registry, outer)  # the inner folder is still opening: the outer one contains the file
    served = registry.workspace_for(deep)
    assert served is not None
    assert (served.folder, served.codebase, served.rel) == (outer, outer.codebase, "inner/deep.py")
    assert served.path == tree / "outer" / "inner" / "deep.py"

    _open(registry, inner)
    served = registry.workspace_for(deep)
    assert served is not None
    assert (served.folder, served.codebase, served.rel) == (inner, inner.codebase, "deep.py")
    top = registry.workspace_for(_uri(tree / "outer" / "top.py"))
    assert top is not None and (top.folder, top.rel) == (outer, "top.py")


def test_a_file_outside_every_folder_goes_to_the_first_open_folder(
    registry: FolderRegistry, tree: Path
) -> None:
    first = registry.register(_uri(tree / "outer"), "outer")
    second = registry.register(_uri(tree / "other"), "other")
    assert first is not None and second is not None
    scratch = _uri(tree / "elsewhere" / "scratch.py")

    _open(registry, second)  # only the second is open: it is the first *open* folder
    served = registry.workspace_for(scratch)
    assert served is not None and (served.folder, served.rel) == (second, None)
    # A file of the first folder, still opening, is not answered from the other folder's code.
    assert registry.workspace_for(_uri(tree / "outer" / "top.py")) is None

    _open(registry, first)
    served = registry.workspace_for(scratch)
    assert served is not None and (served.folder, served.rel) == (first, None)
    assert registry.workspace_for("untitled:Untitled-1") is None  # not a local file


def test_questions_pick_a_folder_by_the_glob_head_else_the_first(
    registry: FolderRegistry, tree: Path
) -> None:
    first = registry.register(_uri(tree / "outer"), "outer")
    second = registry.register(_uri(tree / "other"), "other")
    assert first is not None and second is not None
    _open(registry, first)
    _open(registry, second)
    assert registry.workspace_for_glob("other/**/*.py") == (second, second.codebase, "**/*.py")
    assert registry.workspace_for_glob("src/**/*.py") == (first, first.codebase, "src/**/*.py")
    assert registry.workspace_for_glob(None) == (first, first.codebase, None)
