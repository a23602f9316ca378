"""Chunker behaviour: skeletons, splitting, module and doc chunks, robustness."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

from codeqa_lsp.chunking.chunker import chunk_source
from codeqa_lsp.chunking.model import Chunk, estimate_tokens

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "chunking"


def lsp_line_count(text: str) -> int:
    """Lines as an LSP client counts them: \\n, \\r\\n and \\r end a line."""
    return len(re.split(r"\r\n|\r|\n", text))


def assert_well_formed(chunks: list[Chunk], text: str) -> None:
    total = lsp_line_count(text)
    data = text.encode("utf-8", "replace")
    for chunk in chunks:
        assert 1 <= chunk.start_line <= chunk.end_line <= total, chunk
        assert 0 <= chunk.start_byte <= chunk.end_byte <= len(data), chunk
        assert 0 <= chunk.part < chunk.parts
        if chunk.kind in ("function", "method", "section"):  # exact source, not rewritten
            # A lone CR is a line break (as in LSP), read as LF: same length, same offsets.
            source = re.sub(rb"\r(?!\n)", b"\n", data)
            exact = source[chunk.start_byte : chunk.end_byte].decode("utf-8", "replace")
            assert chunk.text.rstrip("\n") == exact.rstrip("\n"), chunk
            assert source.count(b"\n", 0, chunk.start_byte) + 1 == chunk.start_line, chunk
    assert [c.start_line for c in chunks] == sorted(c.start_line for c in chunks)
    assert len({c.id for c in chunks}) == len(chunks)  # the index keys chunks by id


def by_symbol(chunks: list[Chunk]) -> dict[str, list[Chunk]]:
    out: dict[str, list[Chunk]] = {}
    for chunk in chunks:
        out.setdefault(chunk.symbol, []).append(chunk)
    return out


def test_class_chunk_is_a_skeleton_with_member_signatures() -> None:
    text = (FIXTURES / "sample.py").read_text()
    cart = by_symbol(chunk_source("sample.py", text))["Cart"][0]
    assert '"""A shopping cart."""' in cart.text
    assert 'currency = "EUR"' in cart.text
    assert "def __init__(self): ..." in cart.text
    assert "self.items = []" not in cart.text  # the body lives in Cart.__init__
    assert "class Line: ..." in cart.text
    assert cart.doc == "A shopping cart."


def test_typescript_skeleton_keeps_fields_and_elides_bodies() -> None:
    text = (FIXTURES / "sample.ts").read_text()
    subject = by_symbol(chunk_source("sample.ts", text))["Subject"][0]
    assert "observers: Observer<T>[] = [];" in subject.text
    assert "next(value: T): void { ... }" in subject.text
    assert "o.next(value)" not in subject.text
    assert subject.doc == "A subject."


def test_typescript_type_aliases_are_definitions() -> None:
    text = (
        "import type { Schema } from './schema';\n\n"
        "/** What a schema parses to. */\n"
        "export type output<T> = T extends { _output: infer O } ? O : unknown;\n"
        "export type { output as infer };\n\n"
        "export function parse<T>(schema: Schema<T>, data: unknown): output<T> {\n"
        "  type Local = { ok: boolean };\n"
        "  return schema.parse(data) as output<T>;\n"
        "}\n"
    )
    chunks = chunk_source("core.ts", text)
    assert_well_formed(chunks, text)
    found = by_symbol(chunks)
    alias = found["output"][0]
    assert alias.kind == "class" and (alias.start_line, alias.end_line) == (3, 4)
    assert alias.doc == "What a schema parses to."
    assert "parse.Local" in found  # a type declared inside a function is named under it
    module = found["<module>"][0]
    assert "type output<T>" not in module.text  # its own chunk now, not module text


def test_go_rust_and_c_named_types_and_aliases_are_definitions() -> None:
    go = (
        "package cobra\n\n"
        "// PositionalArgs validates the arguments.\n"
        "type PositionalArgs func(cmd *Command, args []string) error\n\n"
        "type Level int\n\n"
        "type Alias = Level\n\n"
        "type Command struct {\n\tUse string\n}\n"
    )
    chunks = chunk_source("args.go", go)
    assert_well_formed(chunks, go)
    kinds = {c.symbol: c.kind for c in chunks}
    assert {kinds[n] for n in ("PositionalArgs", "Level", "Alias", "Command")} == {"class"}
    assert by_symbol(chunks)["PositionalArgs"][0].doc == "PositionalArgs validates the arguments."
    rust = (
        "/// `Result<T, Error>`\n"
        "pub type Result<T, E = Error> = core::result::Result<T, E>;\n\n"
        "pub struct Error {\n    inner: Box<str>,\n}\n"
    )
    chunks = chunk_source("lib.rs", rust)
    assert_well_formed(chunks, rust)
    result = by_symbol(chunks)["Result"][0]
    assert result.kind == "class" and (result.start_line, result.end_line) == (1, 2)
    c = (
        "typedef struct {\n    int x, y;\n} Point;\n\n"
        "typedef struct named { int a; } named_t;\n\n"
        "typedef enum { RED, GREEN } color;\n\n"
        "int area(Point p) { return p.x * p.y; }\n"
    )
    for path in ("shapes.c", "shapes.cpp"):
        chunks = chunk_source(path, c)
        assert_well_formed(chunks, c)
        # An anonymous type takes its typedef's name; a named struct keeps its own, once.
        assert [(x.symbol, x.kind) for x in chunks] == [
            ("Point", "class"),
            ("named", "class"),
            ("color", "class"),
            ("area", "function"),
        ]
    # A function-like macro is a definition; an object-like one stays in the module chunk.
    macros = (
        "#define LIMIT 64\n\n"
        "/* Both arguments are evaluated twice. */\n"
        "#define MAX(a, b) \\\n    ((a) > (b) ? (a) : (b))\n\n"
        "int clamp(int v) { return MAX(v, LIMIT); }\n"
    )
    for path in ("macros.c", "macros.hpp"):
        chunks = chunk_source(path, macros)
        assert_well_formed(chunks, macros)
        assert [(x.symbol, x.kind) for x in chunks] == [
            ("<module>", "module"),
            ("MAX", "function"),
            ("clamp", "function"),
        ]
        macro = by_symbol(chunks)["MAX"][0]
        assert (macro.signature, macro.doc) == (
            "#define MAX(a, b)",
            "Both arguments are evaluated twice.",
        )
    # An export macro between `class` and the name is not a function called `logger`.
    exported = (
        "namespace spdlog {\n"
        "class SPDLOG_API logger {\n"
        "public:\n"
        "    bool should_log(level msg_level) const { return msg_level >= level_; }\n"
        "};\n"
        "struct SPDLOG_API level_info { int x; };\n"
        "}\n"
    )
    chunks = chunk_source("logger.h", exported)
    assert_well_formed(chunks, exported)
    kinds = {c.symbol: c.kind for c in chunks}
    assert kinds["logger"] == kinds["level_info"] == "class"
    # Chunked as the same class without the macro is: its methods are members.
    plain = chunk_source("logger.h", exported.replace("SPDLOG_API ", ""))
    assert [(c.symbol, c.kind, c.start_line, c.end_line) for c in chunks] == [
        (c.symbol, c.kind, c.start_line, c.end_line) for c in plain
    ]
    assert "logger.should_log" in kinds and chunks[1].text.startswith("class SPDLOG_API logger")


def test_macros_in_a_functions_declaration_do_not_become_its_name() -> None:
    # spdlog's `-inl.h` files: an inline/export macro before the return type or the name, a
    # line break after it, a `noexcept` macro after the parameters. Read as types, the
    # macros named 26 of its definitions like `SPDLOG_INLINEspdlog.sinks.base_sink.flush`.
    source = (
        "namespace spdlog {\n"
        "SPDLOG_INLINE spdlog::logger *default_logger_raw() {\n"
        "    return details::registry::instance().get_default_raw();\n"
        "}\n"
        "}\n"
        "\n"
        "template <typename Mutex>\n"
        "void SPDLOG_INLINE spdlog::sinks::base_sink<Mutex>::flush() {\n"
        "    std::lock_guard<Mutex> lock(mutex_);\n"
        "    flush_();\n"
        "}\n"
        "\n"
        "template <typename Mutex>\n"
        "void SPDLOG_INLINE\n"
        "spdlog::sinks::base_sink<Mutex>::set_formatter(std::unique_ptr<formatter> f) {\n"
        "    set_formatter_(std::move(f));\n"
        "}\n"
        "\n"
        "SPDLOG_INLINE void spdlog::async_logger::backend_sink_it_(const log_msg &msg) {\n"
        "    for (auto &sink : sinks_) { sink->log(msg); }\n"
        "}\n"
        "\n"
        "struct source_loc {\n"
        "    SPDLOG_CONSTEXPR bool empty() const SPDLOG_NOEXCEPT { return line == 0; }\n"
        "    int line{0};\n"
        "};\n"
        "\n"
        "CJSON_PUBLIC(cJSON *) cJSON_Parse(const char *value) { return parse(value); }\n"
    )
    chunks = chunk_source("spdlog-inl.h", source)
    assert_well_formed(chunks, source)  # every chunk's text is the file's, macros included
    symbols = [c.symbol for c in chunks if c.kind != "module"]
    for name in (
        "default_logger_raw",
        "spdlog.sinks.base_sink.flush",
        "spdlog.sinks.base_sink.set_formatter",
        "spdlog.async_logger.backend_sink_it_",
        "source_loc.empty",
    ):
        assert name in symbols, symbols
    assert not [s for s in symbols if "SPDLOG" in s], symbols
    flush = next(c for c in chunks if c.symbol == "spdlog.sinks.base_sink.flush")
    assert "void SPDLOG_INLINE spdlog::sinks::base_sink<Mutex>::flush()" in flush.text


def test_a_macro_alone_on_its_line_does_not_swallow_what_follows() -> None:
    # fmt's base.h: `FMT_END_EXPORT` (an export block's end) before `namespace detail {` made
    # the parser read a function named `namespace` holding the next 160 lines.
    source = (
        "FMT_BEGIN_NAMESPACE\n"
        "FMT_BEGIN_EXPORT\n"
        "template <typename T> class basic_appender {\n"
        "  T* container;\n"
        "};\n"
        "FMT_END_EXPORT\n"
        "\n"
        "namespace detail {\n"
        "FMT_MSC_WARNING  // alone on its line, with a comment\n"
        "template <typename T, typename Char = char> struct named_arg : view {\n"
        "  const Char* name;\n"
        "  named_arg(const Char* n) : name(n) {}\n"
        "};\n"
        "\n"
        "constexpr auto count_named_args() -> int { return 0; }\n"
        "}  // namespace detail\n"
        "FMT_END_NAMESPACE\n"
    )
    chunks = chunk_source("base.h", source)
    assert_well_formed(chunks, source)
    symbols = {c.symbol: c.kind for c in chunks if c.kind != "module"}
    assert symbols == {
        "basic_appender": "class",
        "named_arg": "class",
        "named_arg.named_arg": "method",
        "count_named_args": "function",
    }


def test_a_struct_specialization_is_a_class_named_by_its_template() -> None:
    # fmt declares every formatter as `template <> struct formatter<...> {`: its `parse`
    # and `format` methods were top-level functions named `parse`, `format`.
    source = (
        "template <> struct formatter<detail::bigint> {\n"
        "  auto parse(format_parse_context& ctx) -> const char* { return ctx.begin(); }\n"
        "};\n"
        "template <typename T, typename Char>\n"
        "struct formatter<std::vector<T>, Char> : formatter<T> {\n"
        "  auto format(const std::vector<T>& v) const -> int { return 0; }\n"
        "};\n"
        "struct detail::buffer_traits {\n"
        "  auto count() const -> size_t { return 0; }\n"
        "};\n"
    )
    chunks = chunk_source("format.h", source)
    assert_well_formed(chunks, source)
    assert [(c.symbol, c.kind) for c in chunks if c.kind != "module"] == [
        ("formatter", "class"),
        ("formatter.parse", "method"),
        ("formatter", "class"),
        ("formatter.format", "method"),
        ("detail.buffer_traits", "class"),
        ("detail.buffer_traits.count", "method"),
    ]


def test_signature_doc_and_exact_text() -> None:
    text = (FIXTURES / "sample.js").read_text()
    chunks = by_symbol(chunk_source("lib/sample.js", text))
    handle = chunks["app.handle"][0]
    assert handle.signature == "app.handle = function handle(req, res)"
    assert handle.doc.startswith("Handle a request.")
    data = text.encode()
    assert data[handle.start_byte : handle.end_byte].decode() == handle.text
    assert chunks["helper"][0].signature == "const helper = () =>"
    price = by_symbol(chunk_source("sample.py", (FIXTURES / "sample.py").read_text()))["price"][0]
    assert price.doc == "Price with tax."
    assert price.signature == "def price(amount: float) -> float:"


def test_decorators_and_comments_belong_to_the_definition() -> None:
    chunks = by_symbol(chunk_source("sample.py", (FIXTURES / "sample.py").read_text()))
    cached = chunks["cached"][0]
    assert cached.text.startswith("# A comment that documents the decorator below.\n@functools")
    setter = chunks["Cart.total"]
    assert len(setter) == 1 and "@total.setter" in setter[0].text  # property pair: one chunk


def test_module_chunk_holds_code_outside_definitions() -> None:
    chunks = chunk_source("sample.py", (FIXTURES / "sample.py").read_text())
    module = [c for c in chunks if c.kind == "module"]
    assert len(module) == 1
    assert "import functools" in module[0].text and "TAX = 0.2" in module[0].text
    assert 'if __name__ == "__main__":' in module[0].text
    assert "def price" not in module[0].text


def _long_function(statements: int) -> str:
    body = "\n".join(
        f"    value_{i} = compute({i}, value_{i - 1 if i else 0})" for i in range(statements)
    )
    return f'def big(x):\n    """A big one."""\n{body}\n    return x\n'


def test_large_definition_splits_at_statements_with_overlap_and_signature() -> None:
    text = _long_function(300)
    chunks = [c for c in chunk_source("big.py", text, max_tokens=200) if c.symbol == "big"]
    assert len(chunks) > 3
    assert [c.part for c in chunks] == list(range(len(chunks)))
    assert {c.parts for c in chunks} == {len(chunks)}
    assert chunks[0].start_line == 1 and chunks[-1].end_line == lsp_line_count(text) - 1
    for before, after in itertools.pairwise(chunks):
        assert after.start_line <= before.end_line + 1  # contiguous or overlapping
        assert after.start_line > before.start_line
        assert after.text.startswith("    value_") or after.text.startswith("    return")
        assert after.embed_text().split("\n")[1] == "def big(x):"
    overlapping = [a for b, a in itertools.pairwise(chunks) if a.start_line <= b.end_line]
    assert overlapping, "consecutive parts should share some lines"
    for chunk in chunks:
        assert estimate_tokens(chunk.text) <= 200 * 1.1
    assert len({c.id for c in chunks}) == len(chunks)


def test_embed_text_header() -> None:
    chunk = by_symbol(chunk_source("src/sample.py", (FIXTURES / "sample.py").read_text()))["price"][
        0
    ]
    assert chunk.embed_text().startswith("src/sample.py · price · function\ndef price")


def test_markdown_sections_use_heading_paths_and_skip_fenced_code() -> None:
    text = (FIXTURES / "guide.md").read_text()
    chunks = chunk_source("docs/guide.md", text, max_tokens=64)
    assert all(c.kind == "section" and c.language == "markdown" for c in chunks)
    whole = chunk_source("docs/guide.md", text)
    assert [(c.symbol, c.start_line, c.end_line) for c in whole] == [("Guide", 1, 18)]
    long_text = text.replace("Run the installer.", "Run the installer. " * 60)
    split = chunk_source("docs/guide.md", long_text, max_tokens=64)
    symbols = [c.symbol for c in split]
    assert symbols.count("Guide > Install") > 3  # the long section is split into parts
    # Small whole sections are packed together, never onto the tail of a split section.
    packed = [c for c in split if c.symbol == "Guide > Install > From source"]
    assert len(packed) == 1 and "## Usage" in packed[0].text and "installer" not in packed[0].text
    assert not any("not a heading" in s for s in symbols)


def test_rst_heading_levels() -> None:
    text = (FIXTURES / "guide.rst").read_text().replace("Build it.", "Build it. " * 80)
    symbols = [c.symbol for c in chunk_source("guide.rst", text, max_tokens=64)]
    assert "Guide > Install > From source" in symbols


def test_plain_text_blocks_overlap() -> None:
    paragraphs = [
        "\n".join(" ".join(f"w{p}_{line}_{w}" for w in range(6)) for line in range(5))
        for p in range(30)
    ]
    text = "\n\n".join(paragraphs) + "\n"
    chunks = chunk_source("notes.txt", text, max_tokens=150)
    assert len(chunks) > 5
    assert {c.symbol for c in chunks} == {"notes.txt"}
    assert any(b.start_line <= a.end_line for a, b in itertools.pairwise(chunks))
    covered = set()
    for chunk in chunks:
        covered.update(range(chunk.start_line, chunk.end_line + 1))
    non_blank = {i + 1 for i, line in enumerate(text.split("\n")) if line.strip()}
    assert non_blank <= covered


def test_unknown_language_falls_back_to_structure() -> None:
    text = "func main() {\n  print(1)\n}\n"
    chunks = chunk_source("main.swift", text)
    assert [(c.symbol, c.kind, c.start_line, c.end_line) for c in chunks] == [
        ("<module>", "module", 1, 3)
    ]


def test_syntax_errors_keep_what_the_parser_finds() -> None:
    text = (
        "def good_one():\n    return 1\n\n"
        "def broken(:\n    return (\n\n"
        "class Fine:\n    def ok(self):\n        return 2\n"
    )
    chunks = chunk_source("bad.py", text)
    assert_well_formed(chunks, text)
    symbols = {c.symbol for c in chunks}
    assert "good_one" in symbols and "Fine.ok" in symbols
    covered = set()
    for chunk in chunks:
        covered.update(range(chunk.start_line, chunk.end_line + 1))
    assert {4, 5} <= covered  # the broken lines are still indexed, as module text


def test_mixed_line_endings_match_editor_lines() -> None:
    text = "import os\r\ndef a():\r    return 1\rdef b():\n    return 2\n"
    chunks = chunk_source("mixed.py", text)
    assert_well_formed(chunks, text)
    got = {c.symbol: (c.start_line, c.end_line) for c in chunks}
    assert got["a"] == (2, 3) and got["b"] == (4, 5)


def test_deeply_nested_code_does_not_recurse() -> None:
    depth = 3000
    js = "function f() {\n" + "if (x) {\n" * depth + "y();\n" + "}\n" * depth + "}\n"
    chunks = chunk_source("deep.js", js, max_tokens=200)
    assert_well_formed(chunks, js)
    assert {c.symbol for c in chunks} >= {"f"}
    python = (
        "def f():\n"
        + "".join("    " * (i + 1) + "if x:\n" for i in range(400))
        + "    " * 401
        + "pass\n"
    )
    assert_well_formed(chunk_source("deep.py", python), python)
    brackets = "x = " + "[" * 20000 + "]" * 20000 + "\n"
    assert_well_formed(chunk_source("brackets.py", brackets), brackets)


def test_ten_megabyte_single_line_minified_file() -> None:
    unit = "function a%d(b){return b+%d};var c%d={k:function(){return 1}};"
    text = "".join(unit % (i, i, i) for i in range(170_000))[: 10 * 1024 * 1024]
    chunks = chunk_source("bundle.js", text)
    assert chunks
    assert all(c.start_line == 1 and c.end_line == 1 for c in chunks)
    assert_well_formed(chunks, text)


def test_deterministic_and_unique_ids() -> None:
    for name in ("sample.py", "sample.js", "sample.ts", "response.js"):
        text = (FIXTURES / name).read_text()
        first, second = chunk_source(name, text), chunk_source(name, text)
        assert first == second
        assert len({c.id for c in first}) == len(first)


def test_empty_and_whitespace_files() -> None:
    assert chunk_source("empty.py", "") == []
    assert chunk_source("blank.md", "\n\n   \n") == []


def test_markdown_front_matter_and_link_headings() -> None:
    text = (
        "---\ndescription: not a heading\n---\n\n"
        "# [v2.0](https://example.com/v2) ![badge](https://img) (2025)\n\nNotes.\n"
    )
    chunks = chunk_source("CHANGELOG.md", text)
    assert [c.symbol for c in chunks] == ["v2.0 (2025)"]
    assert chunks[0].start_line == 1  # the front matter is kept as text, not a heading


def test_tsx_components_and_language_detection() -> None:
    text = (
        "import React from 'react';\n\n"
        "/** A greeting. */\n"
        "export const Hello = ({ name }: Props) => {\n"
        '  return <div className="hi">Hello {name}</div>;\n'
        "};\n\n"
        'export function App() {\n  return <Hello name="x" />;\n}\n'
    )
    got = [
        (c.symbol, c.kind, c.start_line, c.end_line, c.language)
        for c in chunk_source("ui/App.tsx", text)
    ]
    assert got == [
        ("<module>", "module", 1, 1, "tsx"),
        ("Hello", "function", 3, 6, "tsx"),
        ("App", "function", 8, 10, "tsx"),
    ]


def test_language_for_path() -> None:
    from codeqa_lsp.chunking.languages import language_for_path

    cases = {
        "src/a.py": "python",
        "lib/x.mjs": "javascript",
        "a/b.ts": "typescript",
        "a/B.tsx": "tsx",
        "main.go": "go",
        "lib.rs": "rust",
        "A.java": "java",
        "x.c": "c",
        "x.h": "cpp",
        "x.cc": "cpp",
        "Rakefile": "ruby",
        "a.rb": "ruby",
        "P.cs": "csharp",
        "i.php": "php",
        "run.sh": "bash",
        "README.md": "markdown",
        "index.rst": "rst",
        "notes.txt": "text",
        "LICENSE": "text",
        "Main.kt": "kotlin",
        "DIR\\win.PY": "python",
        "image.png": None,
        ".bashrc": None,
        "Makefile": "make",
        "data.bin": None,
    }
    assert {path: language_for_path(path) for path in cases} == cases


def test_identical_definitions_keep_unique_ids() -> None:
    text = "if fast:\n    def f():\n        return 1\nelse:\n    def f():\n        return 1\n"
    chunks = chunk_source("twice.py", text)
    functions = [(c.symbol, c.start_line) for c in chunks if c.kind == "function"]
    assert functions == [("f", 2)]
    assert len({c.id for c in chunks}) == len(chunks)


def test_every_grammar_and_query_loads() -> None:
    from codeqa_lsp.chunking.languages import grammar, parser_for, supported_grammars

    for language in supported_grammars():
        loaded = grammar(language)
        assert loaded is not None, language
        assert loaded.query.pattern_count > 0
        assert parser_for(language) is parser_for(language)  # one parser per thread, reused


def _ruby_methods(path: str, text: str) -> list[str]:
    chunks = chunk_source(path, text)
    assert_well_formed(chunks, text)
    return [c.symbol for c in chunks if c.kind == "method"]


def test_ruby_predicate_and_bang_methods_keep_their_suffix() -> None:
    text = (
        "class Response\n  def redirect?\n    status.between?(300, 399)\n  end\n\n"
        "  def redirect(uri)\n    halt\n  end\n\n  def save!\n    true\n  end\nend\n"
    )
    methods = _ruby_methods("response.rb", text)
    assert methods == ["Response.redirect?", "Response.redirect", "Response.save!"]
    # Operator methods keep their operator: rake's `TaskManager#[]` raises "Don't know how
    # to build task", and a pasted backtrace names it (`in `[]'`).
    text = (
        "class TaskManager\n  def [](name, scopes = nil)\n    lookup(name) or fail name\n  end\n\n"
        "  def []=(name, task)\n    @tasks[name] = task\n  end\n\n"
        "  def <=>(other)\n    name <=> other.name\n  end\nend\n"
    )
    methods = _ruby_methods("task_manager.rb", text)
    assert methods == ["TaskManager.[]", "TaskManager.[]=", "TaskManager.<=>"]
    # `::Name` is top-level wherever it is written.
    text = (
        "class HelpersTest\n  module ::HelperOne; def one; 1; end; end\n  class Inner; end\nend\n"
    )
    symbols = [c.symbol for c in chunk_source("helpers_test.rb", text)]
    assert symbols == ["HelpersTest", "HelperOne", "HelperOne.one", "HelpersTest.Inner"]


def test_javascript_private_methods_are_definitions_and_their_calls_resolve() -> None:
    # ky's retry logic lives in `#calculateDelay` and `#calculateRetryDelay`: the `#` made the
    # name read as a comment, so every private method stayed inside its class's skeleton.
    text = (
        "export class Ky {\n"
        "  #retryCount = 0;\n"
        "  #calculateDelay(): number {\n    return this.#retryCount * 2;\n  }\n"
        "  async #calculateRetryDelay(error: unknown) {\n"
        "    return this.#calculateDelay();\n  }\n"
        "  #onRetry = () => this.#calculateRetryDelay(null);\n"
        "}\n"
    )
    for path in ("ky.ts", "ky.js"):
        source = text if path.endswith(".ts") else re.sub(r": (unknown|number)", "", text)
        chunks = chunk_source(path, source)
        assert_well_formed(chunks, source)
        by_symbol = {c.symbol: c for c in chunks}
        assert {"Ky.calculateDelay", "Ky.calculateRetryDelay"} <= set(by_symbol), path
        assert by_symbol["Ky.calculateDelay"].kind == "method"
        assert "this.calculateDelay" in by_symbol["Ky.calculateRetryDelay"].refs
    assert "Ky.onRetry" in {c.symbol for c in chunk_source("ky.ts", text)}


def test_typescript_type_aliases_are_declarations_like_interfaces() -> None:
    text = (
        "export type RetryOptions = {\n  /** How many times. */\n  limit?: number;\n};\n"
        "export interface Hooks {\n  beforeRequest: Function[];\n}\n"
        "export type Input = string | URL;\n"
        "export type Maybe<T> = T | undefined;\n"
    )
    declared = {c.symbol: c.declaration for c in chunk_source("types.ts", text)}
    assert declared == {"RetryOptions": True, "Hooks": True, "Input": True, "Maybe": True}
    # A class and a function stay implementations.
    code = "export class Ky {\n  run() { return 1; }\n}\nexport function ky() { return 1; }\n"
    assert not any(c.declaration for c in chunk_source("ky.ts", code))


OPERATORS_CPP = """
struct less {
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
        return a < b;
    }
};

class json {
  public:
    json& operator[](const char* key) {
        return lookup(key, true);
    }
    explicit operator bool() const noexcept {
        return !is_null();
    }
    template <typename T>
    operator Matcher<T>() const {
        return MakeMatcher(this);
    }
    auto operator<=>(const json& other) const {
        return compare(other);
    }
};

bool json::operator==(const json& other) const {
    return compare(other) == 0;
}
"""


def test_cpp_operators_keep_their_names() -> None:
    """nlohmann/json: every `operator()` was named `operator` (its parameters were cut off
    with the call operator's own parentheses), `operator<=>` lost its `<=>` to the template
    clean-up and `operator bool` became one word."""
    symbols = [c.symbol for c in chunk_source("json.hpp", OPERATORS_CPP) if c.kind != "module"]
    assert symbols == [
        "less",
        "less.operator()",
        "json",
        "json.operator[]",
        "json.operator bool",
        "json.operator Matcher",
        "json.operator<=>",
        "json.operator==",
    ]


STATEMENT_IN_CSHARP = """
static class Conversions
{
    static void Flexible(ILGenerator il, Type from, Type to)
    {
        if (from == to)
        {
            return;
        }
#if NET6_0_OR_GREATER
        else if (GetDateTimeFamilyConversion(from, to) is { } conversion)
        {
            il.EmitCall(OpCodes.Call, conversion, null);
        }
#endif
        else
        {
            il.Emit(OpCodes.Unbox_Any, to);
        }
    }
}
"""


def test_a_statement_misparsed_as_a_function_is_no_definition() -> None:
    """Dapper: tree-sitter reads `else if (...) is { } conversion` after an `#if` as a local
    function named `if`; nlohmann/json's amalgamated header gave a method `serializer.switch`.
    C-family languages reserve those words, so no definition is named by one."""
    symbols = [c.symbol for c in chunk_source("SqlMapper.cs", STATEMENT_IN_CSHARP)]
    assert symbols == ["Conversions", "Conversions.Flexible"]
    # JavaScript does not reserve them for methods: a promise's `catch` is a definition.
    js = (
        "class Deferred {\n  catch(onRejected) {\n    return this.then(null, onRejected);\n  }\n}\n"
    )
    assert "Deferred.catch" in [c.symbol for c in chunk_source("deferred.js", js)]
