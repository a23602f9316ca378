"""Which language a file is in, and the cached tree-sitter objects that parse it.

Language detection is by file name only (extension, or a few well-known names): the scanner
calls it for every path in a workspace, so it must not read the file.

Tree-sitter objects are expensive to build and cheap to reuse: `Language` and `Query` are
created once per process and shared (both are immutable); a `Parser` holds per-parse state,
so each thread gets its own (the indexer chunks from several threads).

Queries live in `queries/<language>.scm`. A query file may start with `; inherits: other`
to prepend another language's patterns (TypeScript extends JavaScript).
"""

from __future__ import annotations

import importlib
import logging
import threading
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import PurePosixPath

from tree_sitter import Language, Parser, Query

# Extension → language. `.h` goes to C++: the C++ grammar parses C headers well, while the C
# grammar chokes on C++ headers.
_EXTENSIONS: dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".pyw": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".c": "c",
    ".h": "cpp",
    ".hh": "cpp",
    ".hpp": "cpp",
    ".hxx": "cpp",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".c++": "cpp",
    ".ipp": "cpp",
    ".rb": "ruby",
    ".rake": "ruby",
    ".gemspec": "ruby",
    ".cs": "csharp",
    ".php": "php",
    ".sh": "bash",
    ".bash": "bash",
    ".zsh": "bash",
    ".md": "markdown",
    ".markdown": "markdown",
    ".mdx": "markdown",
    ".rst": "rst",
    ".txt": "text",
    ".adoc": "text",
    ".kt": "kotlin",
    ".kts": "kotlin",
    # Source without a bundled grammar: indexed with structure chunks.
    ".swift": "swift",
    ".scala": "scala",
    ".lua": "lua",
    ".ex": "elixir",
    ".exs": "elixir",
    ".erl": "erlang",
    ".hs": "haskell",
    ".ml": "ocaml",
    ".clj": "clojure",
    ".dart": "dart",
    ".r": "r",
    ".jl": "julia",
    ".pl": "perl",
    ".pm": "perl",
    ".sql": "sql",
    ".proto": "protobuf",
    ".graphql": "graphql",
    ".vue": "vue",
    ".svelte": "svelte",
    ".html": "html",
    ".css": "css",
    ".scss": "css",
    ".toml": "toml",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".ini": "ini",
    ".cfg": "ini",
    ".gradle": "groovy",
    ".groovy": "groovy",
    ".tf": "hcl",
    ".ps1": "powershell",
}

_FILENAMES: dict[str, str] = {
    "makefile": "make",
    "gnumakefile": "make",
    "dockerfile": "dockerfile",
    "rakefile": "ruby",
    "gemfile": "ruby",
    "readme": "text",
    "license": "text",
    "changelog": "text",
    "authors": "text",
    "contributing": "text",
    "cmakelists.txt": "text",
}

# Language → (grammar module, function returning the language pointer, query file stem).
_GRAMMARS: dict[str, tuple[str, str, str]] = {
    "python": ("tree_sitter_python", "language", "python"),
    "javascript": ("tree_sitter_javascript", "language", "javascript"),
    "typescript": ("tree_sitter_typescript", "language_typescript", "typescript"),
    "tsx": ("tree_sitter_typescript", "language_tsx", "typescript"),
    "go": ("tree_sitter_go", "language", "go"),
    "rust": ("tree_sitter_rust", "language", "rust"),
    "java": ("tree_sitter_java", "language", "java"),
    "c": ("tree_sitter_c", "language", "c"),
    "cpp": ("tree_sitter_cpp", "language", "cpp"),
    "ruby": ("tree_sitter_ruby", "language", "ruby"),
    "csharp": ("tree_sitter_c_sharp", "language", "csharp"),
    "php": ("tree_sitter_php", "language_php", "php"),
    "bash": ("tree_sitter_bash", "language", "bash"),
    "kotlin": ("tree_sitter_kotlin", "language", "kotlin"),
}

DOC_LANGUAGES = frozenset({"markdown", "rst", "text"})


def language_for_path(path: str) -> str | None:
    """The language name for a workspace path, or None if it is not a file we index."""
    name = PurePosixPath(path.replace("\\", "/")).name.lower()
    if name in _FILENAMES:
        return _FILENAMES[name]
    dot = name.rfind(".")
    if dot <= 0:  # no extension, or a dotfile such as `.bashrc`
        return None
    return _EXTENSIONS.get(name[dot:])


def has_grammar(language: str) -> bool:
    return language in _GRAMMARS


def supported_grammars() -> tuple[str, ...]:
    return tuple(_GRAMMARS)


@dataclass(frozen=True)
class Grammar:
    """The process-wide, immutable parts of a language: its `Language` and compiled `Query`
    (with the query's source, so a pass can compile it together with other patterns)."""

    name: str
    language: Language
    query: Query
    source: str


@cache
def _query_source(stem: str) -> str:
    source = (
        resources.files("codeqa_lsp.chunking")
        .joinpath("queries", f"{stem}.scm")
        .read_text(encoding="utf-8")
    )
    first = source.split("\n", 1)[0]
    if first.startswith("; inherits:"):
        parent = first.split(":", 1)[1].strip()
        source = _query_source(parent) + "\n" + source
    return source


logger = logging.getLogger(__name__)
_grammar_lock = threading.Lock()
_grammars: dict[str, Grammar] = {}
_grammars_missing: set[str] = set()  # tried once and failed: not retried per file


def grammar(language: str) -> Grammar | None:
    """The cached grammar for `language`; None when we have no tree-sitter grammar for it.

    A grammar wheel that fails to load (missing, ABI mismatch) yields None as well, so the
    chunker falls back to structure chunks instead of failing the file.
    """
    found = _grammars.get(language)
    if found is not None or language not in _GRAMMARS or language in _grammars_missing:
        return found
    with _grammar_lock:
        if language in _grammars:
            return _grammars[language]
        module_name, func, stem = _GRAMMARS[language]
        try:
            lang = Language(getattr(importlib.import_module(module_name), func)())
            source = _query_source(stem)
            built = Grammar(language, lang, Query(lang, source), source)
        except Exception as exc:  # a missing wheel or a bad query: structure chunks instead
            logger.warning(
                "no tree-sitter grammar for %s (%s: %s); using structure chunks",
                language,
                type(exc).__name__,
                exc,
            )
            _grammars_missing.add(language)
            return None
        _grammars[language] = built
        return built


_local = threading.local()


def parser_for(language: str) -> Parser | None:
    """A parser for this thread (tree-sitter parsers are not safe to share across threads)."""
    gram = grammar(language)
    if gram is None:
        return None
    parsers: dict[str, Parser] | None = getattr(_local, "parsers", None)
    if parsers is None:
        parsers = _local.parsers = {}
    parser = parsers.get(language)
    if parser is None:
        parser = parsers[language] = Parser(gram.language)
    return parser
