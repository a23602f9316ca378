"""Literal evidence (`literals.py`): quoted or pasted messages and raised errors, alone and
through the real pipeline (real SQLite FTS5, hnswlib, the `hash` embedder)."""

from __future__ import annotations

from pathlib import Path

from codeqa_lsp.chunking.chunker import chunk_source
from codeqa_lsp.retrieval.floor import code_verdict
from codeqa_lsp.retrieval.literals import (
    COMMON_RAISERS,
    Literals,
    find_literals,
    literal_scores,
    message_share,
)
from tests.retrieval.searchers import hash_searcher


def literal_score(text: str, literals: Literals) -> float:
    """One chunk's literal score (a lone raiser gets full credit)."""
    return literal_scores({"chunk": text}, literals).get("chunk", 0.0)


FILES = {
    "pkg/units.py": '''
"""Units and their scales."""


class UnitConversionError(ValueError):
    """Raised when two units measure different things, such as metres and seconds."""


class Unit:
    """A named unit with a scale relative to its base unit."""

    def __init__(self, name, scale, base):
        self.name = name
        self.scale = scale
        self.base = base

    def describe(self):
        """A unit and the base unit it converts to, for error messages and reprs."""
        return f"{self.name} converts to {self.base} by scale {self.scale}"

    def scale_to(self, other):
        """The factor from this unit to `other`."""
        if other.base != self.base:
            raise UnitConversionError(f"cannot convert {self.name} to {other.name}")
        return self.scale / other.scale
''',
    "pkg/tables.py": '''
"""Tables read from delimited text."""


def read_table(path, delimiter=","):
    """Read a delimited file into rows; every row must have as many cells as the header."""
    rows = [line.split(delimiter) for line in open(path)]
    for number, row in enumerate(rows[1:], 2):
        if len(row) != len(rows[0]):
            raise ValueError(f"Row {number} has {len(row)} cells where the header has ...")
    return rows


def header_cells(path, delimiter=","):
    """The header row's cells: the row every other row is checked against."""
    with open(path) as handle:
        return handle.readline().split(delimiter)
''',
}


def test_quoted_messages_need_several_words_with_spaces() -> None:
    literals = find_literals(
        "Where is 'Got unexpected extra argument(s)' raised, and what does '--dry-run' or "
        "'trust proxy' do?",
        [],
    )
    assert literals.messages == ((("got", "unexpected", "extra", "argument", "s"),),)


def test_an_ellipsis_splits_a_message_into_fragments() -> None:
    literals = find_literals('Where does "Row ... has too few cells" come from?', [])
    assert literals.messages == ((("row",), ("has", "too", "few", "cells")),)


def test_a_pasted_error_line_is_a_message() -> None:
    query = (
        "Traceback (most recent call last):\nValueError: Row 3 has 2 cells where the header has 4"
    )
    literals = find_literals(query, [])
    # Numbers in what the user saw are runtime values the code formats in.
    words = ("row", "has", "cells", "where", "the", "header", "has")
    assert literals.messages == ((words,),)
    # PHP writes namespaces with backslashes (symfony/yaml, user pass): the namespace is
    # the type's, not words of the message.
    php = find_literals(
        "Symfony\\Component\\Yaml\\Exception\\ParseException: Duplicate key detected at line 3.",
        [],
        lambda name: name == "ParseException",
    )
    assert php.raised == ("ParseException",)
    assert php.messages == ((("duplicate", "key", "detected", "at", "line"),),)
    # A qualified type's line whatever the type's name ends in (httparty, user pass), and
    # Ruby's `raise HTTParty::RedirectionTooDeep.new(...)` raises it; a question is no line.
    ruby = find_literals("HTTParty::RedirectionTooDeep: HTTP redirects too deep", [], bool)
    assert ruby.raised == ("RedirectionTooDeep",)
    assert ruby.messages == ((("http", "redirects", "too", "deep"),),)
    raising = "raise HTTParty::RedirectionTooDeep.new(response), 'HTTP redirects too deep'"
    assert literal_score(raising, ruby) == 1.0
    # Taking a quoted value out never leaves a message of fewer than MIN_MESSAGE_WORDS: liquid's
    # `Unknown tag 'foo'` would be held by every chunk naming `unknown_tag`.
    tag = find_literals("Liquid::SyntaxError: Unknown tag 'foo'", [])
    assert literal_score("def raise_unknown_tag(tag)", tag) == 0.0
    assert not find_literals("How does App.Config: the timeout get read", [], bool)
    assert not find_literals("Rack::QueryParser::ParamsTooDeepError", [], bool)


def test_a_tools_own_error_line_keeps_its_prefix() -> None:
    # commander writes `error: unknown option '${flag}'`: the runtime value is not in the
    # code, the prefix is.
    literals = find_literals("error: unknown option '--fooo'", [])
    assert literals.messages == ((("error", "unknown", "option", "fooo"),),)
    code = "const message = `error: unknown option '${flag}'${suggestion}`;"
    # The quoted '--fooo' is a value the code formats in: the code holds all the rest.
    assert literals.values == (frozenset({"fooo"}),)
    assert literal_score(code, literals) == 1.0
    # A quoted word the code does hold counts as written ("unknown option 'fooo'" hard-coded).
    assert literal_score("log('error: unknown option fooo')", literals) == 1.0
    assert literal_score("log('error: unknown option')", literals) == 1.0
    assert literal_score("log('error: unknown flag')", literals) == 0.0
    cargo = find_literals("error[E0382]: borrow of moved value: `walker`", [])
    assert cargo.messages[0][0][:4] == ("error", "e0382", "borrow", "of")
    assert not find_literals("the error: handling of retries is odd", []).messages


def test_raised_names_are_those_next_to_a_raise_verb() -> None:
    near = find_literals("Where is UnitConversionError raised?", ["UnitConversionError"])
    assert near.raised == ("UnitConversionError",)
    far = find_literals(
        "Why is the scale thrown away when converting between units of a Unit group that "
        "share a base, instead of a UnitConversionError?",
        ["UnitConversionError"],
    )
    assert far.raised == ()
    lowercase = find_literals("where is scale_to raised from", ["scale_to"])
    assert lowercase.raised == ()


def test_literal_score_tolerates_formatting_and_finds_raise_statements() -> None:
    message = find_literals("Where is 'Got unexpected extra argument(s)' raised?", [])
    code = 'raise UsageError(ngettext("Got unexpected extra argument ({args})", ...))'
    assert literal_score(code, message) == 0.8  # four of its five words in one run
    assert literal_score("extra arguments were unexpected; got none", message) == 0.0
    raised = find_literals(
        "When does a Subject throw ObjectUnsubscribedError?", ["ObjectUnsubscribedError"]
    )
    assert literal_score("if (this.closed) { throw new ObjectUnsubscribedError(); }", raised)
    assert literal_score("raise errors.ObjectUnsubscribedError('closed')", raised) == 1.0
    assert not literal_score("class ObjectUnsubscribedError extends Error {}", raised)


def test_a_raised_error_ranks_its_raiser_above_its_class(tmp_path: Path) -> None:
    with hash_searcher(tmp_path, FILES) as searcher:
        response = searcher.search("Where is UnitConversionError raised?")
    assert response.hits[0].chunk.symbol == "Unit.scale_to"
    # The question names a definition the code has: as confident as one that asks for it.
    assert response.confident, response.reason


def test_a_quoted_message_ranks_the_code_that_writes_it_first(tmp_path: Path) -> None:
    question = "Where does the 'Row ... has ... cells where the header has' error come from?"
    with hash_searcher(tmp_path, FILES) as searcher:
        hits = searcher.search(question).hits
    assert hits[0].chunk.symbol == "read_table"


def _validator(name: str, check: str, message: str) -> str:
    return f"""
def {name}(value):
    \"\"\"{message.capitalize()}.\"\"\"
    if not ({check}):
        raise SchemaError("{message}")
    return value
"""


# Found in a user's pass over marshmallow: its ValidationError is raised in 31 places; here 12.
VALIDATORS = {
    "schema/validators.py": "".join(
        _validator(name, check, message)
        for name, check, message in [
            ("positive", "value > 0", "must be positive"),
            ("short", "len(value) < 80", "must be shorter than eighty characters"),
            ("lowercase", "value == value.lower()", "must be lower case"),
            ("email", "'@' in value", "must be an email address"),
            ("nonempty", "value", "must not be empty"),
            ("ascii", "value.isascii()", "must be plain text"),
            ("even", "value % 2 == 0", "must be even"),
            ("small", "value < 1000", "must be under a thousand"),
            ("word", "value.isalpha()", "must be letters only"),
            ("title", "value.istitle()", "must be in title case"),
            ("digits", "value.isdigit()", "must be digits only"),
            ("trimmed", "value == value.strip()", "must not start or end with spaces"),
        ]
    ),
    "schema/loading.py": '''
def load(schema, data):
    """Read `data` by `schema`, collecting every error before raising them together."""
    errors = {}
    for key in data:
        if key not in schema.fields:
            if schema.unknown == "raise":
                errors[key] = "Unknown field."
            continue
        errors.update(schema.fields[key].check(data[key]))
    if errors:
        raise_all(errors)
    return data
''',
}


def test_a_line_of_output_pasted_on_its_own_is_a_message() -> None:
    # retrofit: `methodError(method, e, "Unable to create converter for %s", responseType)`.
    assert find_literals("Unable to create converter for class", []).messages
    assert find_literals('N/A: version "v99" is not yet installed.', []).messages
    # Go and Rust write messages in lower case; a colon inside the line says it is output.
    pflag = find_literals("flag needs an argument: 'n' in -n", [])
    assert pflag.pasted and pflag.values == (frozenset({"n"}),)
    code = 'return fmt.Sprintf("flag needs an argument: %q in -%s", c, e.specifiedShorthands)'
    assert literal_score(code, pflag) == 1.0  # 'n' and -n are the values it formats in
    assert not find_literals("must specify logging level", []).messages  # a keyword query?
    # Questions and requests are not output, nor are keyword queries (CoSQA's are lower case).
    for query in (
        "How does the converter get created",
        "Unable to create a converter for a class?",
        "Explain how converters are created",
        "python create converter for class",
        "Converter factories",  # too short to be a message
    ):
        assert not find_literals(query, []).messages, query


CONVERTERS = {
    "pkg/converters.py": '''
CONVERTERS = {}


def register_converter(kind, converter):
    """Register the converter that creates values of `kind` from their text."""
    CONVERTERS[kind] = converter


def create_converters():
    """Create the default converters: a converter for every built-in class."""
    for kind in (int, float, str):
        register_converter(kind, kind)


def converter_for(kind):
    """The converter registered for `kind`."""
    try:
        return CONVERTERS[kind]
    except KeyError:
        raise LookupError(f"Unable to create converter for {kind.__name__}") from None
''',
}


def test_a_bare_pasted_message_ranks_the_code_that_writes_it_first(tmp_path: Path) -> None:
    with hash_searcher(tmp_path, CONVERTERS) as searcher:
        hits = searcher.search("Unable to create converter for class").hits
    assert hits[0].chunk.symbol == "converter_for"


DOTENV = {
    "pkg/dotenv.py": '''
def load_file(path):
    """Read, parse and load the dotenv file at `path`: a file that fails to parse raises."""
    with open(path) as handle:
        return parse_file_text(handle.read())


def find_file(start):
    """The dotenv file to parse: the nearest `.env` file at or above `start`."""
    for folder in (start, *start.parents):
        if (folder / ".env").is_file():
            return folder / ".env"
    return None


def parse_file_text(text):
    """Parse the text of an environment file into its entries."""
    try:
        return [parse_entry(line) for line in text.splitlines() if line]
    except ValueError as error:
        raise RuntimeError(f"Failed to parse dotenv file. {error}") from None


def parse_entry(line):
    """One NAME=value entry of an environment file."""
    name, _, value = line.partition("=")
    if " " in name:
        raise ValueError(f"Encountered unexpected whitespace at [{name}].")
    return name, value
''',
}


def test_each_sentence_of_a_pasted_message_is_a_message() -> None:
    pasted = "Failed to parse dotenv file. Encountered unexpected whitespace at [foo bar]."
    messages = find_literals(pasted, []).messages
    assert (("failed", "to", "parse", "dotenv", "file"),) in messages
    # The whole stays a message, and one sentence is not split.
    assert len(messages) == 3
    assert len(find_literals("Failed to parse dotenv file.", []).messages) == 1


def test_a_message_written_in_two_places_finds_both_writers(tmp_path: Path) -> None:
    pasted = "Failed to parse dotenv file. Encountered unexpected whitespace at [foo bar]."
    with hash_searcher(tmp_path, DOTENV) as searcher:
        hits = searcher.search(pasted).hits
    assert {hit.chunk.symbol for hit in hits[:2]} == {"parse_file_text", "parse_entry"}


def test_an_error_raised_in_many_places_credits_each_raiser_less() -> None:
    raised = find_literals("where is SchemaError raised", ["SchemaError"])
    raiser = "raise SchemaError('no')"
    few = {str(i): raiser for i in range(COMMON_RAISERS)} | {"other": "return value"}
    assert literal_scores(few, raised) == {str(i): 1.0 for i in range(COMMON_RAISERS)}
    many = {str(i): raiser for i in range(2 * COMMON_RAISERS)}
    assert set(literal_scores(many, raised).values()) == {0.25}


def test_the_rest_of_the_question_decides_among_many_raise_sites(tmp_path: Path) -> None:
    with hash_searcher(tmp_path, VALIDATORS) as searcher:
        hits = searcher.search("where is SchemaError raised for an unknown field").hits
        assert hits[0].chunk.symbol == "load"
        # Asked without a qualifier, the raise sites still lead.
        hits = searcher.search("where is SchemaError raised").hits
        assert all("raise SchemaError" in h.chunk.text for h in hits[:5])


HONO = {
    "src/http-exception.ts": """
/**
 * `HTTPException` must be used when a fatal error such as authentication failure occurs.
 */
export class HTTPException extends Error {
  /** Creates an instance of `HTTPException`. */
  constructor(status = 500, options?: HTTPExceptionOptions) {
    super(options?.message, { cause: options?.cause })
    this.status = status
  }

  /** Returns the response object associated with the exception. */
  getResponse(): Response {
    return new Response(this.message, { status: this.status })
  }
}
""",
    "src/middleware/bearer-auth/index.ts": """
export const bearerAuth = (options: BearerAuthOptions): MiddlewareHandler => {
  return async function bearerAuth(c, next) {
    const header = c.req.header(options.headerName || 'Authorization')
    if (!header) {
      throw new HTTPException(401, { res: unauthorizedResponse(c) })
    }
    await next()
  }
}
""",
}


def test_the_code_that_throws_ranks_above_the_class_it_throws(tmp_path: Path) -> None:
    with hash_searcher(tmp_path, HONO) as searcher:
        hits = searcher.search("where is HTTPException thrown").hits
    assert hits[0].chunk.symbol == "bearerAuth"
    # The class and its methods follow; none of them throws it.
    assert {h.chunk.symbol for h in hits[1:4]} >= {"HTTPException"}


def test_a_pasted_error_lines_type_was_raised_if_the_workspace_defines_it() -> None:
    def defined(name: str) -> bool:
        return name in {"HttpStatusException", "SelectorParseException"}

    jvm = find_literals(
        "org.jsoup.HttpStatusException: HTTP error fetching URL. Status=404", [], defined
    )
    assert jvm.raised == ("HttpStatusException",)
    # The whole message, and its first sentence (`Status=404` is too short to be one).
    assert jvm.messages == (
        (("http", "error", "fetching", "url", "status"),),
        (("http", "error", "fetching", "url"),),
    )
    code = 'throw new HttpStatusException("HTTP error fetching URL", status, url);'
    assert literal_score(code, jvm) == 1.0
    nested = find_literals(
        'Exception in thread "main" org.jsoup.select.Selector$SelectorParseException: '
        "Could not parse query 'div >': unexpected token",
        [],
        defined,
    )
    assert nested.raised == ("SelectorParseException",)
    # A type the workspace does not define (a builtin) is raised in too many places.
    assert (
        find_literals("ValueError: invalid literal for int() with base 10", [], defined).raised
        == ()
    )


JSOUP = {
    "src/main/java/org/jsoup/HttpStatusException.java": """
package org.jsoup;

/**
 * Signals that a HTTP request resulted in a not OK HTTP response: the HTTP status of the URL
 * fetched, an HTTP error status such as 404 or 500, and the URL fetching it.
 */
public class HttpStatusException extends java.io.IOException {
    private final int statusCode;
    private final String url;

    public HttpStatusException(String message, int statusCode, String url) {
        super(message + ". Status=" + statusCode + ", URL=[" + url + "]");
        this.statusCode = statusCode;
        this.url = url;
    }

    public int getStatusCode() { return statusCode; }

    public String getUrl() { return url; }
}
""",
    "src/main/java/org/jsoup/helper/HttpConnection.java": """
package org.jsoup.helper;

public class HttpConnection {
    static Response execute(Request req) throws IOException {
        Response res = new Response(req);
        int status = res.statusCode;
        if (status < 200 || status >= 400) {
            if (!req.ignoreHttpErrors())
                throw new HttpStatusException("HTTP error fetching URL", status, req.url());
        }
        return res;
    }

    public Connection url(String url) {
        req.url(new URL(url));
        return this;
    }

    /** Fetching a URL: the HTTP status and URL of an error are in the response. */
    public Connection ignoreHttpErrors(boolean ignoreHttpErrors) {
        req.ignoreHttpErrors(ignoreHttpErrors);
        return this;
    }

    /** The URL to fetch, and the HTTP error status to expect when fetching it fails. */
    public Connection.Response response() {
        return res;
    }
}
""",
}


def test_a_pasted_error_line_finds_the_code_that_throws_it(tmp_path: Path) -> None:
    with hash_searcher(tmp_path, JSOUP) as searcher:
        hits = searcher.search(
            "org.jsoup.HttpStatusException: HTTP error fetching URL. Status=404"
        ).hits
    assert hits[0].chunk.symbol == "HttpConnection.execute"


def test_a_python_tracebacks_exception_line_is_an_error_line_whatever_its_name() -> None:
    traceback = (
        "Traceback (most recent call last):\n"
        '  File "app.py", line 3, in <module>\n'
        "    requests.get('http://')\n"
        "requests.exceptions.InvalidURL: Invalid URL http: No host supplied\n"
        "\n"
        "Note: this happens every time I run it\n"
    )
    literals = find_literals(traceback, [], lambda name: name in {"InvalidURL", "Note"})
    assert literals.raised == ("InvalidURL",)  # "Note:" follows no frame: prose
    assert literals.messages[0] == (("invalid", "url", "http", "no", "host", "supplied"),)
    assert literals.messages[1] == (("no", "host", "supplied"),)  # after the wrapping colon


def test_a_runtime_value_in_the_middle_of_a_message_splits_it_into_runs() -> None:
    # httpx formats the component and the character into its message; the user's copy holds
    # "path" and "'\n'" where the code has `{key}` and `{char!r}`.
    pasted = find_literals(
        "ValueError: Invalid non-printable ASCII character in URL path component, "
        "'\\n' at position 4.",
        [],
    )
    code = (
        'error = (f"Invalid non-printable ASCII character in URL {key} component, "\n'
        '         f"{char!r} at position {idx}.")'
    )
    # 7 + 2 of its 11 written words in two runs: the quoted '\n' is a value the code formats.
    assert literal_score(code, pasted) == 9 / 11
    # Single words scattered over a chunk are no run, and runs count in the message's order.
    assert literal_score("path component position invalid url", pasted) == 0.0
    reversed_code = (
        'f"{char!r} at position {idx}: Invalid non-printable ASCII character in URL {key}"'
    )
    # In the other order only the longest run counts: 7 of 11 words, a long run (less than
    # the 9 the code in order holds).
    assert literal_score(reversed_code, pasted) == 7 / 11


def test_a_runtime_value_at_the_start_leaves_a_long_run_that_counts() -> None:
    """moshi formats the platform class into the front of its message: the user's copy holds
    6 of its 11 words in one run, under `MIN_RUN_SHARE` but a run of `LONG_RUN_WORDS`."""
    pasted = find_literals(
        "Platform class java.util.Date requires explicit JsonAdapter to be registered", []
    )
    code = 'throw Error("$messagePrefix requires explicit JsonAdapter to be registered")'
    # The qualified class name is a value the code formats in (not held): 6 of the other 8.
    assert message_share(code, pasted) == 6 / 8
    # Read as a format string (`formats.py`), `$messagePrefix` stands for the value's first
    # three words (`formats.MAX_VALUE_WORDS`): 9 of the 11.
    assert literal_score(code, pasted) == 9 / 11
    # Short runs of common words stay under the bar however the share adds up.
    assert literal_score("requires explicit; registered to be the JsonAdapter", pasted) == 0.0
    assert literal_score("Platform class: JsonAdapter to be", pasted) == 0.0


def test_error_lines_with_jvm_separators_and_hostile_text() -> None:
    nested = find_literals("a.b.Outer$InnerError: the inner class failed to start", [], bool)
    assert nested.raised == ("InnerError",)
    # Identifiers joined by `$` (the separator once matched inside names as well, and each
    # `$` could go either way: 2^n ways to fail) and a wall of blank lines read as nothing.
    assert not find_literals("a$" * 5000 + "b: x", [], bool)
    assert not find_literals("\n" * 100_000 + "x", [], bool)


READER = {
    "src/main/kotlin/json/Utf8Reader.kt": """
package json

internal class Utf8Reader(private val source: Source) : JsonReader() {
  override fun beginObject() {
    val p = peeked ?: doPeek()
    if (p == PEEKED_BEGIN_OBJECT) {
      pushScope(JsonScope.EMPTY_OBJECT)
      peeked = PEEKED_NONE
    } else {
      throw JsonDataException("Expected BEGIN_OBJECT but was ${peek()} at path $path")
    }
  }

  override fun nextString(): String {
    val p = peeked ?: doPeek()
    return when (p) {
      PEEKED_UNQUOTED -> nextUnquotedValue()
      PEEKED_DOUBLE_QUOTED -> nextQuotedValue(DOUBLE_QUOTE_OR_SLASH)
      else -> throw JsonDataException("Expected a string but was ${peek()} at path $path")
    }
  }
}
""",
    "src/main/kotlin/json/ValueReader.kt": """
package json

/** Reads a tree of values: a BEGIN_OBJECT token is a map, a BEGIN_ARRAY token a list. */
internal class ValueReader(root: Any?) : JsonReader() {
  override fun beginObject() {
    val peeked = require<Map<*, *>>(stack.last(), Token.BEGIN_OBJECT)
    stack.add(peeked.entries.iterator())
  }

  override fun beginArray() {
    val peeked = require<List<*>>(stack.last(), Token.BEGIN_ARRAY)
    stack.add(peeked.iterator())
  }
}
""",
}


def test_a_pasted_message_the_first_result_writes_is_confident(tmp_path: Path) -> None:
    """The words of `Expected BEGIN_OBJECT but was STRING at path $` say little to an
    embedder or to BM25 (half of them are everywhere); the code writing it is the source."""
    chunks = {
        c.symbol: c for path, text in READER.items() for c in chunk_source(path, text.lstrip())
    }
    holder, decoy = chunks["Utf8Reader.beginObject"], chunks["ValueReader.beginObject"]
    query = "Expected BEGIN_OBJECT but was STRING at path $"
    # As on moshi: BM25's best holds 3 of the 6 terms and the cosine is under the floor.
    bm25, dense = [(decoy, 9.0), (holder, 8.0)], [(holder, 0.37)]
    verdict = code_verdict(query, bm25, dense, [holder], floor=0.38, named_exists=False)
    assert not verdict.confident and "3 of 6" in verdict.reason
    verdict = code_verdict(
        query, bm25, dense, [holder], floor=0.38, named_exists=False, held_first=True
    )
    assert verdict.confident
    # End to end, the searcher tells the verdict the first result holds the message.
    with hash_searcher(tmp_path, READER) as searcher:
        response = searcher.search("Expected BEGIN_OBJECT but was STRING at path $", top_k=3)
        assert response.hits[0].chunk.symbol == "Utf8Reader.beginObject"
        assert response.confident, response.reason
        # A message no chunk writes stays unconfident, whatever its words match.
        response = searcher.search(
            "Expected an end of input but was a colon in the header", top_k=3
        )
        assert not response.confident


# An error class's named constructors write the messages it is raised with (thephpleague/csv,
# not an evaluation set): the class is said to be raised, yet its constructor holding the
# pasted message is where the message comes from.
NAMED_CONSTRUCTORS = {
    "src/SyntaxError.php": """<?php

namespace Acme\\\\Csv;

class SyntaxError extends Exception
{
    public static function dueToHeaderNotFound(int $offset): self
    {
        return new self('The header record does not exist or is empty at offset: `'.$offset.'`');
    }

    public static function dueToDuplicateHeaderColumnNames(array $names): self
    {
        return new self('The header record contains duplicate column names.');
    }
}
""",
    "src/Reader.php": """<?php

namespace Acme\\\\Csv;

class Reader
{
    protected function setHeader(int $offset): array
    {
        $header = $this->seekRow($offset);
        if ([] === $header || [null] === $header) {
            throw SyntaxError::dueToHeaderNotFound($offset);
        }

        return $header;
    }
}
""",
}


def test_an_error_class_constructor_writing_the_pasted_message_leads(tmp_path: Path) -> None:
    pasted = "Acme\\Csv\\SyntaxError: The header record does not exist or is empty at offset: `0`"
    with hash_searcher(tmp_path, NAMED_CONSTRUCTORS) as searcher:
        hits = searcher.search(pasted, top_k=3).hits
    assert hits[0].chunk.symbol == "SyntaxError.dueToHeaderNotFound"


def test_a_runtime_report_with_the_message_on_its_second_line_is_pasted_output() -> None:
    # libstdc++'s uncaught exception: the type was raised, the message follows `what():`.
    cpp = find_literals(
        "terminate called after throwing an instance of 'YAML::ParserException'\n"
        "  what():  yaml-cpp: error at line 7, column 12: the referenced anchor is not defined: x",
        [],
        lambda name: name == "ParserException",
    )
    assert cpp.pasted and cpp.raised == ("ParserException",)
    assert "the referenced anchor is not defined: x" in cpp.texts
    # Rust's panic since 1.73: the location line, then the message.
    rust = find_literals(
        "thread 'main' panicked at src/style.rs:168:9:\nat least 2 progress chars required", []
    )
    assert rust.pasted and rust.texts == ("at least 2 progress chars required",)
    assert literal_score('panic!("at least 2 progress chars required");', rust) == 1.0
