"""Call-graph references live in the index (real SQLite) and follow every save."""

from __future__ import annotations

from pathlib import Path

from codeqa_lsp.config import Settings
from codeqa_lsp.index.indexer import Indexer

APP = """
from lib.store import save_record
import lib.log as log


class Service:
    def handle(self, item):
        clean = self.validate(item)
        log.write(clean)
        return save_record(clean)

    def validate(self, item):
        return str(item).strip()
"""
STORE = """
def save_record(record):
    return _commit(record)


def _commit(record):
    return record
"""
LOG = """
def write(text):
    print(text)
"""


def _indexer(tmp_path: Path) -> Indexer:
    root = tmp_path / "repo"
    for rel, text in {"app.py": APP, "lib/store.py": STORE, "lib/log.py": LOG}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text.lstrip(), encoding="utf-8")
    indexer = Indexer(root, Settings(embedder="hash", index_dir=str(tmp_path / "index")))
    indexer.index()
    return indexer


def make_indexer(tmp_path: Path) -> Indexer:
    return _indexer(tmp_path)


def test_refs_are_stored_with_their_chunks(tmp_path: Path) -> None:
    indexer = _indexer(tmp_path)
    try:
        stored = {c.symbol: c.refs for c in indexer.chunks(path="app.py")}
        assert stored["Service.handle"] == ("self.validate", "log.write", "save_record")
        assert "save_record=lib.store.save_record" in stored["<module>"]
        assert "log=lib.log" in stored["<module>"]
        rows = {(r[1], r[2]): r[6] for r in indexer.store.graph_rows()}
        assert rows[("lib/store.py", "save_record")] == "_commit"
    finally:
        indexer.close()


def test_refs_follow_a_save(tmp_path: Path) -> None:
    indexer = _indexer(tmp_path)
    try:
        changed = STORE.lstrip().replace("return _commit(record)", "return helper(record)")
        (indexer.root / "lib/store.py").write_text(changed, encoding="utf-8")
        indexer.update_file("lib/store.py")
        rows = {(r[1], r[2]): r[6] for r in indexer.store.graph_rows()}
        assert rows[("lib/store.py", "save_record")] == "helper"
    finally:
        indexer.close()


def test_calls_that_start_at_one_byte_keep_one_order() -> None:
    """`super().close()` holds two calls starting at the same byte (`super`, `*.close`);
    `captures()` hands such nodes over in an order that changes between runs, so refs are
    ordered by offset, then text: a chunk's stored edges do not change when nothing did."""
    from codeqa_lsp.chunking.chunker import chunk_source
    from codeqa_lsp.chunking.languages import grammar, parser_for
    from codeqa_lsp.chunking.references import FileReferences

    source = "class A(B):\n    def close(self):\n        super().close()\n        x = f(g())\n"
    chunks = {c.symbol: c for c in chunk_source("a.py", source, language="python")}
    assert chunks["A.close"].refs == ("*.close", "super", "f", "g")
    # Many ties in one file (where the unordered version came out differently run to run).
    method = "    def m{0}(self):\n        return super().m{0}(h{0}())\n"
    body = "".join(method.format(i) for i in range(300))
    data = f"class C(D):\n{body}".encode()
    gram, parser = grammar("python"), parser_for("python")
    assert gram is not None and parser is not None
    refs = FileReferences(gram.language, "python", parser.parse(data).root_node, data)
    pairs = list(zip(refs.offsets, refs.refs, strict=True))
    assert pairs == sorted(pairs) and len(pairs) == 900
