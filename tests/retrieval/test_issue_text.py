"""Boilerplate in pasted issue texts (environment listings, template comments) is not
evidence; the title is the strongest evidence (`retrieval/issue_text.py`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from codeqa_lsp.retrieval.issue_text import strip_boilerplate, title_terms
from codeqa_lsp.retrieval.query import salient_terms
from codeqa_lsp.retrieval.search import HybridSearcher
from tests.retrieval.searchers import hash_searcher

PACKAGES = [
    "alabaster", "babel", "docutils", "imagesize", "jinja2", "pygments", "snowballstemmer",
    "attrs", "certifi", "chardet", "colorama", "docopt", "idna", "iniconfig", "markupsafe",
    "mccabe", "pluggy", "pyparsing", "pytz", "requests", "six", "toml", "urllib3", "wcwidth",
    "zipp", "filelock", "platformdirs", "tomli", "packaging", "distlib",
]  # fmt: skip
PIP_LIST = "\n".join(
    ["Package            Version", "------------------ -------"]
    + [f"{name:<18} {i}.{i + 1}.0" for i, name in enumerate(PACKAGES, 1)]
)

ISSUE = f"""Marker added at run time is ignored by the expected-failure check
<!--
Thanks for submitting an issue! Please include your environment: docutils, babel and
pygments versions, the output of pip list, and whether sphinx builds the docs.
-->
When a test adds the expected-failure marker to its own node while running, the failure
is reported as a plain failure instead of an expected one. Adding the marker with a
decorator works. It looks like the marker is evaluated once before the call and never
again, so a marker that appears later is not seen by the evaluation of the outcome.

```
$ pip list
{PIP_LIST}
```

plugins: xdist-1.29.0, hypothesis-4.36.2, forked-1.0.2, cov-2.8.1
Running with tool 6.0.1 on a laptop; the same happens on the build server and in a fresh
environment, with the same result every time I run the suite from a clean checkout.
"""

FILES = {
    "pkg/outcomes.py": '''
def evaluate_expected_failure(node):
    """Evaluate the expected-failure marker of a node: re-read at call time, so a marker
    added while the test runs is seen by the outcome evaluation."""
    marker = node.get_closest_marker("expected_failure")
    return marker is not None
''',
    # Code that uses the listed packages: without the listing removed, their names (rare,
    # shown as code) would fill the salient terms and this file would win.
    "pkg/render.py": "\n".join(f"import {name}" for name in PACKAGES)
    + "\n\n\ndef render_report(outcome):\n    return ["
    + ", ".join(PACKAGES)
    + "]\n",
    # The issue's everyday words are everywhere in a real project; here in a few modules.
    **{
        f"pkg/part{i}.py": f'''
def step_{i}(node, marker, call):
    """Run step {i} of a test: the node, its marker, the call, the expected outcome, the
    failure report, at run time, added and evaluated and seen and reported."""
    return node, marker, call
'''
        for i in range(6)
    },
    "requirements-docs.txt": "\n".join(f"{name}>=1.0" for name in PACKAGES * 3) + "\n",
}


def test_strip_boilerplate_drops_listings_comments_and_plugin_lines() -> None:
    text = strip_boilerplate(ISSUE)
    for name in PACKAGES:
        assert name not in text.splitlines()[6:], name  # the listing rows are gone
    assert "Thanks for submitting" not in text
    assert "xdist" not in text
    assert "Running with tool 6.0.1" in text  # one version in prose is kept
    assert "evaluated once before the call" in text


def test_a_single_version_line_or_short_code_is_kept() -> None:
    text = "pytest 6.0.1\nreturn 2\nx == 3.4\nfoo 1.2\n"
    assert strip_boilerplate(text) == text.rstrip("\n")
    frozen = "a==1.0\nb==2.0\nc==3.0\n"
    assert strip_boilerplate(frozen).strip() == ""


def test_title_terms_are_the_first_line_of_a_multiline_text() -> None:
    title = title_terms("Crash in parser\nmore words here")
    assert {"crash", "parser"} <= title and "words" not in title
    assert title_terms("one line only") == set()


def test_salient_terms_ignore_listed_packages_and_numbers() -> None:
    terms = [*PACKAGES, "marker", "evaluated", "expected", "failure", "29", "xdist"]
    counts = dict.fromkeys(terms, 1)
    picked = salient_terms(ISSUE, terms, counts, total_documents=100, keep=20)
    assert set(picked) == {"marker", "evaluated", "expected", "failure"}


@pytest.fixture
def searcher(tmp_path: Path) -> Iterator[HybridSearcher]:
    with hash_searcher(tmp_path, FILES) as searcher:
        yield searcher


def test_an_issue_with_a_pip_list_finds_the_code_it_describes(
    searcher: HybridSearcher,
) -> None:
    response = searcher.search(ISSUE, top_k=5)
    assert response.hits[0].chunk.path == "pkg/outcomes.py"


def test_the_dense_arm_embeds_a_long_issue_without_its_boilerplate(
    searcher: HybridSearcher,
) -> None:
    embedded: list[str] = []
    inner = searcher.indexer.embed_query

    def recording(text: str):  # type: ignore[no-untyped-def]
        embedded.append(text)
        return inner(text)

    searcher.indexer.embed_query = recording  # type: ignore[method-assign]
    searcher.search(ISSUE, top_k=5)
    assert embedded and all(text == strip_boilerplate(ISSUE) for text in embedded)
    assert "snowballstemmer" not in embedded[0] and embedded[0].startswith("Marker added")
