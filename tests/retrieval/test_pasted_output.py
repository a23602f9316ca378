"""Shapes of pasted program output (`literals.py`, `bound.py`): Node's coded error lines,
errors wrapped in context, numbers run into units, long lines and printed reprs, and messages
bound to a name in a multi-line call; alone and through the real pipeline (real SQLite FTS5,
hnswlib, the `hash` embedder). Each shape comes from a user's pass over repositories that are
no evaluation set (fastify, BurntSushi/toml, p-queue, attrs, go-playground/validator)."""

from __future__ import annotations

from pathlib import Path

from codeqa_lsp.chunking.model import Chunk, ChunkKind
from codeqa_lsp.retrieval.bound import bound_names, with_bound_users
from codeqa_lsp.retrieval.literals import Literals, find_literals, literal_scores, words
from tests.retrieval.searchers import hash_searcher


def literal_score(text: str, literals: Literals) -> float:
    return literal_scores({"chunk": text}, literals).get("chunk", 0.0)


def test_a_node_error_lines_code_in_brackets_is_not_part_of_the_message() -> None:
    literals = find_literals(
        "FastifyError [FST_ERR_BAD_STATUS_CODE]: Called reply with an invalid status code: 999", []
    )
    assert literals.messages[0] == (("called", "reply", "with", "an", "invalid", "status", "code"),)
    node = find_literals("TypeError [ERR_INVALID_URL]: Invalid URL: http//example", [])
    assert node.messages[0] == (("invalid", "url", "http", "example"),)


def test_each_part_after_a_wrapping_colon_is_a_message() -> None:
    pasted = 'toml: line 4 (last key "port"): Invalid integer "08080": cannot have leading zeroes'
    literals = find_literals(pasted, [])
    assert (("invalid", "integer", "cannot", "have", "leading", "zeroes"),) in literals.messages
    writer = 'p.panicItemf(it, "Invalid integer %q: cannot have leading zeroes", it.val)'
    assert literal_score(writer, literals) == 1.0
    # The whole line held two thirds of its words here: no evidence without the parts.
    whole = find_literals(pasted, []).messages[0]
    assert (
        literal_score(writer, Literals(messages=(whole,), raised=(), values=(frozenset(),))) == 0.0
    )
    # A colon inside a word or before no space splits nothing.
    quoted = find_literals('where does "reading config: a:b is not valid" come from?', [])
    assert len(quoted.messages) == 2


def test_a_number_run_into_its_unit_leaves_the_unit_in_the_message() -> None:
    literals = find_literals(
        "TimeoutError: Task timed out after 5000ms (queue has 2 running, 10 waiting)", []
    )
    assert literals.messages[0][0][:5] == ("task", "timed", "out", "after", "ms")
    template = (
        "message: `Task timed out after ${options.timeout}ms (queue has ${this.#pending}"
        " running, ${this.#queue.size} waiting)`,"
    )
    assert literal_score(template, literals) >= 0.75
    assert words("utf8 sha256 base64 10px") == ["utf8", "sha256", "base64", "10", "px"]


def test_a_long_error_line_is_a_message_without_the_reprs_it_prints() -> None:
    value = ", ".join(f"field_{i}={i}" for i in range(40))
    pasted = (
        "ValueError: No mandatory attributes allowed after an attribute with a default value. "
        f"Attribute in question: Attribute(name='y', metadata=mappingproxy({{}}), {value})"
    )
    assert len(pasted) > 400
    literals = find_literals(pasted, [])
    assert literals.messages, "a line over 300 characters is still output"
    assert all("field" not in fragment for message in literals.messages for fragment in message)
    assert not any("mappingproxy" in f for m in literals.messages for f in m)


def test_a_message_in_a_call_spanning_lines_is_bound_to_the_calls_name() -> None:
    literals = find_literals("Called reply with an invalid status code: 999", [])
    table = """const codes = {
  FST_ERR_BAD_STATUS_CODE: createError(
    'FST_ERR_BAD_STATUS_CODE',
    'Called reply with an invalid status code: %s'
  ),
}"""
    assert bound_names(table, literals) == ["FST_ERR_BAD_STATUS_CODE"]
    # A previous entry's closing line is no argument: the search stops there.
    unbound = (
        "  FST_ERR_OTHER: createError('FST_ERR_OTHER', 'x'),\n"
        "  'Called reply with an invalid status code: %s'\n"
    )
    assert bound_names(unbound, literals) == []


FASTIFY = {
    "lib/errors.js": """'use strict'

const createError = require('./create-error')

const codes = {
  FST_ERR_NOT_FOUND: createError(
    'FST_ERR_NOT_FOUND',
    'Not Found',
    404
  ),
  FST_ERR_BAD_STATUS_CODE: createError(
    'FST_ERR_BAD_STATUS_CODE',
    'Called reply with an invalid status code: %s'
  )
}

module.exports = codes
""",
    "lib/reply.js": """'use strict'

const {
  FST_ERR_BAD_STATUS_CODE,
  FST_ERR_NOT_FOUND
} = require('./errors')

function Reply (res, request) {
  this.raw = res
  this.request = request
}

Reply.prototype.code = function (code) {
  const intValue = Number(code)
  if (isNaN(intValue) || intValue < 100 || intValue > 599) {
    throw new FST_ERR_BAD_STATUS_CODE(code || String(code))
  }
  this.raw.statusCode = intValue
  return this
}

Reply.prototype.header = function (key, value) {
  this.raw.setHeader(key, value)
  return this
}

module.exports = Reply
""",
    "types/errors.d.ts": """export type FastifyErrorCodes = Record<
  'FST_ERR_NOT_FOUND' |
  'FST_ERR_BAD_STATUS_CODE',
  FastifyErrorConstructor
>
""",
}


def test_a_coded_node_error_finds_the_function_throwing_it(tmp_path: Path) -> None:
    """The message is written in errors.js's table inside `createError(...)` spanning three
    lines; reply.js's module chunk only imports the code and the `.d.ts` only declares it."""
    pasted = "FastifyError [FST_ERR_BAD_STATUS_CODE]: Called reply with an invalid status code: 999"
    with hash_searcher(tmp_path, FASTIFY) as searcher:
        hits = searcher.search(pasted, top_k=5).hits
    assert hits[0].chunk.symbol == "Reply.prototype.code"


ATTRS = {
    "src/make.py": '''
class Attribute:
    """One attribute of a class: its name, default, validator, repr, eq and order settings."""

    def __init__(self, name, default, validator, repr, eq, order, hash, init, metadata):
        self.name = name
        self.default = default
        self.validator = validator

    def __repr__(self):
        return (
            f"Attribute(name={self.name!r}, default={self.default!r}, validator="
            f"{self.validator!r}, repr=True, eq=True, order=True, hash=None, init=True)"
        )


def attrib(
    default=None, validator=None, repr=True, eq=True, eq_key=None, order=True, order_key=None,
    hash=None, init=True, metadata=None, type=None, converter=None, kw_only=False,
):
    """Define an attribute: its default, validator, repr, eq, order, hash, init, metadata,
    type, converter and kw_only settings."""
    return Attribute(None, default, validator, repr, eq, order, hash, init, metadata)


def transform_attrs(cls, these):
    """Collect the attributes of a class in definition order."""
    attrs = list(these)
    had_default = False
    for a in attrs:
        if had_default and a.default is None:
            msg = (
                "No mandatory attributes allowed after an attribute with a default value"
                f" or factory.  Attribute in question: {a!r}"
            )
            raise ValueError(msg)
        had_default = a.default is not None
    return attrs
''',
}


def test_a_long_pasted_error_line_finds_the_code_raising_it(tmp_path: Path) -> None:
    """Over LONG_QUERY_TERMS terms with its repr, the line was read as a pasted issue, whose
    literals count for nothing; and the repr's words were the `__repr__`'s."""
    pasted = (
        "ValueError: No mandatory attributes allowed after an attribute with a default value or"
        " factory.  Attribute in question: Attribute(name='y', default=NOTHING, validator=None,"
        " repr=True, eq=True, eq_key=None, order=True, order_key=None, hash=None, init=True,"
        " metadata=mappingproxy({}), type=<class 'int'>, converter=None, kw_only=False)"
    )
    with hash_searcher(tmp_path, ATTRS) as searcher:
        hits = searcher.search(pasted, top_k=3).hits
    assert hits[0].chunk.symbol == "transform_attrs"


VALIDATOR = {
    "errors.go": """package validator

import "fmt"

const fieldErrMsg = "Key: '%s' Error:Field validation for '%s' failed on the '%s' tag"

type fieldError struct {
	ns    string
	field string
	tag   string
}

// Error returns the fieldError's error message.
func (fe *fieldError) Error() string {
	return fmt.Sprintf(fieldErrMsg, fe.ns, fe.field, fe.tag)
}
""",
    "validator_test.go": """package validator

import "testing"

func TestStructErrors(t *testing.T) {
	err := validate.Struct(user)
	want := "Key: 'User.Email' Error:Field validation for 'Email' failed on the 'email' tag"
	if err.Error() != want {
		t.Fatalf("got %s", err.Error())
	}
}

func TestMapErrors(t *testing.T) {
	err := validate.Var(m, "email")
	want := "Key: 'User.Email' Error:Field validation for 'Email' failed on the 'email' tag"
	if err.Error() != want {
		t.Fatalf("got %s", err.Error())
	}
}
""",
}


def test_tests_asserting_a_message_rank_below_the_code_writing_it(tmp_path: Path) -> None:
    pasted = "Key: 'User.Email' Error:Field validation for 'Email' failed on the 'email' tag"
    with hash_searcher(tmp_path, VALIDATOR) as searcher:
        hits = searcher.search(pasted, top_k=3).hits
        assert hits[0].chunk.symbol == "fieldError.Error"
        # Asked for the tests, the tests that hold the message lead.
        asked = searcher.search(f"which test checks {pasted}", top_k=3).hits
    assert asked[0].chunk.path == "validator_test.go"


def _chunk(path: str, symbol: str, text: str, declaration: bool = False) -> Chunk:
    kind: ChunkKind = "module" if symbol == "<module>" else "function"
    lines = text.count("\n") + 1
    return Chunk(
        path, symbol, kind, "javascript", 1, lines, 0, len(text), text, declaration=declaration
    )


def test_importing_or_declaring_a_bound_name_is_not_using_it() -> None:
    """reply.js's module chunk imports the code and a `.d.ts` declares it: neither raises it,
    and as uses they took the credit of the function that throws it (the module ranked first)."""
    literals = find_literals("Called reply with an invalid status code: 999", [])
    binding = _chunk("lib/errors.js", "<module>", FASTIFY["lib/errors.js"])
    reply = FASTIFY["lib/reply.js"]
    module = _chunk("lib/reply.js", "<module>", reply.split("function Reply")[0])
    code = _chunk("lib/reply.js", "Reply.prototype.code", reply.split("Reply.prototype.code = ")[1])
    declared = _chunk("types/errors.d.ts", "FastifyErrorCodes", FASTIFY["types/errors.d.ts"], True)
    users = [module, code, declared]
    found = with_bound_users(
        [(binding, 1.0)],
        {binding.id: 1.0},
        literals,
        lambda terms, limit: [(c, 1.0) for c in users],
    )
    assert found.links == {binding.id: [code.id]}
    assert found.credit[code.id] == 1.0


FARADAY = {
    "lib/faraday/middleware_registry.rb": """module Faraday
  # Adds the ability for other modules to register and look up middleware classes by key.
  module MiddlewareRegistry
    def register_middleware(**mappings)
      middleware_mutex { registered_middleware.update(mappings) }
    end

    def lookup_middleware(key)
      load_middleware(key) ||
        raise(Faraday::Error, "#{key.inspect} is not registered on #{self}")
    end
  end
end
""",
    "lib/faraday/request.rb": """module Faraday
  # Used to setup URLs, params, headers, and the request body in a sane manner.
  class Request
    extend MiddlewareRegistry

    # Replace params, preserving the existing hash type.
    def params=(hash)
      @params = hash
    end

    # Replace request headers, preserving the existing hash type.
    def headers=(hash)
      @headers = hash
    end
  end
end
""",
}


def test_ruby_symbols_and_qualified_names_in_output_are_runtime_values(tmp_path: Path) -> None:
    """faraday (user pass): `:multipart` and `Faraday::Request` are what `#{key.inspect}` and
    `#{self}` printed; the class named in the line is no definition the user asks about."""
    pasted = "Faraday::Error: :multipart is not registered on Faraday::Request"
    literals = find_literals(pasted, [])
    assert literals.values[0] == frozenset({"multipart", "faraday", "request"})
    raising = 'raise(Faraday::Error, "#{key.inspect} is not registered on #{self}")'
    assert literal_score(raising, literals) >= 0.75  # four of seven words before
    assert literals.prints("Request") and not literals.prints("MiddlewareRegistry")
    with hash_searcher(tmp_path, FARADAY) as searcher:
        hits = searcher.search(pasted, top_k=3).hits
    assert hits[0].chunk.symbol == "Faraday.MiddlewareRegistry.lookup_middleware"


def test_a_lower_case_line_opening_like_an_error_is_output() -> None:
    """chrono (user pass): the context before the colon is the caller's, the cause after it
    `ParseError.fmt`'s; no value is printed, but the line opens as errors do."""
    literals = find_literals("failed to parse timestamp: input is not enough for unique date", [])
    assert literals.pasted
    assert (("input", "is", "not", "enough", "for", "unique", "date"),) in literals.messages
    # Prose with a colon is still a question, as is a question opening with an error word.
    assert not find_literals("the error: handling of retries is odd", []).messages
    assert not find_literals("invalid input: how is it reported?", []).messages


ENV_FILTER = {
    "src/parser.rs": """
/// Parses a logging spec such as `app=debug/regex`.
pub(crate) fn parse_spec(spec: &str) -> ParseResult {
    let mut result = ParseResult::default();
    let mut parts = spec.split('/');
    let mods = parts.next();
    let filter = parts.next();
    if parts.next().is_some() {
        result.add_error(format!("invalid logging spec '{spec}' (too many '/'s)"));
        return result;
    }
    if let Some(m) = mods {
        for s in m.split(',').map(|ss| ss.trim()) {
            if s.is_empty() {
                continue;
            }
            let mut parts = s.split('=');
            let (log_level, name) =
                match (parts.next(), parts.next().map(|s| s.trim()), parts.next()) {
                    (Some(part0), None, None) => match part0.parse() {
                        Ok(num) => (num, None),
                        Err(_) => (LevelFilter::max(), Some(part0)),
                    },
                    (Some(part0), Some(""), None) => (LevelFilter::max(), Some(part0)),
                    (Some(part0), Some(part1), None) => match part1.parse() {
                        Ok(num) => (num, Some(part0)),
                        _ => {
                            result.add_error(format!("invalid logging spec '{part1}'"));
                            continue;
                        }
                    },
                    _ => {
                        result.add_error(format!("invalid logging spec '{s}'"));
                        continue;
                    }
                };
            result.add_directive(Directive { name: name.map(|s| s.to_owned()), level: log_level });
        }
    }
    if let Some(filter) = filter {
        match FilterOp::new(filter) {
            Ok(filter_op) => result.set_filter(filter_op),
            Err(err) => result.add_error(format!("invalid regex filter - {err}")),
        }
    }
    result
}

#[cfg(test)]
mod tests {
    use super::parse_spec;

    #[test]
    fn parse_spec_with_multiple_filters() {
        let result = parse_spec("debug/abc/a.c");
        assert_eq!(result.errors[0], "invalid logging spec 'debug/abc/a.c' (too many '/'s)");
    }

    #[test]
    fn parse_spec_with_too_many_slashes() {
        let result = parse_spec("info/x/y");
        assert_eq!(result.errors[0], "invalid logging spec 'info/x/y' (too many '/'s)");
    }
}
""",
}


def test_the_words_of_a_pasted_message_do_not_ask_for_tests(tmp_path: Path) -> None:
    """A message that says "spec" is output, not a question about specs: the tests asserting
    it stay below the function writing it (env_logger; user pass, not an evaluation set)."""
    pasted = "warning: invalid logging spec 'app=debug/foo/bar' (too many '/'s), ignoring it"
    with hash_searcher(tmp_path, ENV_FILTER) as searcher:
        hits = searcher.search(pasted, top_k=3).hits
    assert hits[0].chunk.symbol == "parse_spec"
