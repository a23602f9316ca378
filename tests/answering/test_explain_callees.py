"""`explain`'s callees come from the call graph: resolved by scope, builtins never mapped to
an unrelated method (attrs: a call of `repr` used to be explained with `_Nothing.__repr__`)."""

from __future__ import annotations

from pathlib import Path

from codeqa_lsp.answering.model import Answer
from codeqa_lsp.engine import CodeBase
from tests.answering.conftest import MakeWorkspace

FILES = {
    "pkg/_make.py": """
from pkg.helpers import fmt_value as fmt
from pkg import helpers


class _Nothing:
    def __repr__(self):
        return "NOTHING"


class Printer:
    def repr(self, value):
        return "<" + str(value) + ">"

    def render(self, value):
        return self.repr(value)


class Attribute:
    def _own(self, value):
        return value

    def describe(self, value):
        text = repr(value) + str(len(value))
        text = fmt(self._own(text)) + helpers.pad(text)
        return _make_hash(text)


def _make_hash(text):
    return hash(text)
""",
    "pkg/models.py": """
class Headers:
    def get_list(self, key):
        return [key]


class Response:
    def decoder(self):
        values = self.headers.get_list("content-encoding")
        return self.params.only_here(values)
""",
    "pkg/urls.py": """
class QueryParams:
    def get_list(self, key):
        return [key]

    def only_here(self, values):
        return values
""",
    "pkg/helpers.py": """
def fmt_value(text):
    return text.strip()


def pad(text):
    return text.ljust(10)
""",
    "other/helpers.py": """
def pad(text):
    return text.rjust(10)
""",
    "pkg/make.js": """
const util = require('./util');

class Router {
  handle(req) {
    this.route(req);
    return util.parse(JSON.stringify(req)) + String(req);
  }

  route(req) { return req; }
}

function toString(x) { return x; }
""",
    "pkg/util.js": """
exports.parse = function parse(text) { return text; };
""",
    "cmd/command.go": """
package cmd

// Context returns the command's context.
func (c *Command) Context() int { return c.ctx }

// ExecuteContextC sets ctx; retrieve it by calling cmd.Context() inside Run.
func (c *Command) ExecuteContextC(ctx int) error {
	c.ctx = ctx
	/* Execute() is not called here */
	fmt.Println("then Execute(ctx) runs")
	return c.ExecuteC()
}

func (c *Command) ExecuteC() error { return nil }

func (c *Command) Execute() error { return nil }
""",
    # jsoup: the one-argument `Response.execute` calls its two-argument overload; the outer
    # class's `execute` was listed as its callee.
    "org/jsoup/HttpConnection.java": """
package org.jsoup;

public class HttpConnection {
    public Response execute() throws IOException {
        res = Response.execute(req);
        return res;
    }

    static String encodeUrl(String url) {
        return url.replace(" ", "%20");
    }

    static class Response {
        static Response execute(Request req) throws IOException {
            return execute(req, null);
        }

        static Method redirectMethod(int statusCode, Method method) {
            return statusCode == 303 ? Method.GET : method;
        }

        static Response execute(Request req, Response previous) throws IOException {
            String url = encodeUrl(req.url());
            return new Response(url, previous);
        }
    }
}
""",
}


def _write(root: Path) -> Path:
    for rel, text in FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text.lstrip(), encoding="utf-8")
    return root


def _explained(workspace: CodeBase, path: str, needle: str) -> Answer:
    """The final answer of explain at the first line of `path` holding `needle`."""
    line = _line_with((workspace.root / path).read_text(), needle)
    answer = list(workspace.explain_stream(path, line))[-1]
    assert isinstance(answer, Answer)
    return answer


def _callees(workspace: CodeBase, path: str, needle: str) -> list[str]:
    return [f"{c.path}:{c.symbol}" for c in _explained(workspace, path, needle).citations[1:]]


def test_python_calls_resolve_by_scope_and_builtins_stay_unresolved(
    make_workspace: MakeWorkspace, tmp_path: Path
) -> None:
    workspace = make_workspace(root=_write(tmp_path / "attrs"))
    callees = _callees(workspace, "pkg/_make.py", "text = repr(value)")
    assert callees == [  # in the order of the calls in the text
        "pkg/helpers.py:fmt_value",  # `fmt` is imported under another name
        "pkg/_make.py:Attribute._own",  # self._own: the enclosing class's own method
        "pkg/helpers.py:pad",  # `helpers.pad`: the imported module's, not other/helpers.py's
        "pkg/_make.py:_make_hash",  # same file
    ]
    # `repr`, `str`, `len` are builtins: never `_Nothing.__repr__` or `Printer.repr`.
    assert _callees(workspace, "pkg/_make.py", "return self.repr(value)") == [
        "pkg/_make.py:Printer.repr"
    ]


def test_javascript_calls_resolve_through_this_and_require(
    make_workspace: MakeWorkspace, tmp_path: Path
) -> None:
    workspace = make_workspace(root=_write(tmp_path / "web"))
    callees = _callees(workspace, "pkg/make.js", "this.route(req);")
    assert callees == ["pkg/make.js:Router.route", "pkg/util.js:exports.parse"]


def test_calls_named_in_comments_or_strings_are_not_callees(
    make_workspace: MakeWorkspace, tmp_path: Path
) -> None:
    # Go has no reference query: its calls are read from the code with comments and string
    # literals blanked (the doc comment's `cmd.Context()` was listed as a callee).
    workspace = make_workspace(root=_write(tmp_path / "cobra"))
    callees = _callees(workspace, "cmd/command.go", "c.ctx = ctx")
    assert callees == ["cmd/command.go:Command.ExecuteC"]


def test_a_method_on_an_unknown_object_named_in_the_file_and_elsewhere_stays_unresolved(
    make_workspace: MakeWorkspace, tmp_path: Path
) -> None:
    # httpx: `self.headers.get_list(...)` in _models.py was explained with _urls.py's
    # `QueryParams.get_list`, because the lookup by name left out the caller's own file (where
    # `Headers.get_list` is): two candidates, so the call's target is unknown.
    workspace = make_workspace(root=_write(tmp_path / "httpx"))
    callees = _callees(workspace, "pkg/models.py", "values = self.headers.get_list(")
    assert callees == ["pkg/urls.py:QueryParams.only_here"]  # the only one of its name


def test_explain_lists_the_code_that_uses_the_definition(
    make_workspace: MakeWorkspace, tmp_path: Path
) -> None:
    workspace = make_workspace(root=_write(tmp_path / "uses"))
    text = (workspace.root / "pkg/make.js").read_text()
    answer = _explained(workspace, "pkg/make.js", "route(req) {")
    call = _line_with(text, "this.route(req);")
    # Where it calls, not where the caller starts.
    assert f"It is used by: `Router.handle` (`pkg/make.js:{call}`) [2]" in answer.text
    cited = [f"{c.path}:{c.symbol}" for c in answer.citations]
    assert cited == ["pkg/make.js:Router.route", "pkg/make.js:Router.handle"]
    # Go, read without a reference query: `Execute()` in a comment is not a use.
    answer = _explained(workspace, "cmd/command.go", "ExecuteC() error {")
    assert [f"{c.path}:{c.symbol}" for c in answer.citations] == [
        "cmd/command.go:Command.ExecuteC",
        "cmd/command.go:Command.ExecuteContextC",
    ]


def test_an_extractive_answer_about_uses_leads_with_the_calls(
    make_workspace: MakeWorkspace, tmp_path: Path
) -> None:
    workspace = make_workspace(root=_write(tmp_path / "uses"))
    text = (workspace.root / "pkg/make.js").read_text()
    call = _line_with(text, "this.route(req);")
    answer = workspace.ask("who calls Router.route?")
    assert answer.provider == "extractive"
    cited = [f"{c.path}:{c.symbol}" for c in answer.citations]
    handle = cited.index("pkg/make.js:Router.handle") + 1
    assert f"Used by: `Router.handle` at `pkg/make.js:{call}` [{handle}]." in answer.text
    assert "Used by:" not in workspace.ask("what does Router.route do?").text


def _line_with(text: str, needle: str) -> int:
    """The 1-based number of the first line of `text` holding `needle`."""
    return next(i for i, row in enumerate(text.splitlines(), 1) if needle in row)


def test_a_java_method_calling_its_own_name_calls_an_overload_not_the_outer_class(
    make_workspace: MakeWorkspace, tmp_path: Path
) -> None:
    workspace = make_workspace(root=_write(tmp_path / "jsoup"))
    path = "org/jsoup/HttpConnection.java"

    def calls_line(needle: str) -> str:
        answer = _explained(workspace, path, needle)
        return next((line for line in answer.text.splitlines() if "It calls" in line), "")

    # The outer class's `execute` uses this one ("It is used by"); it is not called by it.
    assert calls_line("return execute(req, null);") == ""
    # A bare call of another name still reaches the outer class (implicit `this`).
    assert "`HttpConnection.encodeUrl`" in calls_line("String url = encodeUrl(")
