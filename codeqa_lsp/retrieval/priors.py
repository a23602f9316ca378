"""Query-independent priors: how likely a chunk is to be *the answer* to a code question.

Measured on the evaluation sets: test files and changelogs win keyword matches far more
often than they answer anything. A test is named after the behaviour it checks
(`test_http_303_changes_post_to_get`) and a changelog entry describes a fix in the very
words a user asks with, while the implementation uses its own vocabulary. So they are
down-weighted, never removed: a query that asks about tests, examples, docs or the
history (`where is the test for ...`, `when did ... change`) turns the prior off for that
kind.
"""

from __future__ import annotations

import re
from functools import lru_cache

from codeqa_lsp.chunking.code_text import code_lines
from codeqa_lsp.chunking.languages import DOC_LANGUAGES, language_for_path
from codeqa_lsp.chunking.model import Chunk
from codeqa_lsp.index.tokens import token_set
from codeqa_lsp.retrieval.query import asks_how_to

# Multipliers on the fused score (which is >= 0 for the normalized fusion methods).
# Tests: 0.6 → 0.45 (2026-11-27, local, same session, with DOC_PRIOR at 0.3): two new user
# passes (240 blind probes over 20 repositories, not an evaluation set) 104 / 188 → 106 / 188
# first / top 5 (factory_bot's stub timestamps 3 → 1 under two specs named after them); the
# tryout hit@5 / MRR 0.843 / 0.699 → 0.865 / 0.705 (MediatR's parallel publisher 6 → 1 and
# pre-processor 8 → 3, gson's NaN question 1 → 2); the 100 questions local 0.87 / 0.744 →
# 0.87 / 0.739 (click-01 1 → 2: with a test gone from the first ten the `Option` class enters
# them and lifts `Option._parse_decls` over the answer), hash 0.78 / 0.648 → 0.79 / 0.650. The
# session before had measured the same trade on its passes and kept 0.6 for click-01; two
# held-out sets gaining against one question's second place decided it this time.
TEST_PRIOR = 0.45
CHANGELOG_PRIOR = 0.4
# Prose docs (.rst/.md sections) describe a behaviour in the very words users ask with, like a
# changelog, so they out-match the code that implements it. 0.8 → 0.6, hybrid hit@5 / MRR@10
# on the 100 questions (2026-11-23): local click 0.72/0.544 → 0.76/0.550, hash click
# 0.76/0.525 → 0.76/0.534, the other sets unchanged. (No expected answer there is a doc, so
# this measures what docs displace, not what they answer; a question that says "docs" or
# "guide" turns the prior off.) 0.6 → 0.3 (2026-11-27, local, same session): two user passes
# (240 blind probes over 20 repositories, not an evaluation set) 104 / 187 → 104 / 188 first /
# top 5, four answers up under guides that had led them (factory_bot's GETTING_STARTED.md
# above `Evaluator.association`: none → 3); the tryout MRR 0.693 → 0.699 (sinatra's "how are
# routes matched" 2 → 1); the 100 questions local identical, hash click-08 5 → 4; 0.45 gains
# half of it, 0.2 the same as 0.3. Code is what a question about behaviour is answered with.
DOC_PRIOR = 0.3
# Examples, samples and demos use the library's API the way tests do (naming its functions
# in the words users ask with) without implementing it: the same prior as tests. Was 0.8
# (2026-11-26, local, one run each): the 100 questions rank identically (their trees hold no
# examples the pipeline ranks); the nine-repository tryout (bench/tryout.py, not tuned on)
# 0.81 / 0.635 -> 0.82 / 0.646, MediatR's samples/ no longer take the top 4 for "how are
# handlers registered in the dependency injection container" (rank 7 -> top 5), two other
# questions up one rank each, none down.
EXAMPLE_PRIOR = TEST_PRIOR
# Licenses, CI and packaging configuration: they answer a question only when it names them.
META_PRIOR = 0.5
# A declaration (stub, overload, abstract method: `Chunk.declaration`) repeats the name and
# signature of its implementation and so matches as well; halving its score puts the
# implementation first when both match (a declaration alone still ranks where it matched).
DECLARATION_PRIOR = 0.5
# A thin method, a body of at most THIN_LINES lines of code that decide and compute nothing
# (it returns a field, forwards a call, sets a field), holds a name and a doc comment but not
# the behaviour a question asks about: accessors and one-line forwards took the first places
# above the code that does the work (in six user passes, 732 blind probes over 60
# repositories, not an evaluation set, 151 of the 313 probes not answered first had one
# above the answer; 24 answers were thin). A line that compares, branches or computes
# (`return msg_level >= level_`, spdlog's `should_log`) is behaviour, so no thin method.
# Top-level functions keep their weight: CoSQA's snippets are one-line functions (0.5997 ->
# 0.5724 when they were thin too). Asking how to do something wants the API; a pasted
# message wants the code writing it and a question about uses the callers, thin or not.
# Measured (2026-11-27, local, same session; 1,400 blind probes first / top 5, the 100
# questions hybrid hit@5 / MRR@10 local and hash, the tryout hit@5 / MRR@10), off: 702 /
# 1,133, 0.87 / 0.742, 0.78 / 0.641, 0.82 / 0.686; before arithmetic counted as computing and
# with the exemptions for pasted messages and uses not yet made:
#   0.85, 2 lines: 726 / 1,144, 0.87 / 0.743, 0.78 / 0.642, 0.82 / 0.673
#   0.7, 2 lines:  727 / 1,148, 0.87 / 0.744, 0.78 / 0.647, 0.83 / 0.681
#   0.6, 2 lines:  727 / 1,147, 0.87 / 0.744, 0.78 / 0.647, 0.84 / 0.688
#   0.6, 3 lines:  732 / 1,151, 0.87 / 0.744, 0.78 / 0.647, 0.84 / 0.697
#   0.5, 3 lines:  729 / 1,151, 0.87 / 0.744, 0.78 / 0.647, 0.84 / 0.697
#   0.6, 4 lines:  736 / 1,157, 0.87 / 0.746, 0.78 / 0.649, 0.83 / 0.680
# As shipped (0.6, 2 lines, the first THIN_WITHIN candidates): 725 / 1,149, 0.87 / 0.744,
# 0.78 / 0.647, 0.84 / 0.688; CoSQA and SWE-bench (hash) unchanged. Three lines catch small
# methods doing the work in three statements (click's `File.convert` shape: open lazily,
# register the close, return it).
THIN_PRIOR = 0.6
THIN_LINES = 2
# Read for thinness: the first candidates only. A parse each (~0.07 ms for a short method,
# cached by text): reading every candidate added ~3 ms a query at 100k chunks (`bench/speed.py
# --latency`, retrieval p95 24.6 -> 28.8 ms). Thin ones only fall, so those further down stay
# put. 50 ranks the probes as reading every candidate does, in their first 20, but one
# (reqwest's blocking `send`, 2 -> 3, a thin namesake from further down passing it); 30: 6.
THIN_WITHIN = 50

# `index.test-d.ts`: a type test (tsd's convention, commander.js and sindresorhus's packages).
# Kotlin Multiplatform and Android keep tests in source sets named `<platform>Test/`
# (`commonTest/`, `jvmTest/`, `androidTest/`), and JUnit, xUnit and Kotlin tests are files
# named `BufferTest.kt`, `SendTests.cs`: found in a user's pass over square/okio (not an
# evaluation set), where `ByteStringTest`'s four base64 tests led "how is base64 encoding
# implemented". In the evaluation sets every such file is already under a `test/` folder.
# Cucumber's and behave's step definitions and support code live under `features/`
# (`step_definitions/`, `steps/`, `support/`): httparty's `features/steps/mongrel_helper.rb`
# (a test server's handlers) led "how is basic auth taken from the url" above the request
# code (user pass, not an evaluation set). A bare `features/` folder is product code
# often enough (esbonio's server features) to stay source. .NET keeps tests in projects
# named `<Library>.Tests/` (FluentValidation's `src/FluentValidation.Tests/`, whose
# `ValidateAndThrowTester` methods took the first five places for "how does ValidateAndThrow
# throw when validation fails"), Swift packages in `Tests/` and `<Module>Tests/`.
# Folders named for a kind of test (`integration_tests/`, `e2e-tests/`, immer's
# `__performance_tests__/`, whose benchmark modules took 2 of the top 5 for "how is the
# resulting state made immutable recursively": `freeze` 8 -> 5, user pass, not an evaluation
# set; the 100 questions and the tryout rank identically) are tests too.
_TEST_PATH = re.compile(
    r"(^|/)(tests?|__tests__|spec|specs|testing|test_utils)/|(^|/)[a-z]\w*Test/"
    r"|(^|/)[\w.-]*Tests?/"
    r"|(^|/)[\w.-]*[a-z0-9][_-]tests?_*/"
    r"|(^|/)test_[^/]*$|_tests?\.[^/.]+$|[a-z0-9]Tests?\.[^/.]+$|\.(test|spec)(-d)?\.[^/.]+$"
    r"|(^|/)tests?\.[^/.]+$"
    r"|(^|/)conftest\.py$"
    r"|(^|/)features/(?:step_definitions|steps|support)/"
)
_CHANGELOG = re.compile(
    r"(^|/)(changes|changelog|history|news|releases?)(\.[a-z]+)?$", re.IGNORECASE
)
# Rust keeps unit tests beside the code they test, in `#[cfg(test)] mod tests { ... }` (the
# layout `cargo new` and the Rust book teach), so a source path holds them. A chunk whose
# enclosing scope is a module named like a test module (`tests.parses_size`, also `test.`,
# `unit_tests.`, `tests_windows.`) is a test wherever it lives. Found in a user's pass over
# sharkdp/fd (not an evaluation set): `src/exec/mod.rs`'s inline tests took ranks 2 and 4 for
# "how is the --exec command template filled with placeholders?".
_TEST_SCOPE = re.compile(r"(?:^|\.)(?:tests?|\w+_tests?|tests?_\w+)\.")
# A definition marked as a test by its own attribute is a test wherever it lives: Rust's
# `#[test]` (also `#[tokio::test]`, `#[rstest]`, `#[test_case(...)]`) on a function at a
# file's top level, beside the code, outside any `mod tests` (mitsuhiko/similar keeps its
# tests so: `test_split_lines` led "which function splits a string into lines while keeping
# the line endings", user pass, not an evaluation set); JUnit's `@Test` family; xUnit's,
# NUnit's and MSTest's `[Fact]`, `[Theory]`, `[Test]`, `[TestMethod]`, `[TestFixture]`,
# `[TestClass]`. A chunk begins with its definition's attributes and doc comment, so the mark
# is within its first lines. Measured 2026-11-27 (local, same session): 1,080 user probes
# 525 / 849 -> 526 / 849 first / top 5 (similar's `TextChangesIter.next` 2 -> 1, its
# `tokenize_lines` 10 -> 7); the 100 questions (local and hash) and the tryout identical.
_TEST_ATTRIBUTE = re.compile(
    r"^[ \t]*(?:#\[(?:\w+::)*(?:test|rstest|test_case)\b"
    r"|@(?:Test|ParameterizedTest|RepeatedTest|TestFactory|TestTemplate)\b"
    r"|\[(?:Fact|Theory|Test|TestCase|TestMethod|DataTestMethod|TestFixture|TestClass)\b)",
    re.MULTILINE,
)
# How far into a chunk the mark is looked for: attributes and a doc comment, not a body.
TEST_ATTRIBUTE_WITHIN = 300
# A substring of every mark `_TEST_ATTRIBUTE` matches.
_TEST_MARKS = ("test", "Test", "[Fact", "[Theory")
# Code written for the docs is an example too: FastAPI's and Typer's `docs_src/` (a tutorial's
# `CustomClass` led "where is the Typer class defined"), Polly's `src/Snippets/` (its docs'
# `Retry.Usage` led "how does the retry strategy compute the delay"), `tutorials/` (user pass,
# not an evaluation set). Not every `doc/` folder: cobra's `doc/` is its doc generator's code.
# A folder named for what it holds after a dot or a dash is the same: .NET's projects
# (FluentValidation's `src/FluentValidation.Tests.Benchmarks/`, whose `GlobalSetup` led "where
# does the validator stop running the remaining rules" above `ValidateInternalAsync`; user
# pass, not an evaluation set), `foo-examples/`. Measured 2026-11-27 (local, same session):
# 1,200 user probes 595 / 950 -> 596 / 950; the 100 questions and the tryout identical.
_EXAMPLE_PATH = re.compile(
    r"(^|/)(_?examples?|demos?|samples?|benchmarks?|bench|docs_src|snippets?|tutorials?)/"
    r"|(^|/)[\w.-]*[.-](?:examples?|demos?|samples?|benchmarks?|benches)/",
    re.IGNORECASE,
)
# The code in a `docs/` folder is the docs' own: their site's scripts and generated API pages
# (jcommander's `docs/apidocs/`, javadoc's bundled jquery.js, whose functions took ranks 2-3
# for two questions about option parsing; pugixml's `docs/manual.html` led "what happens to
# whitespace inside an attribute value when normalising is on"; user pass, not an evaluation
# set). Its prose stays `doc`.
_DOCS_PATH = re.compile(r"(^|/)docs/", re.IGNORECASE)
# A JVM source root: the folders under it are a package's name, not a layout. Spring
# Initializr and Android Studio put a new project's whole source under `com/example/demo/`
# (`src/main/java/com/example/demo/...`), where "example" and "demo" are placeholders.
_JVM_SOURCE_ROOT = re.compile(r"(^|/)(java|kotlin|scala|groovy)/")

# Files that are not code and do not describe behaviour: legal text, CI and packaging
# configuration, the docs' build configuration. The floor (`floor.py`) never lets them make
# a code question confident.
# Long queries (issue reports): everything but source further down. Measured on SWE-bench
# Lite (bench/swebench.py, hash, first 9 instances): with the short-query priors .rst docs,
# issue templates and test roots took 2-3 of the top 5 files on pytest and sphinx issues.
LONG_QUERY_FACTORS: dict[str, float] = {
    "source": 1.0,
    "test": 0.4,
    "changelog": 0.3,
    "meta": 0.3,
    "doc": 0.5,
    "example": 0.5,
}

_META_FILE = re.compile(
    r"(^|/)(licen[cs]e|copying|notice|authors|contributors|code_of_conduct|funding|codeowners)"
    r"(\.[a-z]+)?$"
    r"|\.(ya?ml|toml|cfg|ini|lock|json)$|(^|/)\.github/|(^|/)docs?/conf\.py$|(^|/)setup\.cfg$",
    re.IGNORECASE,
)

# A question asks for tests when tests are what it wants: "which test covers redirects", "the
# tests for parse_args", "is X tested", "unit tests", "the fixtures". Not when it only says
# the word: "my test never looked at them", "the test scheduler's virtual time" (questions
# about a testing library, cashapp/turbine, whose FlowTest methods took the first three
# places), "make a pattern test only the last segment", "per the HTTP spec": every one of
# the seven probes of four user passes (480 blind probes, not an evaluation set) that said
# test or spec asked about library code; no question of the evaluation sets says either.
_ASKS_FOR_TESTS = re.compile(
    r"\b(?:which|what|any|some|existing|unit|integration|regression|e2e|failing|flaky"
    r"|snapshot|property|smoke)\s+(?:tests?|specs?|test\s+cases?)\b"
    r"|\b(?:show|list|find|where\s+are)\s+(?:me\s+)?(?:the\s+|all\s+)?(?:tests|specs)\b"
    r"|\b(?:tests?|specs?)\s+(?:for|of|that|which|cover\w*|exercis\w*|check\w*|assert\w*"
    r"|verif\w*|call\w*|use\w*|hit\w*)\b"
    r"|\btest\s+(?:suites?|cases?|files?|helpers?|coverage|fixtures?|data)\b"
    r"|\b(?:in|from|by)\s+(?:the\s+)?(?:tests|specs|test\s+suite)\b"
    r"|\b(?:tested|untested|fixtures?|testing\s+(?:it|this|that))\b",
    re.IGNORECASE,
)
_HISTORY_WORDS = frozenset({"changelog", "history", "changed", "release", "released"})
# "version" alone is as often a feature as a release ("how is the version option
# implemented": commander.js's changelog took 3 of the top 6); a question about releases
# says which one ("in version 3", "v2.1", "which version added ...", "since version").
_ASKS_FOR_A_VERSION = re.compile(
    r"\b(?:which|what|in|since|before|after|until|from)\s+versions?\b"
    r"|\bversions?\s+v?\d|\bv\d+(?:\.\d+)+\b",
    re.IGNORECASE,
)
_DOC_WORDS = frozenset(
    {"doc", "docs", "documentation", "documented", "readme", "guide", "tutorial"}
)
_META_WORDS = frozenset(
    {
        "license",
        "licence",
        "licensed",
        "copyright",
        "ci",
        "workflow",
        "workflows",
        "yaml",
        "yml",
        "config",
        "configuration",
        "configured",
        "toml",
        "json",
        "funding",
        "sponsor",
        "dependency",
        "dependencies",
        "install",
        "installed",
        "package",
        "packaging",
        "build",
    }
)
_EXAMPLE_WORDS = frozenset({"example", "examples", "demo", "sample", "benchmark"})
# "For example" introduces the user's own example, and `example.com` is a placeholder domain:
# neither asks for the repository's examples (three probes of the user passes said so, about
# tera's operator precedence and EmailValidator's addresses; not an evaluation set).
_EXAMPLE_ASIDE = re.compile(r"\bfor\s+example\b|\bexample\.(?:com|org|net)\b", re.IGNORECASE)
_DECLARATION_WORDS = frozenset(
    {
        "stub",
        "stubs",
        "pyi",
        "overload",
        "overloads",
        "abstract",
        "declaration",
        "declarations",
        "declared",
        "signature",
        "signatures",
        "interface",
        "typing",
        "annotation",
        "annotations",
    }
)
# What a type declares: its fields or options ("what options does ky accept?", "what does a
# beforeRetry hook receive?"): there a type declaration (interface, type alias) is the
# answer, so types stay level. Stubs of functions and methods do not: "how does commander
# handle unknown options" put five `.d.ts` method stubs above `lib/command.js`'s
# `unknownOption` while these words turned every declaration level (2026-11-26, a user's
# pass over commander.js). Not "shape": a domain noun ("how is the area of a shape
# computed" wants the implementation, tests/retrieval/test_declarations.py).
_SHAPE_WORDS = frozenset(
    {
        "field",
        "fields",
        "property",
        "properties",
        "option",
        "options",
        "receive",
        "receives",
        "accept",
        "accepts",
    }
)


def is_non_code(path: str) -> bool:
    """Not evidence for a question about behaviour: changelogs, licenses, CI and packaging
    configuration (docs and tests still describe behaviour; they are only down-weighted)."""
    return path_kind(path) in ("changelog", "meta")


def is_code(chunk: Chunk) -> bool:
    """Code, which can use a name or raise an error; a guide's example or a changelog entry
    that quotes it does not (marshmallow: "who calls _deserialize" listed docs/custom_fields.rst
    and three changelog sections after its two callers)."""
    return chunk.kind != "section" and chunk_kind(chunk) != "doc" and not is_non_code(chunk.path)


@lru_cache(maxsize=65_536)
def path_kind(path: str) -> str:
    """`test`, `changelog`, `meta`, `example`, `doc` or `source`. Cached: the reranker asks
    for every candidate of every query (~250 calls a query, 1.6 ms at 100k chunks)."""
    if _CHANGELOG.search(path):
        return "changelog"
    if _META_FILE.search(path):
        return "meta"
    if _TEST_PATH.search(path):
        return "test"
    root = _JVM_SOURCE_ROOT.search(path)
    if _EXAMPLE_PATH.search(path[: root.end()] if root else path):
        return "example"
    if language_for_path(path) in DOC_LANGUAGES:  # .md, .mdx, .rst, .txt, README...
        return "doc"
    if _DOCS_PATH.search(path[: root.end()] if root else path):
        return "example"
    return "source"


def chunk_kind(chunk: Chunk) -> str:
    """`path_kind`, except that a definition inside a test module (`_TEST_SCOPE`) or marked as
    a test (`_TEST_ATTRIBUTE`) is a test."""
    kind = path_kind(chunk.path)
    if kind != "source":
        return kind
    if "test" in chunk.symbol and _TEST_SCOPE.search(chunk.symbol):
        return "test"
    return "test" if _marked_test(chunk.text[:TEST_ATTRIBUTE_WITHIN]) else kind


def _marked_test(head: str) -> bool:
    """Whether `head` (a chunk's first characters) holds a test attribute (`_TEST_ATTRIBUTE`):
    substring tests first, the pattern only where one matched (the reranker asks for every
    candidate of every query)."""
    return any(mark in head for mark in _TEST_MARKS) and bool(_TEST_ATTRIBUTE.search(head))


class QueryPriors:
    """The multipliers for one query (the query decides which priors are switched off)."""

    def __init__(
        self, query: str, long_query: bool = False, output: bool = False, any_size: bool = False
    ) -> None:
        """`output`: the query is what a program printed (a pasted message, `literals.py`);
        its words ask for nothing: env_logger's `invalid logging spec '...'` says "spec" and
        is no question about specs (user pass, not an evaluation set: the tests asserting the
        message took the first places, `parse_spec` that writes it was 7th). The code
        writing it is the answer however thin, as the callers are for `any_size` (a question
        about uses, `uses.py`)."""
        if long_query:
            # A pasted issue or traceback is not *asking for* tests or docs even when it says
            # "test" ten times (every pytest issue does); the fix is in the library code.
            self.factors = dict(LONG_QUERY_FACTORS)
            self.asks_for_declarations = self.asks_for_types = False
            self.declaration = DECLARATION_PRIOR
            self.thin = 1.0
            return
        words = frozenset() if output else token_set(query)
        history = bool(words & _HISTORY_WORDS) or (
            not output and bool(_ASKS_FOR_A_VERSION.search(query))
        )
        self.factors = {
            "source": 1.0,
            "test": 1.0 if not output and _ASKS_FOR_TESTS.search(query) else TEST_PRIOR,
            "changelog": 1.0 if history else CHANGELOG_PRIOR,
            "meta": 1.0 if words & _META_WORDS else META_PRIOR,
            "doc": 1.0 if words & _DOC_WORDS else DOC_PRIOR,
            "example": 1.0 if _asks_for_examples(query, words) else EXAMPLE_PRIOR,
        }
        self.asks_for_declarations = bool(words & _DECLARATION_WORDS)
        self.asks_for_types = self.asks_for_declarations or bool(words & _SHAPE_WORDS)
        self.declaration = 1.0 if self.asks_for_declarations else DECLARATION_PRIOR
        self.thin = 1.0 if output or any_size or asks_how_to(query) else THIN_PRIOR

    def factor(self, chunk: Chunk) -> float:
        """The path and declaration prior (`thin_factor` is applied apart: it reads code)."""
        base = self.factors[chunk_kind(chunk)]
        if not chunk.declaration or (self.asks_for_types and chunk.kind == "class"):
            return base
        return base * self.declaration

    def thin_factor(self, chunk: Chunk) -> float:
        """`THIN_PRIOR` for a thin method (`is_thin`) when the question wants no API."""
        return self.thin if self.thin != 1.0 and is_thin(chunk) else 1.0

    def writes_messages(self, chunk: Chunk) -> bool:
        """Whether a quoted or pasted message held by `chunk` is evidence that it wrote it:
        library code does; a guide quoting a message never does, a test asserting it or an
        example printing it only when the question asks for tests or examples."""
        kind = chunk_kind(chunk)
        return kind != "doc" and (kind not in ("test", "example") or self.factors[kind] == 1.0)


def _asks_for_examples(query: str, words: frozenset[str]) -> bool:
    """`words` (the question's tokens; none for program output) name examples outside an
    aside: the tokens are read again without the asides only when one is there."""
    if not words & _EXAMPLE_WORDS:
        return False
    return not _EXAMPLE_ASIDE.search(query) or bool(
        token_set(_EXAMPLE_ASIDE.sub(" ", query)) & _EXAMPLE_WORDS
    )


# A line of code that decides or computes: a comparison, a boolean or arithmetic operator, a
# branch or a loop.
_DECIDES = re.compile(
    r"==|!=|>=|<=|\s[<>*/%+-]\s|&&|\|\||\?|\b(?:if|for|while|match|switch|and|or|not)\b"
)


def is_thin(chunk: Chunk) -> bool:
    """A method whose body is at most `THIN_LINES` lines of code deciding nothing (not a
    declaration: that has its own prior)."""
    return (
        chunk.kind == "method" and not chunk.declaration and _thin_body(chunk.text, chunk.language)
    )


def _thin_body(text: str, language: str) -> bool:  # `code_lines` is cached by text
    body = code_lines(text, language)[1:]  # the signature's first line is no body
    return len(body) <= THIN_LINES and not any(_DECIDES.search(line) for line in body)
