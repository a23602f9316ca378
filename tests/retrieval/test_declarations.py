"""Implementation over declaration, through a real index and the real searcher."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from codeqa_lsp.config import Settings
from codeqa_lsp.index.indexer import Indexer
from codeqa_lsp.retrieval.search import HybridSearcher

# The stubs repeat the question's words in their docstrings; the implementations use their
# own vocabulary, as real implementations do. Without the prior the stubs win.
FILES = {
    "pkg/hashing.pyi": '''
def make_hash(cls, eq: bool, frozen: bool) -> object:
    """Generate the __hash__ method of the class when eq is set and it is not frozen."""
''',
    "pkg/hashing.py": '''
def make_hash(cls, eq, frozen):
    lines = ["def __hash__(self):", "    return hash((type(self),) + self._fields())"]
    if eq and not frozen:
        return _compile(cls, lines)
    return None
''',
    "web/router.d.ts": '''
/** Dispatch the request through the matching route handlers of the router. */
export declare function dispatchRequest(router: Router, request: Request): void;
''',
    "web/router.ts": '''
export function dispatchRequest(router: Router, request: Request): void {
  const layer = router.stack.find((l) => l.match(request.path));
  if (layer) layer.handle(request);
}
''',
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
}


@pytest.fixture
def searcher(tmp_path: Path) -> Iterator[HybridSearcher]:
    root = tmp_path / "repo"
    for rel, text in FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text.lstrip(), encoding="utf-8")
    settings = Settings(embedder="hash", index_dir=str(tmp_path / "index"))
    indexer = Indexer(root, settings)
    indexer.index()
    searcher = HybridSearcher(indexer, settings)
    yield searcher
    searcher.close()
    indexer.close()


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


@pytest.mark.parametrize(
    ("query", "implementation", "declaration"),
    [
        ("where is __hash__ generated when eq is set and the class is not frozen",
         ("pkg/hashing.py", "make_hash"), ("pkg/hashing.pyi", "make_hash")),
        ("how does the router dispatch the request to the matching route handlers",
         ("web/router.ts", "dispatchRequest"), ("web/router.d.ts", "dispatchRequest")),
        ("how is the area of a shape computed in square units",
         ("shapes/base.py", "Square.area_of_shape"), ("shapes/base.py", "Shape.area_of_shape")),
    ],
)
def test_implementation_ranks_above_its_declaration(
    searcher: HybridSearcher, query: str, implementation: tuple[str, str],
    declaration: tuple[str, str],
) -> None:
    ranked = _ranked(searcher, query)
    assert implementation in ranked and declaration in ranked
    assert ranked.index(implementation) < ranked.index(declaration)


def test_asking_for_the_stub_turns_the_prior_off(searcher: HybridSearcher) -> None:
    ranked = _ranked(searcher, "which stub declares the signature of make_hash for __hash__ when eq is set")
    assert ranked.index(("pkg/hashing.pyi", "make_hash")) < ranked.index(("pkg/hashing.py", "make_hash"))
