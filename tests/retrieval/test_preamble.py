"""A file's preamble (package, imports, a header guard) gives way to the code that answers:
the test on real tree-sitter chunks of seven languages, and the ranking of a pasted error
through a real index (SQLite FTS5, hnswlib, the `hash` embedder) and the real searcher."""

from __future__ import annotations

from pathlib import Path

import pytest

from codeqa_lsp.chunking.chunker import chunk_source
from codeqa_lsp.retrieval import preamble
from codeqa_lsp.retrieval.preamble import is_preamble
from tests.chunks import chunks_by_symbol
from tests.retrieval.searchers import hash_searcher

GO = """
package flags

import (
\t"fmt"
\t"strings"
)

func Parse(args []string) error {
\treturn fmt.Errorf("bad %s", strings.Join(args, " "))
}
"""
PYTHON_IMPORTS = '''
"""Sessions: what a series of requests shares."""
from __future__ import annotations

import os
from typing import (
    Any,
    Mapping,
)


def merge(a, b):
    return {**a, **b}
'''
PYTHON_CONSTANT = """
import os

DEFAULT_TIMEOUT = 30


def merge(a, b):
    return {**a, **b}
"""
PHP = """<?php

/**
 * Acme.Csv (https://csv.example.org)
 */

declare(strict_types=1);

namespace Acme\\\\Csv;

use Throwable;

use function array_keys;

class Header
{
    public function names(): array
    {
        return array_keys($this->columns);
    }
}
"""
RUST = """
use std::fmt;
#[cfg(not(target_arch = "wasm32"))]
use std::time::Instant;
pub use crate::style::{ProgressStyle,
    TemplateError};
mod state;

pub fn tick() -> usize {
    1
}
"""
RUST_IMPL_SHELLS = """
use std::fmt;

impl Default for MultiProgress {
    fn default() -> Self {
        Self::new()
    }
}

impl MultiProgress {
    pub fn new() -> Self {
        Self { bars: Vec::new() }
    }
}
"""
CSHARP_WITH_BOM = (
    "\ufeff// Copyright 2009-2024 Josh Close\r\n"
    "using System;\r\n"
    "using System.IO;\r\n\r\n"
    "namespace CsvHelper\r\n"
    "{\r\n"
    "\tpublic class MissingFieldException : ReaderException\r\n"
    "\t{\r\n"
    "\t\tpublic MissingFieldException(CsvContext context) : base(context) { }\r\n"
    "\t}\r\n"
    "}\r\n"
)
RUST_INLINE_MODULE = """
use std::fmt;

mod limits {
    pub const MAX: usize = 10;
}
"""
JAVASCRIPT_CALLS = """
const express = require('express')
use(cors())

function start() {
  return express()
}
"""
TYPESCRIPT = """
import { parseClass } from './brace-expressions.js'
import type { Options } from './index.js'

const types = new Set(['!', '?', '+', '*', '@'])

export function isExtglob(c: string) {
  return types.has(c)
}
"""

CONSOLE = """
package com.acme.cli.internal;

import com.acme.cli.ParameterException;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;

public class DefaultConsole {
    public char[] readPassword() {
        try {
            return new BufferedReader(new InputStreamReader(System.in)).readLine().toCharArray();
        } catch (IOException e) {
            throw new ParameterException(e);
        }
    }
}
"""
PROMPT = """
package com.acme.cli.internal;

import com.acme.cli.ParameterException;
import com.acme.cli.Options;
import com.acme.cli.Option;

public class Prompt {
    public String ask(String question) {
        return question.trim();
    }
}
"""
PARSER = """
package com.acme.cli;

import java.util.ArrayList;
import java.util.List;

public class Parser {
    private final List<Option> required = new ArrayList<>();

    void validateOptions(Options given) {
        List<String> missing = new ArrayList<>();
        for (Option option : required) {
            if (!given.has(option)) {
                missing.add(option.names());
            }
        }
        if (!missing.isEmpty()) {
            throw new ParameterException(
                "The following options are required: " + String.join(", ", missing));
        }
    }
}
"""
PASTED = (
    "com.acme.cli.ParameterException: The following options are required: "
    "[--input | -i], [--output | -o]"
)


def _module(path: str, text: str) -> bool:
    return is_preamble(chunks_by_symbol(path, text.lstrip())["<module>"])


@pytest.mark.parametrize(
    ("path", "text"),
    [
        ("cli/internal/DefaultConsole.java", CONSOLE),
        ("flags/flags.go", GO),
        ("requests/sessions.py", PYTHON_IMPORTS),  # a docstring and a parenthesised import
        ("src/Header.php", PHP),  # a license comment, declare, namespace, use function
        ("src/lib.rs", RUST),  # an attribute, a `pub use` over two lines, `mod x;`
        ("src/CsvHelper/MissingFieldException.cs", CSHARP_WITH_BOM),  # a byte-order mark
    ],
)
def test_a_module_of_imports_and_declarations_is_a_preamble(path: str, text: str) -> None:
    assert _module(path, text)


def test_what_rust_impl_blocks_leave_outside_their_methods_is_a_preamble() -> None:
    chunks = [c for c in chunk_source("src/multi.rs", RUST_IMPL_SHELLS.lstrip())]
    modules = [c for c in chunks if c.kind == "module"]
    assert modules and all(is_preamble(c) for c in modules)
    assert "impl MultiProgress {" in "".join(c.text for c in modules)


@pytest.mark.parametrize(
    ("path", "text"),
    [
        ("requests/settings.py", PYTHON_CONSTANT),  # a constant is code
        ("src/ast.ts", TYPESCRIPT),  # so is a table
        ("app.js", JAVASCRIPT_CALLS),  # and a call of a function named `use`
        ("src/limits.rs", RUST_INLINE_MODULE),  # an inline module's body is read, not skipped
    ],
)
def test_a_module_with_code_of_its_own_is_no_preamble(path: str, text: str) -> None:
    assert not _module(path, text)


def test_a_definition_is_never_a_preamble() -> None:
    chunks = chunks_by_symbol("flags/flags.go", GO.lstrip())
    assert not is_preamble(chunks["Parse"])


FILES = {
    "src/main/java/com/acme/cli/internal/DefaultConsole.java": CONSOLE,
    "src/main/java/com/acme/cli/internal/Prompt.java": PROMPT,
    "src/main/java/com/acme/cli/Parser.java": PARSER,
}


def test_the_files_importing_a_pasted_error_type_rank_below_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with hash_searcher(tmp_path, FILES) as searcher:
        hits = searcher.search(PASTED, top_k=5).hits
        monkeypatch.setattr(preamble, "PREAMBLE_SHARE", 1.0)
        unweighted = searcher.search(PASTED, top_k=5).hits
    assert hits[0].chunk.symbol == "Parser.validateOptions"
    assert "<module>" not in [h.chunk.symbol for h in hits[:3]]  # code first
    # Unweighted, the files importing the pasted type came next, above any code of theirs.
    assert [h.chunk.symbol for h in unweighted[1:3]] == ["<module>", "<module>"]
