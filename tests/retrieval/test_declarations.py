"""Implementation over declaration, through a real index and the real searcher."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from codeqa_lsp.config import Settings
from codeqa_lsp.index.indexer import Indexer
from codeqa_lsp.retrieval.search import HybridSearcher
from tests.retrieval.searchers import hash_searcher

# The stubs repeat the question's words in their docstrings; the implementations use their
# own vocabulary, as real implementations do. Without the prior the stubs win.
FILES = {
    "pkg/hashing.pyi": '''
def make_hash(cls, eq: bool, frozen: bool) -> object:
    """Generate the __hash__ method of the class when eq is set and it is not frozen."""
''',
    "pkg/hashing.py": """
def make_hash(cls, eq, frozen):
    lines = ["def __hash__(self):", "    return hash((type(self),) + self._fields())"]
    if eq and not frozen:
        return _compile(cls, lines)
    return None
""",
    "web/router.d.ts": """
/** Dispatch the request through the matching route handlers of the router. */
export declare function dispatchRequest(router: Router, request: Request): void;
""",
    "web/router.ts": """
export function dispatchRequest(router: Router, request: Request): void {
  const layer = router.stack.find((l) => l.match(request.path));
  if (layer) layer.handle(request);
}
""",
    "shapes/base.py": '''
import abc


class Shape(abc.ABC):
    @abc.abstractmethod
    def area_of_shape(self):
        """Compute the area of the shape in square units."""


class Square(Shape):
    def area_of_shape(self):
        return self.side * self.side
''',
    # An interface's doc comments describe behaviour in the user's words; the class that
    # implements it does the work (rxjs's `GlobalConfig` / `Observer` pattern).
    "stream/config.ts": """
/**
 * Global configuration: a hook called when an error is thrown inside a subscriber
 * callback and nobody handles the error.
 */
export interface ErrorConfig {
  /** Called with the unhandled error thrown by a subscriber callback. */
  onUnhandledError: ((err: any) => void) | null;
}
""",
    "stream/report.ts": """
/** Report an unhandled error on a timer, so it is thrown outside the subscriber. */
export function reportUnhandledError(err: any) {
  timeoutProvider.setTimeout(() => {
    const { onUnhandledError } = config;
    if (onUnhandledError) {
      onUnhandledError(err);
    } else {
      throw err;
    }
  });
}
""",
    "store/reader.go": """
package store

// Reader reads the rows of a table page by page.
type Reader interface {
	ReadPage(table string, page int) ([]Row, error)
}

type pageReader struct{ db *DB }

func (r pageReader) ReadPage(table string, page int) ([]Row, error) {
	return r.db.query(table, page*100, 100)
}
""",
}


@pytest.fixture
def searcher(tmp_path: Path) -> Iterator[HybridSearcher]:
    with hash_searcher(tmp_path, FILES) as searcher:
        yield searcher


def _ranked(searcher: HybridSearcher, query: str) -> list[tuple[str, str]]:
    return [(h.chunk.path, h.chunk.symbol) for h in searcher.search(query, top_k=10).hits]


def test_declarations_are_marked_in_the_index(searcher: HybridSearcher) -> None:
    chunks = searcher.indexer.chunks()
    marked = {(c.path, c.symbol) for c in chunks if c.declaration}
    assert ("pkg/hashing.pyi", "make_hash") in marked
    assert ("web/router.d.ts", "dispatchRequest") in marked
    assert ("shapes/base.py", "Shape.area_of_shape") in marked
    assert ("pkg/hashing.py", "make_hash") not in marked
    assert ("web/router.ts", "dispatchRequest") not in marked
    assert ("shapes/base.py", "Square.area_of_shape") not in marked
    assert ("stream/config.ts", "ErrorConfig") in marked
    assert ("store/reader.go", "Reader") in marked
    assert ("store/reader.go", "pageReader") not in marked
    assert ("stream/report.ts", "reportUnhandledError") not in marked


@pytest.mark.parametrize(
    ("query", "implementation", "declaration"),
    [
        (
            "where is __hash__ generated when eq is set and the class is not frozen",
            ("pkg/hashing.py", "make_hash"),
            ("pkg/hashing.pyi", "make_hash"),
        ),
        (
            "how does the router dispatch the request to the matching route handlers",
            ("web/router.ts", "dispatchRequest"),
            ("web/router.d.ts", "dispatchRequest"),
        ),
        (
            "how is the area of a shape computed in square units",
            ("shapes/base.py", "Square.area_of_shape"),
            ("shapes/base.py", "Shape.area_of_shape"),
        ),
        (
            "how is an unhandled error of a subscriber callback reported",
            ("stream/report.ts", "reportUnhandledError"),
            ("stream/config.ts", "ErrorConfig"),
        ),
    ],
)
def test_implementation_ranks_above_its_declaration(
    searcher: HybridSearcher,
    query: str,
    implementation: tuple[str, str],
    declaration: tuple[str, str],
) -> None:
    ranked = _ranked(searcher, query)
    assert implementation in ranked and declaration in ranked
    assert ranked.index(implementation) < ranked.index(declaration)


def test_asking_for_the_stub_turns_the_prior_off(searcher: HybridSearcher) -> None:
    ranked = _ranked(
        searcher, "which stub declares the signature of make_hash for __hash__ when eq is set"
    )
    assert ranked.index(("pkg/hashing.pyi", "make_hash")) < ranked.index(
        ("pkg/hashing.py", "make_hash")
    )


def test_a_long_query_over_a_declaration_does_not_fail(searcher: HybridSearcher) -> None:
    """Long pasted issues use their own priors; a declaration among their candidates used
    to raise AttributeError (the declaration factor was only set for short queries)."""
    issue = (
        "Bug report: make_hash generates __hash__ wrongly when eq is set and frozen is not. "
        "Steps: define a class with eq true, frozen false, compute hash of two instances, "
        "compare fields, observe the stub signature mismatch in pkg hashing module, the "
        "router dispatchRequest handler, shape area computation and square side values."
    )
    hits = searcher.search(issue, top_k=10).hits
    assert ("pkg/hashing.py", "make_hash") in [(h.chunk.path, h.chunk.symbol) for h in hits]


def test_a_chunker_change_refreshes_the_flag_of_kept_chunks(tmp_path: Path) -> None:
    """Chunk ids hash path, symbol and text only: re-chunking after a chunker change keeps
    them, and the re-derived `declaration` must still reach the index."""
    root = tmp_path / "repo"
    (root / "stream").mkdir(parents=True)
    (root / "stream/config.ts").write_text(FILES["stream/config.ts"].lstrip(), encoding="utf-8")
    settings = Settings(embedder="hash", index_dir=str(tmp_path / "index"))
    indexer = Indexer(root, settings)
    try:
        indexer.index()
        with indexer.store.transaction() as conn:  # as an older chunker left it
            conn.execute("UPDATE chunks SET declaration = 0")
            conn.execute("UPDATE meta SET value = 'old' WHERE key = 'chunking'")
    finally:
        indexer.close()
    indexer = Indexer(root, settings)
    try:
        indexer.index()
        marked = {c.symbol for c in indexer.chunks() if c.declaration}
    finally:
        indexer.close()
    assert marked == {"ErrorConfig"}
