"""Path priors and the confidence verdict, on hand-built chunks (a test mark also through the real
pipeline: SQLite FTS5, hnswlib, the `hash` embedder)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from codeqa_lsp.chunking.model import Chunk
from codeqa_lsp.retrieval.floor import dense_floor, judge
from codeqa_lsp.retrieval.priors import (
    EXAMPLE_PRIOR,
    TEST_PRIOR,
    QueryPriors,
    chunk_kind,
    path_kind,
)
from tests.chunks import chunk_of
from tests.retrieval.searchers import hash_searcher


def _chunk(path: str, text: str = "def f():\n    return 1\n", symbol: str = "f") -> Chunk:
    return chunk_of(text, path=path, symbol=symbol)


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("src/requests/sessions.py", "source"),
        ("tests/test_requests.py", "test"),
        ("pkg/foo_test.go", "test"),
        ("src/app.spec.ts", "test"),
        ("lib/__tests__/router.js", "test"),
        ("History.md", "changelog"),
        ("CHANGES.rst", "changelog"),
        ("docs/api.rst", "doc"),
        # Every prose language the chunker knows (zod's docs are .mdx; they led "how does
        # z.coerce convert input to a number" above the code).
        ("packages/docs/content/api.mdx", "doc"),
        ("guide/README.markdown", "doc"),
        ("README", "doc"),
        ("examples/basic/app.py", "example"),
        ("_examples/limits/main.go", "example"),  # Go's tools skip `_` folders
        # .NET projects named for what they hold, as `<Library>.Tests/` is (FluentValidation's
        # `src/FluentValidation.Tests.Benchmarks/`), and dashed folders the same way.
        ("src/FluentValidation.Tests.Benchmarks/ValidationBenchmark.cs", "example"),
        ("samples/MediatR.Examples/Program.cs", "example"),
        ("crates/regex-benchmarks/src/main.rs", "example"),
        ("src/benchmark.go", "source"),
        ("src/app/sample-data/users.ts", "source"),
        ("src/testing_utils_helper.py", "source"),
        ("source/test-data.ts", "source"),
        # A JVM package's folders are its name: Spring Initializr's `com.example.demo`.
        ("src/main/java/com/example/demo/DemoApplication.java", "source"),
        ("src/test/java/com/example/demo/DemoApplicationTests.java", "test"),
        ("examples/java/com/acme/Main.java", "example"),
        ("typings/index.test-d.ts", "test"),
        # Kotlin Multiplatform and Android source sets, JUnit and xUnit file names (okio).
        ("okio/src/commonTest/kotlin/okio/ByteStringTest.kt", "test"),
        ("okio/src/androidTest/kotlin/okio/Assets.kt", "test"),
        ("src/Serilog.Sinks/SendTests.cs", "test"),
        ("okio/src/jvmMain/kotlin/okio/Buffer.kt", "source"),
        ("src/main/java/org/jsoup/Contest.java", "source"),
        ("lib/latest.py", "source"),
        # A file named test or tests: hiredis's test.c (its test_* functions led "how does
        # hiredis parse a RESP reply"), Django's tests.py, a package's root test.js.
        ("test.c", "test"),
        ("polls/tests.py", "test"),
        ("test.js", "test"),
        ("lib/attest.js", "source"),
        ("src/contest.c", "source"),
        # Code written for the docs (FastAPI's and Typer's docs_src/, Polly's Snippets/), but
        # not every doc/ folder (cobra's doc/ is its doc generator).
        ("docs_src/custom_types/tutorial001.py", "example"),
        ("src/Snippets/Docs/Retry.cs", "example"),
        ("doc/md_docs.go", "source"),
        # The docs' own code and pages under docs/ (jcommander's javadoc, its bundled jquery;
        # pugixml's manual.html; not an evaluation set); their prose stays doc.
        ("docs/apidocs/jquery/external/jquery/jquery.js", "example"),
        ("docs/manual.html", "example"),
        ("docs/guide/options.md", "doc"),
        ("src/main/java/com/acme/docs/Renderer.java", "source"),
        # Cucumber's and behave's step code (httparty's features/steps/), not every features/.
        ("features/steps/mongrel_helper.rb", "test"),
        ("features/step_definitions/login_steps.js", "test"),
        ("features/support/env.rb", "test"),
        ("server/features/hover.py", "source"),
        # .NET test projects and Swift test targets (FluentValidation, not an evaluation set).
        ("src/FluentValidation.Tests/ValidateAndThrowTester.cs", "test"),
        ("src/MyLib.UnitTests/Parsing.cs", "test"),
        ("Tests/LoggingTests/HandlerCase.swift", "test"),
        # Folders named for a kind of test (immer, not an evaluation set).
        ("__performance_tests__/incremental.mjs", "test"),
        ("integration_tests/test_app.py", "test"),
        ("e2e-tests/login.ts", "test"),
        ("src/contests/score.py", "source"),
        ("src/latest/cache.py", "source"),
        ("src/FluentValidation/Validators/EmailValidator.cs", "source"),
        ("src/Testing.Tools/Runner.cs", "source"),
    ],
)
def test_path_kinds(path: str, kind: str) -> None:
    assert path_kind(path) == kind


def test_query_asking_for_tests_turns_the_test_prior_off() -> None:
    test_chunk = _chunk("tests/test_api.py")
    assert QueryPriors("how are redirects followed").factor(test_chunk) < 1.0
    assert QueryPriors("which test covers redirects").factor(test_chunk) == 1.0
    assert QueryPriors("is the redirect limit tested?").factor(test_chunk) == 1.0
    assert QueryPriors("where are the fixtures for sessions").factor(test_chunk) == 1.0


@pytest.mark.parametrize(
    "question",
    [
        # Questions about a testing library say "test" of the user's own tests (turbine).
        "what happens to values my test never looked at once the test block is over?",
        "how does collection keep using the test scheduler's virtual time?",
        "how does the basename option make a pattern test only the last segment?",
        "why do 204 responses carry a body, against the HTTP spec?",
    ],
)
def test_saying_test_is_not_asking_for_tests(question: str) -> None:
    assert QueryPriors(question).factor(_chunk("tests/test_api.py")) == TEST_PRIOR
    assert QueryPriors("how are redirects followed").factor(_chunk("src/api.py")) == 1.0


@pytest.mark.parametrize(
    ("symbol", "kind"),
    [
        ("tests.tokens_multiple", "test"),  # Rust: #[cfg(test)] mod tests { fn ... }
        ("exec.tests.generate_custom_path_separator.check", "test"),
        ("unit_tests.parses", "test"),
        ("tests_windows.separator", "test"),
        ("CommandTemplate.new", "source"),
        ("tests", "source"),  # a function named `tests` is not inside a test module
        ("latest.parse", "source"),
        ("contests.score", "source"),
        ("TestCase.run", "source"),
    ],
)
def test_definitions_inside_a_test_module_are_tests(symbol: str, kind: str) -> None:
    assert chunk_kind(_chunk("src/exec/mod.rs", symbol=symbol)) == kind
    assert chunk_kind(_chunk("tests/cli.rs", symbol=symbol)) == "test"


def test_inline_rust_tests_rank_below_the_code_they_test() -> None:
    inline_test = _chunk("src/exec/mod.rs", symbol="tests.tokens_multiple")
    code = _chunk("src/exec/mod.rs", symbol="CommandTemplate.generate")
    priors = QueryPriors("how is the exec command template filled with placeholders")
    assert priors.factor(inline_test) < priors.factor(code) == 1.0
    assert QueryPriors("which test covers exec placeholders").factor(inline_test) == 1.0


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("#[test]\nfn test_split_lines() {\n    assert_eq!(1, 1);\n}\n", "test"),
        ("/// Checks it.\n#[tokio::test]\nasync fn reconnects() {}\n", "test"),
        ("#[rstest]\n#[case(1)]\nfn parses(#[case] n: u8) {}\n", "test"),
        ("    @Test\n    void parsesDates() {}\n", "test"),
        ("@ParameterizedTest\n@ValueSource(ints = {1})\nvoid odd(int n) {}\n", "test"),
        ("[Fact]\npublic void Maps() {}\n", "test"),
        ('[TestCase("a")]\npublic void Splits(string s) {}\n', "test"),
        ("#[inline]\nfn split_lines(s: &str) -> Lines {\n    s.lines()\n}\n", "source"),
        ("@Override\npublic String toString() { return name; }\n", "source"),
        ("fn run() {\n    // see #[test] below\n}\n", "source"),
        ("def test_connection(self):\n    return self.ping()\n", "source"),
        ("[Obsolete]\npublic void TestConnection() {}\n", "source"),
    ],
)
def test_a_definition_marked_as_a_test_is_a_test_wherever_it_lives(text: str, kind: str) -> None:
    assert chunk_kind(_chunk("src/text/abstraction.rs", text=text, symbol="f")) == kind


def test_a_test_mark_is_read_in_the_definitions_head_only() -> None:
    body = "fn build() {\n" + "    step();\n" * 40 + "    #[test]\n    fn inner() {}\n}\n"
    assert chunk_kind(_chunk("src/lib.rs", text=body, symbol="build")) == "source"


def test_top_level_rust_tests_rank_below_the_function_they_test(tmp_path: Path) -> None:
    """mitsuhiko/similar keeps `#[test]` functions at a source file's top level, outside any
    `mod tests`: `test_split_lines` led the question about the function it tests."""
    files = {
        "src/text/lines.rs": """
/// Counts the words of a text.
pub fn count_words(s: &str) -> usize {
    s.split_whitespace().count()
}

/// Joins parts with a separator.
pub fn join_parts(parts: &[&str], sep: &str) -> String {
    parts.join(sep)
}

/// Removes trailing spaces.
pub fn trim_end(s: &str) -> &str {
    s.trim_end()
}

/// Splits a string into lines; each keeps its line ending.
pub fn tokenize_lines(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, c) in s.char_indices() {
        if c == '\\n' {
            out.push(&s[start..=i]);
            start = i + 1;
        }
    }
    out
}

#[test]
fn test_split_lines() {
    // splits a string into lines keeping line endings
    assert_eq!(tokenize_lines("a\\nb\\n"), vec!["a\\n", "b\\n"]);
}
"""
    }
    question = "which function splits a string into lines keeping the line endings attached?"
    with hash_searcher(tmp_path, files) as searcher:
        symbols = [h.chunk.symbol for h in searcher.search(question, top_k=3).hits]
    assert symbols[0] == "tokenize_lines", symbols
    with hash_searcher(tmp_path / "asked", files) as searcher:
        asked = searcher.search("which test checks that a string splits into lines?", top_k=3)
    assert asked.hits[0].chunk.symbol == "test_split_lines"


def test_samples_rank_like_tests_below_the_library_unless_asked_for() -> None:
    sample = _chunk("samples/MediatR.Examples.Windsor/Program.cs", symbol="Program.Register")
    library = _chunk("src/MediatR/Registration/ServiceRegistrar.cs", symbol="AddMediatR")
    test = _chunk("test/MediatR.Tests/SendTests.cs", symbol="SendTests.Should_resolve")
    priors = QueryPriors("how are handlers registered in the dependency injection container")
    assert priors.factor(sample) == priors.factor(test) < priors.factor(library) == 1.0
    assert QueryPriors("is there an example of registering handlers").factor(sample) == 1.0
    # The user's own example and a placeholder domain ask for no sample.
    aside = QueryPriors("how are handlers registered, for example for user@example.com?")
    assert aside.factor(sample) == EXAMPLE_PRIOR


def test_a_question_about_options_or_fields_keeps_declarations_level() -> None:
    declared = replace(
        _chunk("source/types/retry.ts", symbol="RetryOptions"), kind="class", declaration=True
    )
    assert QueryPriors("how does ky retry a failed request").factor(declared) == 0.5
    stub = replace(
        _chunk("typings/index.d.ts", symbol="Command.parseOptions"), kind="method", declaration=True
    )
    for question in ("what options does ky accept?", "what does a beforeRetry hook receive?"):
        assert QueryPriors(question).factor(declared) == 1.0
        # A method's stub is not what a type declares: the implementation still comes first.
        assert QueryPriors(question).factor(stub) == 0.5
    assert QueryPriors("which overload or stub declares parseOptions").factor(stub) == 1.0


def test_floor_override_and_defaults() -> None:
    assert dense_floor("local") > dense_floor("hash") > 0
    assert dense_floor("local", min_score=0.1) == 0.1
    assert dense_floor("some-new-embedder") > 0


def test_verdicts() -> None:
    code = _chunk("src/retry.py", "def retry_with_backoff(call):\n    sleep(exponential delay)\n")
    assert judge("anything", None, 0.9, 0.4).confident
    assert judge("where is it", None, None, 0.4, exact_symbol=True).confident
    lexical = judge("retry with exponential backoff", code, 0.1, 0.4)
    assert lexical.confident
    weak = judge("chocolate cake recipe", code, 0.1, 0.4)
    assert not weak.confident
    assert "0.10 is below the floor 0.40" in weak.reason and "0 of 3" in weak.reason
    nothing = judge("chocolate cake recipe", None, None, 0.4)
    assert not nothing.confident and "no embeddings yet" in nothing.reason


@pytest.mark.parametrize(
    ("question", "asks_for_history"),
    [
        ("how is the version option implemented", False),
        ("how does it check the python version", False),
        ("what changed in version 3", True),
        ("which version added retries", True),
        ("is the header still sent since v2.1.0", True),
        ("what versions are supported", True),
        ("where is the changelog", True),
    ],
)
def test_the_changelog_is_asked_for_by_a_release_not_by_the_word_version(
    question: str, asks_for_history: bool
) -> None:
    entry = _chunk("CHANGELOG.md", symbol="Changelog > 3.0.0")
    assert (QueryPriors(question).factor(entry) == 1.0) is asks_for_history


def test_the_words_of_program_output_ask_for_nothing() -> None:
    said = "specs for invalid logging spec 'app=debug/foo/bar' (too many '/'s) in changelog"
    assert QueryPriors(said).factors["test"] == 1.0  # asked by the user: "specs for"
    assert QueryPriors(said).factors["changelog"] == 1.0
    printed = QueryPriors(said, output=True).factors  # printed by the program
    assert printed["test"] == TEST_PRIOR
    assert printed["changelog"] < 1.0
