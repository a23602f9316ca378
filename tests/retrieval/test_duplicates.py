"""Near copies of a better-ranked result are folded (real tree-sitter chunks; the search
test runs a real index: SQLite FTS5, hnswlib, the `hash` embedder)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from codeqa_lsp.chunking.chunker import chunk_source
from codeqa_lsp.config import Settings
from codeqa_lsp.index.indexer import Indexer
from codeqa_lsp.retrieval.duplicates import fold_near_copies
from codeqa_lsp.retrieval.search import HybridSearcher

# One documentation example in two variants (typer's docs_src style), and another example
# whose function has the same name but does something else.
PLAIN = """
def version_callback(value: bool):
    if value:
        print("Awesome CLI Version: 0.1.0")
        raise typer.Exit()


def main(name: str, version: bool = typer.Option(None, "--version", callback=version_callback)):
    print(f"Hello {name}")
"""
ANNOTATED = PLAIN.replace(
    'version: bool = typer.Option(None, "--version", callback=version_callback)',
    'version: Annotated[bool, typer.Option("--version", callback=version_callback)] = None',
)
OTHER = '''
def main(path: Path):
    """Count the lines of a file."""
    print(len(path.read_text().splitlines()))
'''


def _named(path: str, source: str, name: str):  # type: ignore[no-untyped-def]
    return next(c for c in chunk_source(path, source) if c.symbol == name)


def test_a_near_copy_of_a_higher_result_is_folded() -> None:
    plain = _named("docs_src/version/tutorial003.py", PLAIN, "main")
    annotated = _named("docs_src/version/tutorial003_an.py", ANNOTATED, "main")
    other = _named("docs_src/lines/tutorial001.py", OTHER, "main")
    callback = _named("docs_src/version/tutorial003_an.py", ANNOTATED, "version_callback")
    ranked = [(plain, 3.0), (annotated, 2.5), (callback, 2.0), (other, 1.0)]
    assert [c for c, _ in fold_near_copies(ranked)] == [plain, callback, other]
    # A definition the query names keeps its place.
    assert len(fold_near_copies(ranked, keep={annotated.id})) == 4
    # Twins in one file are deliberate (a sync and an async variant): both stay.
    twin = dataclasses.replace(annotated, path=plain.path)
    assert len(fold_near_copies([(plain, 2.0), (twin, 1.0)])) == 2


def test_search_shows_one_variant_of_an_example(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "docs_src").mkdir(parents=True)
    (root / "docs_src" / "tutorial003.py").write_text(PLAIN)
    (root / "docs_src" / "tutorial003_an.py").write_text(ANNOTATED)
    (root / "docs_src" / "tutorial004.py").write_text(OTHER)
    settings = Settings(embedder="hash", index_dir=str(tmp_path / "index"))
    indexer = Indexer(root, settings)
    try:
        indexer.index()
        searcher = HybridSearcher(indexer, settings)
        question = "how to add a version option with a callback"
        arm = [h.chunk.path for h in searcher.search(question, 5, mode="bm25").hits]
        assert {"docs_src/tutorial003.py", "docs_src/tutorial003_an.py"} <= set(arm)
        hits = searcher.search(question, top_k=5).hits
        mains = [h.chunk.path for h in hits if h.chunk.symbol == "main"]
        assert len([p for p in mains if p.startswith("docs_src/tutorial003")]) == 1
        assert "docs_src/tutorial004.py" in mains  # the same name, another example: kept
        searcher.close()
    finally:
        indexer.close()
