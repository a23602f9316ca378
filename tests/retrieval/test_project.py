"""The project's own name (`project.py`): read from the manifests at the root, left out of a
the text a question's dense arm embeds; the pipeline tests run the real
MiniLM on onnxruntime over a real index (SQLite FTS5, hnswlib), as the failure was found."""

from __future__ import annotations

from pathlib import Path

import pytest

from codeqa_lsp.config import Settings
from codeqa_lsp.index.indexer import Indexer
from codeqa_lsp.retrieval.project import name_terms, text_without_name
from codeqa_lsp.retrieval.search import HybridSearcher
from tests.local_model import needs_local_model, write_workspace
from tests.retrieval.searchers import hash_searcher


@pytest.mark.parametrize(
    ("filename", "text", "expected"),
    [
        ("go.mod", "module github.com/spf13/cobra/v2\n\ngo 1.15\n", {"cobra"}),
        ("package.json", '{"name": "@hono/hono", "version": "4.0.0"}', {"hono"}),
        ("pyproject.toml", '[build-system]\nname = "x"\n[project]\nname = "attrs"\n', {"attrs"}),
        ("pyproject.toml", '[tool.poetry]\nversion = "1"\nname = "typer"\n', {"typer"}),
        ("setup.cfg", "[metadata]\nname = pluggy\nversion = 1\n", {"pluggy"}),
        ("Cargo.toml", '[package]\nname = "serde_json"\n[dependencies]\n', {"serdejson"}),
        ("composer.json", '{"name": "guzzlehttp/psr7"}', {"psr7"}),
        ("settings.gradle", "rootProject.name = 'gson'\n", {"gson"}),
        (
            "CMakeLists.txt",
            "cmake_minimum_required(VERSION 3.0)\nproject(cJSON VERSION 1.7)\n",
            {"cjson"},
        ),
        ("sinatra.gemspec", "Gem::Specification.new do |s|\nend\n", {"sinatra"}),
        ("MediatR.sln", "Microsoft Visual Studio Solution File\n", {"mediatr"}),
        ("Polly.slnx", "<Solution></Solution>\n", {"polly"}),
        # A multi-module build's root: the project's name with a conventional suffix.
        ("settings.gradle", "rootProject.name = 'retrofit-root'\n", {"retrofit"}),
        ("settings.gradle.kts", 'rootProject.name = "okio-parent"\n', {"okio"}),
        (
            "pom.xml",
            "<project><parent><artifactId>oss-parent</artifactId></parent>\n"
            "<groupId>com.google.code.gson</groupId><artifactId>gson-parent</artifactId>"
            "<modules><module>gson</module></modules></project>\n",
            {"gson"},
        ),
        # Unreadable or nameless manifests name nothing, and never raise.
        ("package.json", "{not json", set()),
        ("package.json", '["a list"]', set()),
        ("package.json", '{"name": 7}', set()),
        ("pyproject.toml", '[project]\nversion = "1"\n[other]\nname = "not-it"\n', set()),
        ("go.mod", "\x00\xff\xfe binary", set()),
        ("package.json", '{"name": "qs"}', set()),  # too short to tell from a word
    ],
)
def test_the_name_comes_from_the_manifests(
    tmp_path: Path, filename: str, text: str, expected: set[str]
) -> None:
    (tmp_path / filename).write_text(text, encoding="utf-8", errors="surrogateescape")
    assert name_terms(tmp_path) == expected


def test_the_folder_name_is_not_the_project_name(tmp_path: Path) -> None:
    root = tmp_path / "server"  # checkouts are named anything
    root.mkdir()
    (root / "go.mod").mkdir()  # a directory where a manifest would be
    assert name_terms(root) == frozenset()
    assert name_terms(tmp_path / "missing") == frozenset()


def test_a_question_of_nothing_but_the_name_keeps_it() -> None:
    names = frozenset({"cobra"})
    assert text_without_name("how does Cobra suggest", names) == "how does suggest"
    assert text_without_name("cobra?", names) == "cobra?"
    assert text_without_name("cobra", frozenset()) == "cobra"


# The project's name is all over the files that import it (a docs generator, an example),
# and nowhere in the library code that answers the question.
FILES = {
    "go.mod": "module github.com/example/cobra\n\ngo 1.15\n",
    "command.go": """
package cobra

// SuggestionsFor provides suggestions for the typed name.
func (c *Command) SuggestionsFor(typedName string) []string {
	suggestions := []string{}
	for _, cmd := range c.commands {
		if ld(typedName, cmd.Name()) <= c.SuggestionsMinimumDistance {
			suggestions = append(suggestions, cmd.Name())
		}
	}
	return suggestions
}

func (c *Command) Name() string {
	return c.Use
}
""",
    "doc/util.go": """
package doc

import "github.com/example/cobra"

// See Also: the cobra commands that cobra suggests to the cobra user next to this one.
func hasSeeAlso(cmd *cobra.Command) bool {
	if cmd.HasParent() {
		return true
	}
	for _, c := range cmd.Commands() {
		if !c.IsAvailableCommand() || c.IsAdditionalHelpTopicCommand() {
			continue
		}
		return true
	}
	return false
}
""",
    "doc/man_docs.go": """
package doc

import "github.com/example/cobra"

// GenManTree generates a man page for the cobra command and all its descendants; a cobra
// user calls it once for a cobra application.
func GenManTree(cmd *cobra.Command, dir string) error {
	return GenManTreeFromOpts(cmd, GenManTreeOptions{Path: dir})
}
""",
    "example/main.go": """
package main

import "github.com/example/cobra"

// A cobra application: the user runs the cobra root command.
func main() {
	root := &cobra.Command{Use: "app"}
	root.AddCommand(&cobra.Command{Use: "serve"})
	_ = root.Execute()
}
""",
    # The rest of the library: code about commands that never says the project's name.
    **{
        f"{topic}.go": f"""
package cobra

// {topic.capitalize()} reads the {topic} of a command.
func (c *Command) {topic.capitalize()}() string {{
	return c.{topic}
}}
"""
        for topic in ("args", "flags", "usage", "version", "aliases", "example", "hooks")
    },
}

QUESTION = "how does cobra suggest a command when the user mistypes it"


def _top(tmp_path: Path, files: dict[str, str]) -> list[str]:
    """The first three symbols for QUESTION, real MiniLM (onnxruntime) over a real index."""
    root = write_workspace(tmp_path / "repo", files)
    settings = Settings(embedder="local", index_dir=str(tmp_path / "idx"))
    indexer = Indexer(root, settings)
    indexer.index()
    searcher = HybridSearcher(indexer, settings)
    try:
        return [hit.chunk.symbol for hit in searcher.search(QUESTION, top_k=3).hits]
    finally:
        searcher.close()
        indexer.close()


@needs_local_model
def test_a_question_naming_the_project_is_about_its_code(tmp_path: Path) -> None:
    assert _top(tmp_path, FILES)[0] == "Command.SuggestionsFor"


@needs_local_model
def test_without_a_manifest_the_word_is_an_ordinary_term(tmp_path: Path) -> None:
    # What the question met before: the embedder reads "cobra" as the snake, and the files
    # that import the package (`*cobra.Command`) come first.
    files = {path: text for path, text in FILES.items() if path != "go.mod"}
    assert _top(tmp_path, files)[0] != "Command.SuggestionsFor"


def test_a_manifest_behind_a_wall_of_blank_lines_is_still_read(tmp_path: Path) -> None:
    # `^\s*project` let every blank line start a scan to the end of the file.
    (tmp_path / "CMakeLists.txt").write_text("\n" * 100_000 + "project(spdlog CXX)\n")
    assert name_terms(tmp_path) == {"spdlog"}


# Found in a user's pass over DaveGamble/cJSON: the project is named after its struct.
CJSON = {
    "CMakeLists.txt": "cmake_minimum_required(VERSION 3.0)\nproject(cJSON VERSION 1.7)\n",
    "README.md": """
# cJSON

Ultralightweight JSON parser in ANSI C. cJSON is a single C file and a single header.
It can parse a number, a string, an array or an object; see the API in cJSON.h.
""",
    "cJSON.h": """
/* The cJSON structure: one JSON value. */
typedef struct cJSON {
    struct cJSON *next;
    struct cJSON *prev;
    int type;
    double valuedouble;
    char *string;
} cJSON;
""",
    "cJSON.c": """
#include "cJSON.h"

/* Parse the input text to generate a number, and populate the result into item. */
static int parse_number(cJSON * const item, const char *input)
{
    double number = strtod(input, NULL);
    item->valuedouble = number;
    item->type = cJSON_Number;
    return 1;
}

/* Render the value of an item as text. */
static int print_value(const cJSON * const item, char *output)
{
    return sprintf(output, "%g", item->valuedouble);
}
""",
}


def test_the_projects_own_name_in_a_question_is_not_a_symbol_it_asks_for(
    tmp_path: Path,
) -> None:
    with hash_searcher(tmp_path, CJSON) as searcher:
        assert searcher.search("how does cJSON parse a number").hits[0].chunk.symbol == (
            "parse_number"
        )
        # Asked for on its own, the name is the struct's: code, not the README's section.
        hits = searcher.search("where is cJSON defined").hits
        assert (hits[0].chunk.symbol, hits[0].chunk.kind) == ("cJSON", "class")
        assert [h.chunk.kind for h in hits if h.exact_symbol] == ["class"]


# typer (user pass): the project is named after its class, and the docs' tutorials define
# classes of their own that say "class" more often.
TYPER = {
    "pyproject.toml": '[project]\nname = "typer"\n',
    "typer/main.py": '''
class Typer:
    """The app: commands are registered on it and run through click."""

    def command(self, name=None):
        """Register a function as a command."""
        return lambda f: f
''',
    "docs_src/custom_types/tutorial001.py": '''
class CustomClass:
    """A custom class, defined in the tutorial about classes: this class is parsed."""

    def __init__(self, value: str):
        self.value = value


def parse_custom_class(value: str):
    """Parse the custom class of the class tutorial."""
    return CustomClass(value * 2)
''',
}


def test_the_projects_name_with_its_kind_is_the_class(tmp_path: Path) -> None:
    with hash_searcher(tmp_path, TYPER) as searcher:
        hits = searcher.search("where is the Typer class defined").hits
    assert (hits[0].chunk.symbol, hits[0].exact_symbol) == ("Typer", True)
