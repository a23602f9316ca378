"""Syntax-error recovery: definitions after (or swallowed by) a broken one keep their chunks."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from codeqa_lsp.chunking import recovery
from codeqa_lsp.chunking.chunker import chunk_source
from codeqa_lsp.chunking.definitions import Definition
from tests.chunking.test_chunker import assert_well_formed


def _spans(path: str, text: str) -> dict[str, tuple[int, int]]:
    chunks = chunk_source(path, text)
    assert_well_formed(chunks, text)
    return {c.symbol: (c.start_line, c.end_line) for c in chunks if c.kind != "module"}


def test_python_definition_after_a_broken_signature_is_kept() -> None:
    text = "import os\n\ndef bad_one(x:\n    return x\n\ndef after_error(y):\n    return y * 2\n"
    spans = _spans("a.py", text)
    assert spans["after_error"] == (6, 7)


def test_python_functions_swallowed_by_an_unclosed_call_are_recovered() -> None:
    text = (
        "def good(a):\n    return a + 1\n\n"  # 1-2
        "def bad_one(x):\n    return foo(x,\n\n"  # 4-5, the call never closes
        "def after_error(y):\n    return y * 2\n\n"  # 7-8
        "class Later:\n    def m(self):\n        return 1\n"  # 10-12
    )
    spans = _spans("a.py", text)
    assert spans["good"] == (1, 2)
    assert spans["bad_one"] == (4, 5)  # cut back: it no longer holds what follows
    assert spans["after_error"] == (7, 8)
    assert spans["Later"] == (10, 12)
    assert spans["Later.m"] == (11, 12)


def test_python_method_after_a_broken_method_stays_in_its_class() -> None:
    text = (
        "class A:\n    def bad_one(self, x:\n        return x\n\n"
        "    @property\n    def after_error(self):\n        return 2\n\n"
        "def free(z):\n    return z\n"
    )
    chunks = {c.symbol: c for c in chunk_source("a.py", text)}
    assert chunks["A.after_error"].kind == "method"
    assert (chunks["A.after_error"].start_line, chunks["A.after_error"].end_line) == (5, 7)
    assert chunks["A.after_error"].text.startswith("@property")  # decorator kept
    assert (chunks["free"].start_line, chunks["free"].end_line) == (9, 10)
    assert chunks["A"].end_line == 7


def test_python_definitions_after_an_unclosed_literal_are_recovered() -> None:
    text = (
        'CONFIG = {\n    "a": 1,\n\n'
        "def after_error(y):\n    return y * 2\n\ndef second(z):\n    return z\n"
    )
    spans = _spans("a.py", text)
    assert spans["after_error"] == (4, 5)
    assert spans["second"] == (7, 8)


def test_javascript_definitions_after_an_unclosed_call_are_recovered() -> None:
    text = (
        "function good(a) { return a; }\n\n"
        "function bad(x) {\n  return foo(x,\n}\n\n"
        "function afterError(y) {\n  return y * 2;\n}\n\n"
        "class Later {\n  m() { return 1; }\n}\n"
    )
    spans = _spans("a.js", text)
    assert spans["afterError"] == (7, 9)
    assert spans["Later"] == (11, 13)
    assert spans["Later.m"] == (12, 12)
    assert "m" not in spans  # no longer a stray top-level function


def test_typescript_definitions_after_an_unclosed_object_are_recovered() -> None:
    text = (
        "const cfg = {\n  a: 1,\n\n"
        "export function afterError(y: number): number {\n  return y * 2;\n}\n"
        "export class Later {\n  m(): number { return 1; }\n}\n"
    )
    spans = _spans("a.ts", text)
    assert spans["afterError"] == (4, 6)
    assert spans["Later.m"] == (8, 8)


def _counting(calls: list[int]) -> Callable[..., list[Definition]]:
    real = recovery.find_definitions

    def counted(*args: Any) -> list[Definition]:
        calls.append(1)
        return real(*args)

    return counted


def test_kotlin_definitions_after_an_unclosed_call_are_recovered() -> None:
    text = (
        "class A {\n"  # 1
        "  fun broken(x: Int {\n    val z = listOf(1,\n  }\n\n"  # 2-4, the call never closes
        "  suspend fun after(y: Int): Int {\n    return y\n  }\n}\n\n"  # 6-9
        "internal fun last(): Int = 2\n"  # 11
    )
    spans = _spans("A.kt", text)
    assert spans["after"] == (6, 8)
    assert spans["last"] == (11, 11)


def test_a_clean_file_is_never_reparsed(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    monkeypatch.setattr(recovery, "find_definitions", _counting(calls))
    chunk_source("a.py", "def f(x):\n    return x\n")
    assert calls == []


def test_recovery_work_is_bounded_on_a_file_full_of_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    """Thousands of broken definitions cost at most MAX_REPARSES re-parses, and what was
    recovered is still well formed."""
    calls: list[int] = []
    monkeypatch.setattr(recovery, "find_definitions", _counting(calls))
    text = "".join(f"def f{i}(x:\n    return g(x,\n\n" for i in range(2000))
    chunks = chunk_source("a.py", text)
    assert_well_formed(chunks, text)
    assert 1 <= len(calls) <= recovery.MAX_REPARSES
