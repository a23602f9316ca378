"""Whole-file evidence counts only the rest of a file (`rerank.rest_of_files`), on a real index."""

from __future__ import annotations

from pathlib import Path

from codeqa_lsp.config import Settings
from codeqa_lsp.index.indexer import Indexer
from codeqa_lsp.retrieval.rerank import rest_of_files

ONE_FUNCTION = '''
def read_config_file(path):
    """Read the configuration file and return its settings as a dict."""
    with open(path) as handle:
        return dict(line.split("=", 1) for line in handle if "=" in line)
'''

MANY_FUNCTIONS = """
def parse_line(line):
    return line.split("=", 1)


def strip_comments(lines):
    return [line for line in lines if not line.startswith("#")]


def merge_settings(base, extra):
    merged = dict(base)
    merged.update(extra)
    return merged


def load_all(paths):
    settings = {}
    for path in paths:
        with open(path) as handle:
            pairs = [parse_line(line) for line in strip_comments(handle.readlines())]
        settings = merge_settings(settings, dict(pairs))
    return settings
"""


def test_a_one_definition_file_has_no_rest_and_a_module_of_many_keeps_most(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "single.py").write_text(ONE_FUNCTION.lstrip(), encoding="utf-8")
    (root / "many.py").write_text(MANY_FUNCTIONS.lstrip(), encoding="utf-8")
    indexer = Indexer(root, Settings(embedder="hash", index_dir=str(tmp_path / "index")))
    try:
        indexer.index()
        chunks = indexer.chunks()
        sizes = indexer.file_sizes(["single.py", "many.py", "absent.py"])
    finally:
        indexer.close()
    assert sizes == {
        "single.py": len(ONE_FUNCTION.lstrip().encode()),
        "many.py": len(MANY_FUNCTIONS.lstrip().encode()),
    }
    rest = rest_of_files([(c, 1.0) for c in chunks], sizes)
    # The whole-file score of single.py is read_config_file's own score: nothing to add.
    assert rest["single.py"] < 0.05
    # many.py's largest definition is half of it: its file evidence comes as much from
    # the other functions, and every chunk of the file gets the same factor.
    assert 0.4 < rest["many.py"] < 0.7
    # Unknown sizes (a file not indexed yet) count whole: no entry, the caller uses 1.
    assert rest_of_files([(c, 1.0) for c in chunks], {}) == {}
