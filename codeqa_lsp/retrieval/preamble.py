"""A file's preamble: the module code that only names what the file is and what it imports.

The lines of a file outside its definitions become `module` chunks (`chunking/chunker.py`).
In most files of most languages that is the preamble: a license comment, `package` /
`namespace`, the imports (`use function array_keys;`, `#include <stdio.h>`), a header guard.
It answers no question about behaviour, yet it matches both arms: its import lines spell the
library's qualified names (`import com.beust.jcommander.ParameterException;`), which is how
pasted errors begin, and its license header repeats the project's name. Found in a user's pass
over ten repositories (not an evaluation set): thephpleague/csv's module chunks took 6 of the
top 10 for a pasted `League\\Csv\\SyntaxError: The header record does not exist ...`, and
jcommander's `DefaultConsole.java` preamble led its pasted `ParameterException`.

A preamble among the first `WITHIN` keeps `PREAMBLE_SHARE` of its score. It gives way after
the owners' step (`classes.py`), so it still lifts its file's functions first: a file whose
imports match a question deals with what it asks (requests' `sessions.py` preamble lifts
`merge_setting` for "how are session-wide defaults combined with a single call's values";
demoted before that step, the 100 questions' requests-04 fell from 7th to outside the ten).

A preamble is read from the code alone (comments and strings blanked, `code_text.code_lines`),
so `import "fmt"` and `require 'json'` count whatever they import. Anything else on a line (a
constant, a call, `__all__`, a `TYPE_CHECKING` block) makes the chunk code like any other.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from codeqa_lsp.chunking.code_text import code_lines
from codeqa_lsp.chunking.model import Chunk
from codeqa_lsp.retrieval.priors import THIN_WITHIN

PREAMBLE_SHARE = 0.5
# Read among the first candidates only (a parse each, cached by text), as thin methods are:
# a preamble only falls, so those further down stay put.
WITHIN = THIN_WITHIN

# One statement of a preamble, by its first line. A statement that opens a bracket it does
# not close (`import (`, `from x import (`, `use std::{`) runs on until it is closed.
_PREAMBLE_LINE = re.compile(
    r"[\s\ufeff]*(?:"
    r"<\?php|\?>"
    # Not a variable or a call so named (`use = ...`, `use(cors())`); Go's `import (` opens.
    r"|(?:import|package|namespace|use|using)\b(?!\s*[=:.])(?!\s*\((?!\s*$))"
    r"|from\s+\S+\s+import\b"
    r"|declare\s*\("
    r"|(?:require|include)(?:_once|_relative)?\b"
    r"|#\s*(?:include|import|pragma\s+once|ifndef|ifdef|endif)\b"
    r"|#\s*define\s+\w+\s*$"
    r"|(?:pub(?:\([^)]*\))?\s+)?(?:use|mod)\b(?!\s*[=:.(])"
    r"|extern\s+crate\b"
    r"|export\s+(?:type\s+)?(?:\*|\{[^}]*\})\s*(?:as\s+\w+\s+)?from\b"
    r"|(?:const|let|var)\s+(?:[\w$]+|\{[^}]*\})\s*=\s*require\s*\("
    r"|@file\s*:"  # a Kotlin file annotation (`@file:JvmName("Options")`)
    r"|#!?\[[^\]]*\]\s*$"  # a Rust attribute on its own line (`#[cfg(feature = "std")]`)
    # What is left of a Rust `impl` block once its methods are chunks: `impl Template {`.
    r"|(?:unsafe\s+)?impl\b[^;{]*\{\s*$"
    r")"
)
# Statements that open a block of their own (`namespace Foo {`, Rust's `mod tests {`): what
# the brace holds is read line by line, not taken as a continued statement.
_BLOCK_OPENER = re.compile(
    r"\s*(?:namespace|package|(?:pub(?:\([^)]*\))?\s+)?mod|(?:unsafe\s+)?impl)\b"
)


def preambles_placed(ranked: Sequence[tuple[Chunk, float]]) -> list[tuple[Chunk, float]]:
    """`ranked` with each preamble among the first `WITHIN` at `PREAMBLE_SHARE` of its score,
    re-sorted (stable)."""
    scored = [
        (chunk, score * PREAMBLE_SHARE if place < WITHIN and is_preamble(chunk) else score)
        for place, (chunk, score) in enumerate(ranked)
    ]
    return sorted(scored, key=lambda item: -item[1])


def is_preamble(chunk: Chunk) -> bool:
    """Whether `chunk` is module code holding nothing but a preamble (see the module doc)."""
    return chunk.kind == "module" and _preamble_only(chunk.text, chunk.language)


def _preamble_only(text: str, language: str) -> bool:
    # A byte-order mark opens many C# files (CsvHelper's): no code.
    lines = [line for line in code_lines(text, language) if line.strip("\ufeff \t\r")]
    depth = 0  # brackets a preamble statement left open
    for line in lines:
        if depth > 0:
            depth += _opened(line)
            continue
        if not _PREAMBLE_LINE.match(line):
            return False
        if not _BLOCK_OPENER.match(line):
            depth = max(0, _opened(line))
    return bool(lines)


def _opened(line: str) -> int:
    return sum(line.count(c) for c in "({[") - sum(line.count(c) for c in ")}]")
