"""Hypothesis: whatever the input, the chunker returns well-formed chunks and never raises."""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from codeqa_lsp.chunking.chunker import MIN_TOKENS, chunk_source
from codeqa_lsp.chunking.languages import supported_grammars
from codeqa_lsp.chunking.model import estimate_tokens
from codeqa_lsp.chunking.scanner import Skip, read_source
from codeqa_lsp.config import Settings
from tests.chunking.test_chunker import assert_well_formed

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "chunking"
FIXTURE_FILES = sorted(p.name for p in FIXTURES.iterdir() if p.is_file())
LANGUAGES = [*supported_grammars(), "markdown", "rst", "text", "swift"]

# Fragments that make parsers build (and break) definitions in every language we support.
CODE_TOKENS = [
    "def ",
    "class ",
    "function ",
    "fn ",
    "func ",
    "fun ",
    "object ",
    "impl ",
    "struct ",
    "module ",
    "end",
    "f",
    "A",
    "x",
    "(",
    ")",
    "{",
    "}",
    "[",
    "]",
    ":",
    ";",
    ",",
    " = ",
    " => ",
    ".",
    "::",
    "\n",
    "\r\n",
    "\r",
    "    ",
    "\t",
    "'",
    '"',
    '"""',
    "`",
    "/**",
    "*/",
    "//",
    "#",
    "@dec\n",
    "return ",
    "export ",
    "const ",
    "async ",
    "get ",
    "set ",
    "this.",
    "prototype.",
    "module.exports = ",
    "\x00",
    "\ufeff",
    "é",
    "\U0001f600",
    "\udc80",
]
code_soup = st.lists(st.sampled_from(CODE_TOKENS), max_size=300).map("".join)

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(text=st.text(), language=st.sampled_from(LANGUAGES), budget=st.integers(1, 400))
def test_arbitrary_text_never_raises(text: str, language: str, budget: int) -> None:
    chunks = chunk_source("fuzz/file", text, language=language, max_tokens=budget)
    assert_well_formed(chunks, text)


@FUZZ
@given(data=st.binary(max_size=4000), language=st.sampled_from(LANGUAGES))
def test_arbitrary_bytes_never_raise(data: bytes, language: str) -> None:
    text = data.decode("utf-8", errors="replace")
    assert_well_formed(chunk_source("fuzz/file", text, language=language, max_tokens=80), text)


@FUZZ
@given(text=code_soup, language=st.sampled_from(LANGUAGES), budget=st.integers(16, 300))
def test_code_shaped_soup_never_raises(text: str, language: str, budget: int) -> None:
    chunks = chunk_source("fuzz/file", text, language=language, max_tokens=budget)
    assert_well_formed(chunks, text)


@FUZZ
@given(name=st.sampled_from(FIXTURE_FILES), cut=st.floats(0, 1), budget=st.integers(16, 1500))
def test_truncated_real_files_never_raise(name: str, cut: float, budget: int) -> None:
    full = (FIXTURES / name).read_text(encoding="utf-8")
    text = full[: int(len(full) * cut)]
    chunks = chunk_source(f"src/{name}", text, max_tokens=budget)
    assert_well_formed(chunks, text)
    effective = max(budget, MIN_TOKENS)
    for chunk in chunks:  # a skeleton line may carry one long signature over the budget
        slack = 80 if chunk.kind == "class" else 0
        assert estimate_tokens(chunk.text) <= effective + slack, (chunk.symbol, chunk.part)
    # Every line with a word on it is still in some chunk: nothing a syntax error hides is
    # lost (lines of bare punctuation, like a closing brace, may be dropped).
    covered: set[int] = set()
    for chunk in chunks:
        covered.update(range(chunk.start_line, chunk.end_line + 1))
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    assert {i + 1 for i, line in enumerate(lines) if re.search(r"\w", line)} <= covered


KNOWN_REASONS = {"binary", "too-large", "secret-content", "generated", "minified"}


@FUZZ
@given(data=st.binary(max_size=3000))
def test_read_source_of_arbitrary_bytes(
    tmp_path_factory: pytest.TempPathFactory, data: bytes
) -> None:
    root = tmp_path_factory.mktemp("fuzz")
    (root / "file.py").write_bytes(data)
    result = read_source(root, "file.py", Settings(max_file_bytes=2000))
    if isinstance(result, Skip):
        assert result.reason in KNOWN_REASONS
    else:
        assert result.text == data.decode("utf-8", "replace") and result.size == len(data)
        assert_well_formed(chunk_source(result.rel_path, result.text), result.text)


def test_parallel_chunking_matches_sequential() -> None:
    """Parsers are per thread; the shared Language/Query objects are read-only."""
    jobs = [
        (f"src/{name}", (FIXTURES / name).read_text(encoding="utf-8")) for name in FIXTURE_FILES
    ] * 8
    expected = [chunk_source(path, text) for path, text in jobs]
    with ThreadPoolExecutor(max_workers=6) as pool:
        got = list(pool.map(lambda job: chunk_source(*job), jobs))
    assert got == expected
