"""Questions about where a definition is used (`uses.py`), through the real pipeline (real
SQLite FTS5, hnswlib, the `hash` embedder): the code that uses the named definition follows
it, in a language with a reference query (Python) and one without (Go)."""

from __future__ import annotations

from pathlib import Path

import pytest

from codeqa_lsp.chunking.model import Chunk
from codeqa_lsp.retrieval.query import analyze
from codeqa_lsp.retrieval.uses import (
    asks_for_uses,
    overrides_used_first,
    use_lines,
    uses_of,
    with_subject,
)
from tests.chunks import chunk_of
from tests.retrieval.searchers import hash_searcher

FILES = {
    "pkg/sessions.py": '''
class RedirectMixin:
    def resolve_redirects(self, resp, request):
        """Follow Location headers until the server stops redirecting."""
        while resp.is_redirect:
            prepared = request.copy()
            self.rebuild_auth(prepared, resp)
            resp = self.send(prepared)
        return resp

    def rebuild_auth(self, prepared, response):
        """Strip the Authorization header when a redirect leaves the original host."""
        if "Authorization" in prepared.headers:
            del prepared.headers["Authorization"]

    def rebuild_proxies(self, prepared, proxies):
        """Rebuild the proxy configuration for a redirected request (auth is separate)."""
        return dict(proxies)


def describe_auth():
    # rebuild_auth is documented in the guide; this comment is not a use.
    return "rebuild_auth strips credentials"  # nor is this string
''',
    "pkg/digest.py": '''
class DigestAuth:
    def rebuild_auth(self, prepared, response):
        """Digest auth re-computes its header for every hop: same name, not a use."""
        prepared.headers["Authorization"] = self.build_digest(response)

    def handle_401(self, response, prepared):
        """Retry once with a digest challenge answered."""
        self.rebuild_auth(prepared, response)
        return response
''',
    "pkg/text.py": '''
def normalize(value):
    """Lower-case and strip a header value."""
    return value.strip().lower()


def header_items(headers):
    """Every header as a normalized pair."""
    return [(key, normalize(value)) for key, value in headers.items()]


def normalise_spelling(words):
    """Normalize British spellings to normalized American ones (normalize is not called)."""
    return [w.replace("ise", "ize") for w in words]
''',
    "cmd/command.go": """
package cmd

// checkGroups verifies that every child's group exists. Run it before Execute.
func (c *Command) checkGroups() {
	for _, sub := range c.commands {
		c.hasGroup(sub.GroupID)
	}
}

// ExecuteC runs the command tree; checkGroups() is called first.
func (c *Command) ExecuteC() error {
	c.checkGroups()
	return c.execute()
}

// validateGroups is checkGroups' twin: where checkGroups checks that groups exist,
// validateGroups checks their titles. It does not call checkGroups.
func (c *Command) validateGroups() bool {
	return len(c.groups) > 0
}
""",
}


@pytest.mark.parametrize(
    "question",
    [
        "who calls rebuild_auth?",
        "Where is `merge_setting` called?",
        "which functions call parse_args",
        "find the callers of Session.send",
        "usages of ServiceRegistrar",
        "where does checkGroups get used",
    ],
)
def test_questions_about_uses_are_recognised(question: str) -> None:
    assert asks_for_uses(question)


@pytest.mark.parametrize(
    "question",
    [
        "what does rebuild_auth do?",
        "what happens when rebuild_auth is called with no headers?",
        "how is the Authorization header removed on redirect?",
        # Seen in the evaluation questions: "usage" and "caller" in other senses.
        "How does UsageError.show print the usage line before the error message?",
        "how can a caller remove one inherited header for just that call?",
        "why does the exception surface later on a timer instead of at the call site?",
    ],
)
def test_questions_about_behaviour_are_not_about_uses(question: str) -> None:
    assert not asks_for_uses(question)


@pytest.mark.parametrize(
    ("question", "subject"),
    [
        ("who calls getpreferredencoding?", "getpreferredencoding"),
        ("where is linenoise used", "linenoise"),
        ("where is `normalize()` called from", "normalize"),
        ("what calls the dispatcher", "dispatcher"),
        ("who calls rebuild_auth", "rebuild_auth"),  # already an identifier
        ("who calls route!", "route!"),  # Ruby: the bang is part of the name
        ("who calls parse?", "parse"),  # a question mark ends the question
    ],
)
def test_the_subject_of_a_question_about_uses(question: str, subject: str) -> None:
    assert with_subject(analyze(question)).identifiers[0] == subject


def _ranked(searcher: object, question: str) -> list[str]:
    response = searcher.search(question, top_k=6)  # type: ignore[attr-defined]
    return [f"{hit.chunk.path}:{hit.chunk.symbol}" for hit in response.hits]


def test_the_callers_of_a_named_method_follow_its_definition(tmp_path: Path) -> None:
    with hash_searcher(tmp_path, FILES) as searcher:
        ranked = _ranked(searcher, "who calls rebuild_auth?")
        # The definitions named first, then the code that calls the name.
        assert set(ranked[:2]) == {
            "pkg/sessions.py:RedirectMixin.rebuild_auth",
            "pkg/digest.py:DigestAuth.rebuild_auth",
        }
        assert set(ranked[2:4]) == {
            "pkg/sessions.py:RedirectMixin.resolve_redirects",
            "pkg/digest.py:DigestAuth.handle_401",
        }
        # Each use says where it calls: the line of the call, not the caller's first line.
        hits = {
            f"{h.chunk.path}:{h.chunk.symbol}": h
            for h in searcher.search("who calls rebuild_auth?").hits
        }
        for caller, path in (
            ("pkg/sessions.py:RedirectMixin.resolve_redirects", "pkg/sessions.py"),
            ("pkg/digest.py:DigestAuth.handle_401", "pkg/digest.py"),
        ):
            lines = FILES[path].lstrip().splitlines()
            call = next(n for n, line in enumerate(lines, 1) if "self.rebuild_auth(" in line)
            assert hits[caller].use_lines == (call,)
        assert hits["pkg/sessions.py:RedirectMixin.rebuild_auth"].use_lines == ()
        # Mentions in a comment or a string, and the class listing the signature, are not uses.
        assert "pkg/sessions.py:describe_auth" not in ranked[:4]
        assert "pkg/sessions.py:RedirectMixin" not in ranked[:4]
        # Without the question about uses, the callers are not lifted.
        plain = _ranked(searcher, "what does rebuild_auth do?")
        assert "pkg/sessions.py:RedirectMixin.resolve_redirects" not in plain[:2]
        scores = [hit.score for hit in searcher.search("who calls rebuild_auth?").hits]
        assert scores == sorted(scores, reverse=True)


@pytest.mark.parametrize(
    ("question", "head", "competitor"),
    [
        # A plain lowercase name is the subject; the docstring that says "normalize" twice
        # (BM25's second without the question about uses) is not a use.
        (
            "who calls normalize?",
            ["pkg/text.py:normalize", "pkg/text.py:header_items"],
            "pkg/text.py:normalise_spelling",
        ),
        # `DigestAuth.rebuild_auth` shares the name: its own caller is not a use of
        # `RedirectMixin.rebuild_auth`. By name alone the two cannot be told apart, so only
        # uses in the named definition's file or naming its class are kept.
        (
            "who calls RedirectMixin.rebuild_auth?",
            [
                "pkg/sessions.py:RedirectMixin.rebuild_auth",
                "pkg/sessions.py:RedirectMixin.resolve_redirects",
            ],
            "pkg/digest.py:DigestAuth.handle_401",
        ),
        # Go has no reference query: the calls are read from the code. validateGroups' doc
        # comment names checkGroups three times (BM25's second otherwise).
        (
            "where is checkGroups called",
            ["cmd/command.go:Command.checkGroups", "cmd/command.go:Command.ExecuteC"],
            "cmd/command.go:Command.validateGroups",
        ),
    ],
)
def test_the_uses_of_the_named_definition_follow_it(
    tmp_path: Path, question: str, head: list[str], competitor: str
) -> None:
    with hash_searcher(tmp_path, FILES) as searcher:
        ranked = _ranked(searcher, question)
        assert ranked[: len(head)] == head
        assert competitor in ranked[len(head) :]  # a real competitor, ranked below the uses


def test_a_follow_up_asks_for_the_uses_of_its_subject_not_of_every_cited_symbol(
    tmp_path: Path,
) -> None:
    # What `conversation.retrieval_query` searches for "and where is it called from?" after
    # "what does rebuild_auth do?": the previous question and the symbols its answer cited.
    query = "and where is it called from? what does rebuild_auth do? RedirectMixin DigestAuth"
    with hash_searcher(tmp_path, FILES) as searcher:
        ranked = _ranked(searcher, query)
        assert set(ranked[2:4]) == {
            "pkg/sessions.py:RedirectMixin.resolve_redirects",
            "pkg/digest.py:DigestAuth.handle_401",
        }


def _overridden_method_files(tests: int) -> dict[str, str]:
    """A marshmallow-shaped tree: `_deserialize` overridden by eight field classes (more
    than the fast path names), called by `Field.deserialize` and `Schema.load`; a test that
    overrides it in a custom field; a guide quoting it; `tests` test functions whose names
    share its stemmed term (`deserialization`), each denser in it than the callers."""
    fields = "\n".join(
        f"class {kind}(Field):\n"
        f"    def _deserialize(self, value):\n"
        f"        return {kind.lower()}_from(value)\n"
        for kind in ("String", "Integer", "Float", "Boolean", "Date", "Time", "Url", "Email")
    )
    deserialization_tests = "\n".join(
        f"def test_deserialization_{n}():\n"
        f'    """Deserialization {n}: deserialized deserialization."""\n'
        f"    assert deserialization_case({n}) is not None\n"
        for n in range(tests)
    )
    return {
        "pkg/fields.py": f'''
class Field:
    def _deserialize(self, value):
        raise NotImplementedError

    def deserialize(self, value):
        """Validate the input, then convert it; a missing value skips the conversion and
        returns the default declared on the field, which the schema reports as loaded."""
        if value is None:
            return self.default
        self._validate_missing(value)
        return self._deserialize(value)


{fields}''',
        "pkg/schema.py": '''
class Schema:
    def load(self, data):
        """Every declared field reads its key from the input mapping; errors are collected
        per key and raised together once every field has been read."""
        result, errors = {}, {}
        for name, field in self.fields.items():
            try:
                result[name] = field._deserialize(data[name])
            except KeyError as error:
                errors[name] = str(error)
        if errors:
            raise ValidationError(errors)
        return result
''',
        "tests/test_custom.py": """
def test_custom_field():
    class Upper(Field):
        def _deserialize(self, value):
            return value.upper()

    assert Upper().deserialize("a") == "A"
""",
        "docs/custom_fields.md": (
            "# Custom fields\n\nOverride `_deserialize` to convert input:\n\n"
            "```python\ndef _deserialize(self, value):\n    return value\n```\n"
        ),
        "tests/test_cases.py": deserialization_tests,
    }


def test_the_callers_of_an_overridden_method_lead(tmp_path: Path) -> None:
    # 240 tests outrank the callers on the shared term: the callers lie past the first 200
    # candidates the name's term returns (`DEEP_USE_CANDIDATES`).
    with hash_searcher(tmp_path, _overridden_method_files(tests=240)) as searcher:
        ranked = _ranked(searcher, "who calls _deserialize?")
        assert set(ranked[:2]) == {"pkg/fields.py:Field.deserialize", "pkg/schema.py:Schema.load"}
        # Overriding the method in a test is not calling it; a guide quoting it is not code.
        named = [c for c in searcher.indexer.definitions("_deserialize") if c.part == 0]
        assert len(named) == 10  # the base, eight fields, the test's own field
        found = uses_of(named, searcher.indexer.bm25_terms, skip={c.id for c in named})
        assert {use.chunk.symbol for use in found} == {"Field.deserialize", "Schema.load"}
        plain = _ranked(searcher, "what does _deserialize do?")
        assert "pkg/schema.py:Schema.load" not in plain[:2]


WALK_RS = """
impl DirEntry {
    pub fn from_path(depth: usize, path: PathBuf) -> Result<DirEntry> {
        let md = fs::metadata(&path).map_err(|err| Error::from_path(depth, path.clone(), err))?;
        Ok(DirEntry { path, depth, md })
    }
}

impl Error {
    pub fn from_path(depth: usize, path: PathBuf, err: io::Error) -> Error {
        Error { depth, inner: ErrorInner::Io { path: Some(path), err } }
    }
}

impl IntoIter {
    fn follow(&self, dent: DirEntry) -> Result<DirEntry> {
        let followed = DirEntry::from_path(self.depth, dent.path().to_path_buf())?;
        Ok(followed)
    }

    fn open_error(&self, dent: &DirEntry, err: io::Error) -> Error {
        Error::from_path(self.depth, dent.path().to_path_buf(), err)
    }
}
"""


def test_a_rust_path_names_the_method_not_its_type(tmp_path: Path) -> None:
    # `DirEntry::from_path`: the subject is the method, not `DirEntry`; the caller of the
    # namesake `Error::from_path` is not a use of it.
    with hash_searcher(tmp_path, {"src/walk.rs": WALK_RS}) as searcher:
        ranked = _ranked(searcher, "where is DirEntry::from_path used")
        assert ranked[:2] == ["src/walk.rs:DirEntry.from_path", "src/walk.rs:IntoIter.follow"]
        assert "src/walk.rs:IntoIter.open_error" in ranked[2:]


PROXY_PHP = {
    "Slim/Routing/RouteCollector.php": """<?php
class RouteCollector
{
    public function map(array $methods, string $pattern, $handler): RouteInterface
    {
        $route = $this->createRoute($methods, $pattern, $handler);
        $this->routes[$route->getIdentifier()] = $route;
        return $route;
    }
}
""",
    "Slim/Routing/RouteCollectorProxy.php": """<?php
class RouteCollectorProxy
{
    public function get(string $pattern, $callable): RouteInterface
    {
        return $this->map(['GET'], $pattern, $callable);
    }

    public function map(array $methods, string $pattern, $callable): RouteInterface
    {
        $pattern = $this->groupPattern . $pattern;
        return $this->routeCollector->map($methods, $pattern, $callable);
    }
}
""",
}


def test_a_namesake_that_calls_the_name_on_another_object_is_a_use(tmp_path: Path) -> None:
    # The proxy's `map` forwards to the collector's through `$this->routeCollector` (an
    # instance named after its class); the proxy's `get` calls the proxy's own `map`.
    with hash_searcher(tmp_path, PROXY_PHP) as searcher:
        ranked = _ranked(searcher, "who calls RouteCollector::map")
        assert ranked[:2] == [
            "Slim/Routing/RouteCollector.php:RouteCollector.map",
            "Slim/Routing/RouteCollectorProxy.php:RouteCollectorProxy.map",
        ]
        assert "Slim/Routing/RouteCollectorProxy.php:RouteCollectorProxy.get" in ranked[2:]


@pytest.mark.parametrize(("name", "listed"), [("_deserialize", True), ("get", False)])
def test_a_name_overridden_thirty_times_has_uses_if_it_is_shaped_like_one(
    name: str, listed: bool
) -> None:
    # Thirty classes override the name; one method calls it. `_deserialize` says what it is
    # however often it is overridden; `get` thirty times could be anything's.
    overrides = [
        chunk_of(f"def {name}(self, value):\n    return value\n", f"pkg/f{n}.py", f"F{n}.{name}")
        for n in range(30)
    ]
    caller = chunk_of(
        f"def load(self, data):\n    return self.field.{name}(data)\n",
        "pkg/schema.py",
        "Schema.load",
    )

    def definitions(wanted: str) -> list[Chunk]:
        return [c for c in overrides if c.name == wanted]

    def lookup(terms: list[str], limit: int) -> list[tuple[Chunk, float]]:
        return [(c, 1.0) for c in [*overrides, caller]][:limit]

    ranked = [(c, 1.0 - i / 100) for i, c in enumerate(overrides)]
    led, used = overrides_used_first(ranked, [name], definitions, lookup)
    assert (used == {caller.id: (2,)}) is listed  # the caller, at the line of its call
    assert (led[0][0] is caller) is listed


@pytest.mark.parametrize(
    ("language", "text", "lines"),
    [
        ("python", "from pkg.text import normalize\n\nvalue = normalize(raw)\n", (3,)),
        ("typescript", "import { compose } from './compose'\nexport { compose }\n", ()),
        ("typescript", "const { compose } = require('./compose')\nrun(compose(mw))\n", (2,)),
        ("rust", "use crate::walk::compose;\nfn main() { compose(); }\n", (2,)),
        ("python", "def compose(a, b):\n    return compose(b, a)\n", (2,)),  # recursion, not def
    ],
)
def test_importing_or_defining_a_name_is_not_using_it(
    language: str, text: str, lines: tuple[int, ...]
) -> None:
    name = "normalize" if "normalize" in text else "compose"
    assert use_lines(chunk_of(text, "pkg/mod.x", "<module>", "module", language), name) == lines


# sinatra: `route!` dispatches; `route` (no bang) registers a route. "who calls route!" asked
# for the first and listed the callers of the second.
SINATRA_RB = """
module Sinatra
  class Base
    def call(env)
      dispatch!
    end

    def dispatch!
      invoke do
        static! if settings.static?
        route!
      end
    end

    def route!(base = settings)
      base.routes[@request.request_method].each { |pattern, block| process_route(pattern, block) }
    end

    def static!
      serve_file(settings.public_folder)
    end

    class << self
      def get(path, &block)
        route('GET', path, &block)
      end

      def post(path, &block)
        route('POST', path, &block)
      end

      def route(verb, path, &block)
        (@routes[verb] ||= []) << compile!(verb, path, block)
      end
    end
  end
end
"""


def test_a_ruby_bang_method_is_asked_about_with_its_bang(tmp_path: Path) -> None:
    with hash_searcher(tmp_path, {"lib/sinatra/base.rb": SINATRA_RB}) as searcher:
        ranked = _ranked(searcher, "who calls route!")
    assert ranked[:2] == [
        "lib/sinatra/base.rb:Sinatra.Base.route!",
        "lib/sinatra/base.rb:Sinatra.Base.dispatch!",
    ]
