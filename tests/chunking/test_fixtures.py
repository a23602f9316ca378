"""Per-language fixtures: the exact (symbol, kind, start_line, end_line) list per file.

The fixtures under tests/fixtures/chunking/ hold the tricky cases the ground truth of the
retrieval evaluation depends on: JS property assignments and object literals, TS class-field
arrows and overloads, Go receivers, Rust impls, nested functions, decorators, doc comments,
getter/setter pairs.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from codeqa_lsp.chunking.chunker import chunk_source
from codeqa_lsp.chunking.languages import language_for_path

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "chunking"

# Fixture file → the workspace path it is chunked as (the path matters for names such as
# `response.header` in an object literal exported from response.js).
WORKSPACE_PATHS = {
    "sample.py": "src/shop/sample.py",
    "sample.js": "lib/sample.js",
    "response.js": "lib/response.js",
    "sample.ts": "src/sample.ts",
    "sample.go": "sample.go",
    "sample.rs": "src/sample.rs",
    "Sample.java": "Sample.java",
    "sample.c": "sample.c",
    "sample.cpp": "sample.cpp",
    "sample.rb": "sample.rb",
    "Sample.cs": "Sample.cs",
    "sample.php": "sample.php",
    "sample.sh": "sample.sh",
    "sample.kt": "src/commonMain/kotlin/okio/sample.kt",
}

EXPECTED: dict[str, list[tuple[str, str, int, int]]] = {
    "sample.py": [
        ("<module>", "module", 1, 44),
        ("price", "function", 8, 10),
        ("cached", "function", 13, 19),
        ("cached.inner", "function", 16, 17),
        ("Cart", "class", 22, 40),
        ("Cart.__init__", "method", 27, 28),
        ("Cart.total", "method", 30, 36),
        ("Cart.Line", "class", 38, 40),
        ("Cart.Line.describe", "method", 39, 40),
    ],
    "sample.js": [
        ("<module>", "module", 1, 3),
        ("app.handle", "method", 5, 13),
        ("Route.prototype.dispatch", "method", 15, 17),
        ("exports.compileTrust", "function", 19, 21),
        ("res.header", "method", 23, 26),  # the target named like the function, not `res.set`
        ("helper", "function", 28, 30),
        ("createApplication", "function", 32, 35),
        ("createApplication.inner", "function", 33, 33),
        ("req.ip", "method", 37, 39),
        ("Router", "class", 41, 53),
        ("Router.path", "method", 42, 48),
        ("Router.route", "method", 50, 52),
        ("exports.first", "function", 55, 57),  # anonymous: the outermost target
    ],
    "response.js": [
        ("<module>", "module", 1, 17),
        ("response.send", "method", 4, 7),
        ("response.header", "method", 9, 11),
        ("response.json", "method", 13, 15),
        ("response.nested.deep", "method", 18, 18),
    ],
    "sample.ts": [
        ("<module>", "module", 1, 58),
        ("pipe", "function", 3, 8),
        ("identity", "function", 10, 10),
        ("Observer", "class", 12, 15),
        ("Subject", "class", 17, 35),
        ("Subject.produce", "method", 23, 25),
        ("Subject.next", "method", 27, 31),
        ("Subject._throwIfClosed", "method", 33, 34),
        ("Base", "class", 37, 39),
        ("Color", "class", 41, 44),
        ("Merger", "class", 46, 56),
        ("Merger.merge", "method", 47, 55),
        ("Shapes.area", "function", 59, 61),
    ],
    "sample.go": [
        ("<module>", "module", 1, 31),
        ("Cart", "class", 5, 8),
        ("Cart.Total", "method", 10, 17),
        ("Store.Name", "method", 19, 19),
        ("New", "function", 21, 25),
        ("Reader", "class", 27, 29),
        ("Pair", "class", 32, 33),
        ("Namer", "class", 34, 34),
    ],
    "sample.rs": [
        ("<module>", "module", 1, 29),
        ("Point", "class", 3, 7),
        ("Point.new", "method", 10, 13),
        ("Wrapper.fmt", "method", 17, 19),
        ("Shape", "class", 22, 27),
        ("Shape.name", "method", 24, 26),
        ("geometry.origin", "function", 30, 32),
        ("main", "function", 35, 37),
    ],
    "Sample.java": [
        ("<module>", "module", 1, 3),
        ("Cart", "class", 5, 56),
        ("Cart.Cart", "method", 11, 14),
        ("Cart.toString", "method", 16, 19),
        ("Cart.Visitor", "class", 21, 27),
        # A field holding an anonymous class names its methods after the field (an
        # interface's field is a constant_declaration; a call on the instance is allowed).
        ("Cart.Visitor.NONE", "class", 24, 26),
        ("Cart.Visitor.NONE.visit", "method", 25, 25),
        ("Cart.Line", "class", 29, 31),
        ("Cart.Line.total", "method", 30, 30),
        ("Cart.Pricing", "class", 33, 47),
        # An enum constant with a body names its methods: not three `Cart.Pricing.price`.
        ("Cart.Pricing.LIST", "class", 35, 39),
        ("Cart.Pricing.LIST.price", "method", 37, 38),
        ("Cart.Pricing.SALE", "class", 40, 43),
        ("Cart.Pricing.SALE.price", "method", 41, 42),
        ("Cart.Pricing.price", "method", 46, 46),
        ("Cart.SILENT", "class", 49, 51),
        ("Cart.SILENT.visit", "method", 50, 50),
        ("Cart.LOUD", "class", 53, 55),
        ("Cart.LOUD.visit", "method", 54, 54),
    ],
    "sample.c": [
        ("<module>", "module", 1, 1),
        ("point", "class", 3, 6),
        ("add", "function", 8, 11),
        ("name", "function", 13, 15),
        ("main", "function", 17, 20),
    ],
    "sample.cpp": [
        ("<module>", "module", 1, 23),
        ("Cart", "class", 5, 12),
        ("Cart.total", "method", 8, 8),
        ("Cart.add", "method", 14, 16),
        ("twice", "function", 18, 21),
        ("Point", "class", 25, 27),
    ],
    "sample.rb": [
        ("<module>", "module", 1, 1),
        ("Shop", "class", 3, 20),
        ("Shop.Cart", "class", 5, 19),
        ("Shop.Cart.initialize", "method", 7, 9),
        ("Shop.Cart.total", "method", 11, 14),
        ("Shop.Cart.build", "method", 16, 18),
        ("helper", "function", 22, 24),
    ],
    "Sample.cs": [
        ("<module>", "module", 1, 4),
        ("Cart", "class", 5, 20),
        ("Cart.Cart", "method", 10, 13),
        ("Cart.Add", "method", 15, 19),
        ("IShop", "class", 22, 25),
    ],
    "sample.php": [
        ("<module>", "module", 1, 3),
        ("Cart", "class", 5, 16),
        ("Cart.add", "method", 12, 15),
        ("helper", "function", 18, 21),
    ],
    "sample.sh": [
        ("<module>", "module", 1, 13),
        ("greet", "function", 4, 7),
        ("main", "function", 9, 11),
    ],
    "sample.kt": [
        ("<module>", "module", 1, 5),
        ("SegmentPool", "class", 7, 11),
        ("Buffer", "class", 13, 35),
        # Overloads side by side are one chunk, as in Java; the companion's `of` and the
        # extension functions are called as `Buffer.of`, `buffer.commonReadUtf8()`.
        ("Buffer.readUtf8", "method", 14, 19),
        ("Buffer.of", "method", 23, 25),
        ("Buffer.UnsafeCursor", "class", 32, 34),
        ("Buffer.UnsafeCursor.next", "method", 33, 33),
        ("Buffer.commonReadUtf8", "method", 37, 40),
        ("String.orEmpty", "method", 42, 42),
        ("List.second", "method", 44, 44),
        ("Source", "class", 46, 48),
        ("Level", "class", 50, 53),
        ("Level.up", "method", 52, 52),
        ("Point", "class", 55, 55),
        ("Handler", "class", 57, 57),
        ("Fn", "class", 59, 61),
        ("Result", "class", 63, 65),
        ("Result.Empty", "class", 64, 64),
    ],
}


@pytest.mark.parametrize("fixture", sorted(EXPECTED))
def test_fixture_chunks_exactly(fixture: str) -> None:
    rel = WORKSPACE_PATHS[fixture]
    chunks = chunk_source(rel, (FIXTURES / fixture).read_text(encoding="utf-8"))
    got = [(c.symbol, c.kind, c.start_line, c.end_line) for c in chunks]
    assert got == EXPECTED[fixture]
    language = language_for_path(rel)
    assert {c.language for c in chunks} == {language}
    assert all(c.path == rel for c in chunks)
