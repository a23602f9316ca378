"""Retrieval v2 mechanisms over a real index (real SQLite FTS5, hnswlib, the `hash` embedder):
long pasted issues, traceback frames, whole-file evidence, non-code confidence, test demotion."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from codeqa_lsp.retrieval.mentions import PathResolver, find_mentions, resolve
from codeqa_lsp.retrieval.query import LONG_QUERY_TERMS, salient_terms
from codeqa_lsp.retrieval.search import HybridSearcher
from tests.retrieval.searchers import hash_searcher

FILES = {
    "pkg/units/quantity.py": '''
"""Physical quantities: a number with a unit."""


class Quantity:
    """A value with a unit; arithmetic converts units first."""

    def __init__(self, value, unit):
        self.value = value
        self.unit = unit

    def to(self, other_unit):
        """Convert to another unit using the conversion table."""
        factor = self.unit.scale_to(other_unit)
        return Quantity(self.value * factor, other_unit)

    def __add__(self, other):
        """Add two quantities after converting the right one to our unit."""
        return Quantity(self.value + other.to(self.unit).value, self.unit)
''',
    "pkg/units/core.py": '''
"""Units and their scales."""


class Unit:
    """A named unit with a scale relative to its base unit."""

    def __init__(self, name, scale):
        self.name = name
        self.scale = scale

    def scale_to(self, other):
        """Factor that converts a value in this unit to `other`."""
        if other.base != self.base:
            raise UnitConversionError(self.name, other.name)
        return self.scale / other.scale


class UnitConversionError(ValueError):
    """Raised when two units measure different things."""
''',
    "pkg/io/reader.py": '''
"""Reading tables from text files."""


def read_table(path, delimiter=","):
    """Read a delimited text file into rows of cells."""
    with open(path) as handle:
        return [line.rstrip("\\n").split(delimiter) for line in handle]


def guess_delimiter(sample):
    """Pick the delimiter that splits the sample into the most equal columns."""
    return max(",;\\t|", key=sample.count)
''',
    "pkg/io/writer.py": '''
"""Writing tables to text files."""


def write_table(path, rows, delimiter=","):
    """Write rows of cells as a delimited text file."""
    with open(path, "w") as handle:
        for row in rows:
            handle.write(delimiter.join(map(str, row)) + "\\n")
''',
    "tests/test_quantity.py": '''
from pkg.units.quantity import Quantity


def test_quantity_conversion_to_other_unit_uses_scale():
    """Converting a quantity to another unit multiplies by the scale conversion factor."""
    assert Quantity(1, None) is not None


def test_adding_quantities_converts_units():
    """Adding quantities converts units: quantity conversion of the right operand."""
    assert True
''',
    "LICENSE": """
Permission is hereby granted, free of charge, to any person obtaining a copy of this
software and associated documentation files, to deal in the Software without restriction,
including without limitation the rights to use, copy, modify, merge, publish, distribute,
sublicense. THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND. Database
connection pooling, postgres drivers and migrations are not covered.
""",
    ".github/workflows/ci.yml": """
name: postgres database tests
on: [push]
jobs:
  test:
    services:
      postgres:
        image: postgres
    steps:
      - run: connect to the postgres database and run migrations
""",
}

ISSUE = """Adding quantities with incompatible units gives a confusing error

I have two measurements from a sensor log and I want to add them up, but the call
fails with an error that does not tell me what is wrong. I would expect either a clear
message saying the units measure different things, or an automatic conversion if that
is possible. This used to work in an older release as far as I remember, and the
documentation does not mention anything about this case, so I think it is a bug
somewhere in the way scales are compared between the two sides of the addition.

```python
a = Quantity(3, metres)
b = Quantity(2, seconds)
a + b
```

Traceback (most recent call last):
  File "/home/me/analysis/run.py", line 8, in <module>
    a + b
  File "/usr/lib/python3.11/site-packages/pkg/units/quantity.py", line 19, in __add__
    return Quantity(self.value + other.to(self.unit).value, self.unit)
  File "/usr/lib/python3.11/site-packages/pkg/units/quantity.py", line 14, in to
    factor = self.unit.scale_to(other_unit)
  File "/usr/lib/python3.11/site-packages/pkg/units/core.py", line 13, in scale_to
    raise UnitConversionError(self.name, other.name)
pkg.units.core.UnitConversionError: ('metre', 'second')
"""


@pytest.fixture
def searcher(tmp_path: Path) -> Iterator[HybridSearcher]:
    with hash_searcher(tmp_path, FILES) as searcher:
        yield searcher


def test_traceback_query_finds_the_function_of_its_last_frame(searcher: HybridSearcher) -> None:
    response = searcher.search(ISSUE, top_k=5)
    top = response.hits[0].chunk
    assert (top.path, top.symbol) == ("pkg/units/core.py", "Unit.scale_to")
    assert response.confident


def test_frames_resolve_by_path_suffix_and_name_the_last_workspace_frame() -> None:
    resolver = PathResolver(["pkg/units/quantity.py", "pkg/units/core.py", "pkg/io/reader.py"])
    evidence = resolve(find_mentions(ISSUE), resolver)
    assert evidence.paths["pkg/units/core.py"] == 1.0  # the last frame inside the workspace
    assert evidence.paths["pkg/units/quantity.py"] < 1.0
    assert "run.py" not in " ".join(evidence.paths)  # the user's script is not indexed
    assert evidence.functions["scale_to"] > evidence.functions["to"]


def test_dotted_module_paths_and_file_names_resolve() -> None:
    resolver = PathResolver(["pkg/units/core.py", "pkg/io/reader.py", "pkg/io/__init__.py"])
    mentions = find_mentions("see pkg.units.core.Unit and also io/reader.py; pkg.io too")
    evidence = resolve(mentions, resolver)
    assert set(evidence.paths) == {"pkg/units/core.py", "pkg/io/reader.py", "pkg/io/__init__.py"}


def test_long_issue_without_traceback_finds_the_right_file(searcher: HybridSearcher) -> None:
    issue = (
        "Reading a semicolon separated export picks the wrong separator. When I load a file "
        "exported from a spreadsheet program in my locale, the columns all end up in one cell "
        "because the guessed separator is a comma, although the sample clearly has semicolons "
        "between every value. I looked at how the separator is chosen and it seems to count "
        "characters in the whole sample, so a few commas inside quoted decimal numbers win over "
        "the real semicolons. Could the guess prefer the character that gives the same number "
        "of columns on every line? Otherwise loading these exports needs a manual delimiter "
        "every time, which the documentation says should not be necessary for common formats."
    )
    response = searcher.search(issue, top_k=5)
    files = list(dict.fromkeys(h.chunk.path for h in response.hits))
    assert files[0] == "pkg/io/reader.py"
    assert response.hits[0].chunk.symbol == "guess_delimiter"


def test_salient_terms_keep_rare_code_terms_and_drop_unknown_ones() -> None:
    query = "the the value value `scale_to` fails while adding values " + " ".join(
        f"word{i}" for i in range(LONG_QUERY_TERMS)
    )
    terms = ["value", "scaleto", "scale", "fails", "adding", "word1"]
    counts = {"value": 40, "scaleto": 1, "scale": 3, "fails": 2, "adding": 5}
    picked = salient_terms(query, terms, counts, total_documents=50, keep=3)
    assert picked[0] == "scaleto"
    assert "word1" not in picked  # no file contains it: it cannot match
    assert "value" not in picked  # in most files: says nothing


def test_license_and_ci_matches_are_not_confident(searcher: HybridSearcher) -> None:
    response = searcher.search(
        "how does this project connect to the postgres database and run migrations?"
    )
    assert response.hits  # search still returns its best candidates
    assert not response.confident
    assert "not code" in response.reason or "floor" in response.reason


def test_license_question_may_use_the_license(searcher: HybridSearcher) -> None:
    response = searcher.search("what license is the software distributed under, without warranty?")
    assert response.hits[0].chunk.path == "LICENSE"


def test_tests_rank_below_the_code_unless_asked(searcher: HybridSearcher) -> None:
    question = "quantity conversion to another unit with the scale conversion factor"
    code_first = [h.chunk.path for h in searcher.search(question, top_k=5).hits]
    assert not code_first[0].startswith("tests/")
    asked = [h.chunk.path for h in searcher.search("which tests check " + question, top_k=5).hits]
    assert asked[0].startswith("tests/")


def test_file_table_follows_edits_and_deletes(searcher: HybridSearcher) -> None:
    indexer = searcher.indexer
    assert [p for p, _ in indexer.file_bm25(["delimiter"], 5)][:1] in (
        ["pkg/io/reader.py"],
        ["pkg/io/writer.py"],
    )
    (indexer.root / "pkg/io/writer.py").write_text("def flush_buffers():\n    return None\n")
    indexer.update_file("pkg/io/writer.py")
    assert "pkg/io/writer.py" not in [p for p, _ in indexer.file_bm25(["delimiter"], 5)]
    assert [p for p, _ in indexer.file_bm25(["flush", "buffers"], 5)] == ["pkg/io/writer.py"]
    indexer.remove_file("pkg/io/writer.py")
    assert indexer.file_bm25(["flush", "buffers"], 5) == []
