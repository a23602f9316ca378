"""Class-level evidence: the methods of a class that matches the question well rise (real
index: SQLite FTS5, hnswlib, the `hash` embedder; real tree-sitter chunks)."""

from __future__ import annotations

from pathlib import Path

from codeqa_lsp.chunking.chunker import chunk_source
from codeqa_lsp.config import Settings
from codeqa_lsp.index.indexer import Indexer
from codeqa_lsp.retrieval.classes import members_of_strong_owners
from codeqa_lsp.retrieval.search import HybridSearcher

TYPES = '''
class LazyTarget:
    """A parameter type for an output target that is created lazily: nothing exists on
    disk until the first write, and the command's context closes it when it finishes."""

    def convert(self, value, param, ctx):
        opened = Deferred(value, self.mode)
        ctx.call_on_close(opened.close_intelligently)
        return opened

    def describe(self):
        return "target"


def copy_handle(source, handle):
    """Copy everything from an open source handle into another handle for writing."""
    for block in source:
        handle.write(block)
'''


def test_the_method_of_the_class_the_question_is_about_rises(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "types.py").write_text(TYPES)
    settings = Settings(embedder="hash", index_dir=str(tmp_path / "index"))
    indexer = Indexer(root, settings)
    try:
        indexer.index()
        searcher = HybridSearcher(indexer, settings)
        question = "why is the handle for writing not created on disk until the first write"
        ranked = searcher.search(question, top_k=4).hits
        symbols = [h.chunk.symbol for h in ranked]
        assert symbols.index("LazyTarget.convert") < symbols.index("copy_handle")
        searcher.close()
    finally:
        indexer.close()


def test_only_methods_of_high_ranked_classes_gain() -> None:
    chunks = {c.symbol: c for c in chunk_source("types.py", TYPES)}
    ranked = [
        (chunks["LazyTarget"], 1.0),
        (chunks["copy_handle"], 0.8),
        (chunks["LazyTarget.convert"], 0.7),
        (chunks["LazyTarget.describe"], 0.5),
    ]
    lifted = members_of_strong_owners(ranked, weight=0.25, owner_share=1.0)
    assert [c.symbol for c, _ in lifted] == [
        "LazyTarget",
        "LazyTarget.convert",  # 0.7 + 0.25
        "copy_handle",
        "LazyTarget.describe",  # 0.5 + 0.25 < 0.8
    ]
    # A class outside the first `within` results lifts nothing, and keeps its score.
    assert members_of_strong_owners(ranked[1:] + ranked[:1], within=2) == ranked[1:] + ranked[:1]


def test_the_owner_gives_way_to_its_members() -> None:
    """The class chunk is a skeleton of what its methods do: among the first results it
    keeps `owner_share` of its score, below the method that does the work."""
    chunks = {c.symbol: c for c in chunk_source("types.py", TYPES)}
    ranked = [
        (chunks["LazyTarget"], 1.0),
        (chunks["LazyTarget.convert"], 0.7),
        (chunks["copy_handle"], 0.6),
    ]
    lifted = members_of_strong_owners(ranked, weight=0.25, owner_share=0.75)
    assert [(c.symbol, round(s, 3)) for c, s in lifted] == [
        ("LazyTarget.convert", 0.95),  # 0.7 + 0.25 x the owner's own score
        ("LazyTarget", 0.75),
        ("copy_handle", 0.6),
    ]


ADAPTERS = '''
class DateJsonAdapter(JsonAdapter):
    """A JsonAdapter for java.util.Date values, registered explicitly."""

    def from_json(self, reader):
        return parse_date(reader.next_string())

    def to_json(self, writer, value):
        writer.value(format_date(value))


class ClassJsonAdapter(JsonAdapter):
    def create(self, type_, annotations, moshi):
        if type_.is_platform_type():
            message_prefix = f"Platform {type_}"
            raise ValueError(f"{message_prefix} requires explicit JsonAdapter to be registered")
        return ClassJsonAdapter(type_.fields())
'''


def test_the_code_writing_a_pasted_line_keeps_its_place_over_a_class() -> None:
    """moshi's scores for `Platform class java.util.Date requires explicit JsonAdapter to be
    registered` after the second stage: the date adapter class, second, lifted both its
    methods over `ClassJsonAdapter.create`, which throws the message."""
    chunks = {c.symbol: c for c in chunk_source("adapters.py", ADAPTERS)}
    ranked = [
        (chunks["ClassJsonAdapter.create"], 0.996),
        (chunks["DateJsonAdapter"], 0.952),
        (chunks["DateJsonAdapter.from_json"], 0.858),
        (chunks["DateJsonAdapter.to_json"], 0.79),
    ]
    lifted = [c.symbol for c, _ in members_of_strong_owners(ranked)]
    assert lifted[0] == "DateJsonAdapter.from_json"
    writers = frozenset({chunks["ClassJsonAdapter.create"].id})
    assert members_of_strong_owners(ranked, writers=writers) == ranked
    # A writer outside the first `within` results is no answer: the lift stays.
    assert members_of_strong_owners(ranked[1:] + ranked[:1], within=3, writers=writers)[0][
        0
    ].symbol == ("DateJsonAdapter.from_json")


MODULE = '''
"""Which files stay out of the index: credentials, binaries and generated code."""

import re

GENERATED = re.compile("DO NOT EDIT")


def content_rule(text):
    return "generated" if GENERATED.search(text) else None


def format_size(size):
    return f"{size} bytes"
'''


def test_a_strong_module_chunk_lifts_its_top_level_functions_only() -> None:
    chunks = {c.symbol: c for c in chunk_source("scan.py", MODULE)}
    module = next(c for c in chunks.values() if c.kind == "module")
    other = next(c for c in chunk_source("types.py", TYPES) if c.symbol == "copy_handle")
    ranked = [(module, 1.0), (other, 0.8), (chunks["content_rule"], 0.7)]
    lifted = members_of_strong_owners(ranked, weight=0.25)
    # content_rule 0.7 + 0.25; the module keeps 0.75 of its 1.0, under copy_handle's 0.8.
    assert [c.symbol for c, _ in lifted] == ["content_rule", "copy_handle", module.symbol]


VIPER_STRUCT = """package viper

// Viper is a prioritized configuration registry.
type Viper struct {
	configPaths []string
	configName  string
}

func (v *Viper) SetConfigName(in string) {
	v.configName = in
}
"""

VIPER_FILES = """package viper

func (v *Viper) searchInPath(in string) string {
	for _, ext := range SupportedExts {
		if exists(in + v.configName + "." + ext) {
			return in + v.configName + "." + ext
		}
	}
	return ""
}
"""

OTHER_PACKAGE = """package remote

type Viper struct{}

func (v *Viper) Watch() {}
"""


def test_a_go_type_lifts_its_methods_in_the_other_files_of_its_package() -> None:
    """Go declares a type's methods in any file of its package (viper's `searchInPath` is in
    file.go, its `Viper` struct in viper.go): they are members all the same. A type of the
    same name in another package (folder) is another type."""
    struct = {c.symbol: c for c in chunk_source("viper.go", VIPER_STRUCT)}
    search = {c.symbol: c for c in chunk_source("file.go", VIPER_FILES)}
    other = {c.symbol: c for c in chunk_source("remote/viper.go", OTHER_PACKAGE)}
    ranked = [
        (struct["Viper"], 1.0),
        (struct["Viper.SetConfigName"], 0.8),
        (other["Viper.Watch"], 0.75),
        (search["Viper.searchInPath"], 0.7),
    ]
    lifted = members_of_strong_owners(ranked, weight=0.25)
    scores = {c.path + ":" + c.symbol: s for c, s in lifted}
    assert scores["file.go:Viper.searchInPath"] == 0.7 + 0.25
    assert scores["remote/viper.go:Viper.Watch"] == 0.75
