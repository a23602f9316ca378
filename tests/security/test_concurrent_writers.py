"""Issue 15 (Low): the server and the CLI writing one index at once.

Reproduces the report: the language server had the index open, `codeqa index` filled it,
then the server's next vector save (after a file save) replaced the vector file with its own
stale in-memory copy, dropping the CLI's vectors. Saves are serialised by the per-index
lock file, and a save now adopts what another process committed since its last load.
Real SQLite, real hnswlib, two independent `Indexer`s on one index directory.
"""

from __future__ import annotations

from pathlib import Path

import codeqa_lsp
from codeqa_lsp.config import Settings
from codeqa_lsp.index.indexer import Indexer

PACKAGE = Path(codeqa_lsp.__file__).parent


def test_a_stale_writer_does_not_drop_another_writers_vectors(tmp_path: Path) -> None:
    import shutil

    root = tmp_path / "ws"
    shutil.copytree(PACKAGE / "chunking", root)
    settings = Settings(embedder="hash", index_dir=str(tmp_path / "idx"))

    server = Indexer(root, settings)  # opened first, holds an empty in-memory vector index
    cli = Indexer(root, settings)
    cli.index()
    indexed = len(cli.chunks())
    assert indexed > 30 and len(cli.vectors) == indexed
    cli.close()

    target = root / "model.py"
    target.write_text(target.read_text() + "\n\ndef freshly_saved_helper():\n    return 42\n")
    server.update_file("model.py")
    server.close()  # persists the server's vectors

    reopened = Indexer(root, settings)
    try:
        chunks = len(reopened.chunks())
        assert chunks >= indexed
        assert len(reopened.vectors) == chunks, (len(reopened.vectors), chunks)
        hits = reopened.dense("freshly saved helper returns 42", 5)
        assert hits  # the server's own new vector is there too
    finally:
        reopened.close()
