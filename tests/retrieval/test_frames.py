"""Stack frames of seven runtimes (`frames.py`), as users paste them, and a pasted Go panic
and Java stack trace searched over a real index (SQLite FTS5, hnswlib, the `hash` embedder)."""

from __future__ import annotations

from pathlib import Path

import pytest

from codeqa_lsp.retrieval.frames import Frame, find_frames
from codeqa_lsp.retrieval.mentions import Evidence, PathResolver, find_mentions, resolve
from codeqa_lsp.retrieval.rerank import failing_frame_first
from tests.chunks import chunk_of
from tests.retrieval.searchers import hash_searcher

JAVA = """Exception in thread "main" com.google.gson.JsonSyntaxException: java.lang.IllegalStateException: Expected BEGIN_OBJECT but was STRING at line 1 column 1 path $
	at com.google.gson.internal.bind.ReflectiveTypeAdapterFactory$Adapter.read(ReflectiveTypeAdapterFactory.java:397)
	at com.google.gson.Gson.fromJson(Gson.java:1227)
	at java.base/java.lang.Thread.run(Thread.java:833)
	at com.acme.json.App.main(App.java:12)
"""  # noqa: E501 (traces as printed)
GO = """panic: runtime error: index out of range [0] with length 0

goroutine 1 [running]:
github.com/go-chi/chi/v5.(*node).findRoute(0xc000104000, 0xc00011a000, 0x1, {0x0, 0x0})
	/home/u/go/pkg/mod/github.com/go-chi/chi/v5@v5.0.12/tree.go:494 +0x2a5
github.com/go-chi/chi/v5.(*node).FindRoute.func1(...)
	/home/u/go/pkg/mod/github.com/go-chi/chi/v5@v5.0.12/tree.go:390
main.main()
	/home/u/app/main.go:20 +0x1d
exit status 2
"""
RUST = """thread 'main' panicked at src/lib.rs:981:17:
called `Result::unwrap()` on an `Err` value
stack backtrace:
   0: rust_begin_unwind
             at /rustc/90b35a6239c3d8bdabc530a6a0816f7ff89a0aaf/library/std/src/panicking.rs:665:5
   1: walkdir::IntoIter::check_loop
             at ./src/lib.rs:981:17
   2: <walkdir::IntoIter as core::iter::traits::iterator::Iterator>::next::{{closure}}
             at ./src/lib.rs:520:9
   3: app::main
             at ./src/main.rs:5:5
"""
RUBY = """/usr/lib/ruby/3.3.0/uri/rfc3986_parser.rb:66:in `split': bad URI(is not URI?) (URI::InvalidURIError)
	from lib/rack/request.rb:787:in `block in expand_param_pairs'
	from lib/rack/request.rb:783:in 'Rack::Request::Helpers#expand_param_pairs'
	from app.rb:3:in `<main>'
"""  # noqa: E501 (traces as printed)
CS = """System.InvalidOperationException: No handler registered
   at MediatR.Mediator.Send[TResponse](IRequest`1 request, CancellationToken cancellationToken) in /src/MediatR/Mediator.cs:line 42
   at Program.Main(String[] args) in /app/Program.cs:line 10
"""  # noqa: E501 (traces as printed)
JS = """TypeError: Cannot read properties of undefined (reading 'short')
    at Command._findOption (/app/node_modules/commander/lib/command.js:1670:20)
    at async Command.parseAsync (/app/node_modules/commander/lib/command.js:1100:5)
    at Object.<anonymous> (/app/index.js:5:9)
"""

PYTHON = """Traceback (most recent call last):
  File "/home/u/app.py", line 3, in <module>
    main()
  File "/home/u/pkg/units/core.py", line 12, in scale_to
    raise UnitConversionError(self.name, other.name)
"""


@pytest.mark.parametrize(
    ("trace", "innermost", "outermost"),
    [
        # Python prints the failing frame last; the others print it first, and come reversed.
        (PYTHON, ("/home/u/pkg/units/core.py", 12, "scale_to"), ("/home/u/app.py", 3, "<module>")),
        (
            JAVA,
            (
                "com/google/gson/internal/bind/ReflectiveTypeAdapterFactory.java",
                397,
                "read",
            ),
            ("com/acme/json/App.java", 12, "main"),
        ),
        (
            GO,
            ("/home/u/go/pkg/mod/github.com/go-chi/chi/v5@v5.0.12/tree.go", 494, "findRoute"),
            ("/home/u/app/main.go", 20, "main"),
        ),
        (
            RUST,
            (
                "/rustc/90b35a6239c3d8bdabc530a6a0816f7ff89a0aaf/library/std/src/panicking.rs",
                665,
                "rust_begin_unwind",
            ),
            ("./src/main.rs", 5, "main"),
        ),
        (
            RUBY,
            ("/usr/lib/ruby/3.3.0/uri/rfc3986_parser.rb", 66, "split"),
            ("app.rb", 3, ""),
        ),
        (CS, ("/src/MediatR/Mediator.cs", 42, "Send"), ("/app/Program.cs", 10, "Main")),
        (
            JS,
            ("/app/node_modules/commander/lib/command.js", 1670, "Command._findOption"),
            ("/app/index.js", 5, "Object.<anonymous>"),
        ),
    ],
)
def test_frames_come_with_the_failing_frame_last(
    trace: str, innermost: tuple[str, int, str], outermost: tuple[str, int, str]
) -> None:
    frames = find_frames(trace)
    assert frames[-1] == Frame(*innermost)
    assert frames[0] == Frame(*outermost)


def test_frame_function_names_lose_closures_generics_and_owners() -> None:
    go = {f.function for f in find_frames(GO)}
    assert go == {"findRoute", "FindRoute", "main"}  # `FindRoute.func1` ran in FindRoute
    rust = [f.function for f in find_frames(RUST)]
    assert "next" in rust and "check_loop" in rust  # `<... as Iterator>::next::{{closure}}`
    ruby = [f.function for f in find_frames(RUBY)]
    assert ruby.count("expand_param_pairs") == 2  # `block in ...` and `Class#method`
    assert [f.path for f in find_frames(JAVA)][1] == "java/lang/Thread.java"  # module dropped


def test_a_jvm_frame_resolves_through_its_package_among_files_of_one_name() -> None:
    resolver = PathResolver(
        [
            "src/main/java/com/acme/json/strict/Reader.java",
            "src/main/java/com/acme/json/lenient/Reader.java",
        ]
    )
    trace = "java.lang.NullPointerException\n\tat com.acme.json.lenient.Reader.read(Reader.java:7)"
    evidence = resolve(find_mentions(trace), resolver)
    assert evidence.paths == {"src/main/java/com/acme/json/lenient/Reader.java": 1.0}
    assert evidence.functions == {"read": 1.0}


def test_a_frame_agreeing_only_in_its_file_name_is_another_file() -> None:
    """FluentValidation (user pass): the user's own frame `in /src/Program.cs:line 10`
    resolved to the library's benchmark `Program.cs` and made its `Main` the failing function."""
    resolver = PathResolver(
        [
            "src/FluentValidation.Tests.Benchmarks/Program.cs",
            "src/FluentValidation/AbstractValidator.cs",
            "setup.py",
        ]
    )
    trace = (
        "FluentValidation.ValidationException: Validation failed:\n"
        "   at FluentValidation.AbstractValidator`1.RaiseValidationException(ValidationContext`1"
        " context, ValidationResult result)"
        " in /_/src/FluentValidation/AbstractValidator.cs:line 382\n"
        "   at MyApp.Program.Main(String[] args) in /src/Program.cs:line 10"
    )
    evidence = resolve(find_mentions(trace), resolver)
    assert list(evidence.paths) == ["src/FluentValidation/AbstractValidator.cs"]
    assert evidence.failing == (
        "src/FluentValidation/AbstractValidator.cs",
        382,
        "RaiseValidationException",
    )
    # A file name alone, a file at the root, and folders that agree above the name resolve.
    assert resolver.resolve_path("Program.cs") == [
        "src/FluentValidation.Tests.Benchmarks/Program.cs"
    ]
    assert resolver.resolve_path("/home/me/checkout/setup.py") == ["setup.py"]
    assert resolver.resolve_path("/build/src/FluentValidation/AbstractValidator.cs") == [
        "src/FluentValidation/AbstractValidator.cs"
    ]


FILES = {
    "tree.go": """
package chi

// FindRoute resets the routing context and looks the path up.
func (n *node) FindRoute(rctx *Context, method methodTyp, path string) *node {
	rctx.Reset()
	return n.findRoute(rctx, method, path)
}

// findRoute walks the radix tree edge by edge.
func (n *node) findRoute(rctx *Context, method methodTyp, path string) *node {
	for _, child := range n.children[0] {
		if child.prefix == path[:1] {
			return child
		}
	}
	return nil
}
""",
    "lib/command.js": """
export class Command {
  parse(argv) {
    return this.parseOptions(argv.slice(2));
  }

  parseOptions(args) {
    return args.map((arg) => this._findOption(arg));
  }

  _findOption(arg) {
    return this.options.find((option) => option.is(arg));
  }
}
""",
}
# V8 prints the failing frame first: `_findOption` failed, `parse` was the outermost call.
JS_TRACE = """TypeError: Cannot read properties of undefined (reading 'find')
    at Command._findOption (/app/node_modules/cmd/lib/command.js:11:25)
    at Command.parseOptions (/app/node_modules/cmd/lib/command.js:7:17)
    at Command.parse (/app/node_modules/cmd/lib/command.js:3:17)
    at Object.<anonymous> (/app/index.js:2:9)
"""


@pytest.mark.parametrize(
    ("trace", "expected"),
    [(GO, ("tree.go", "node.findRoute")), (JS_TRACE, ("lib/command.js", "Command._findOption"))],
)
def test_a_pasted_trace_finds_the_function_of_its_failing_frame(
    tmp_path: Path, trace: str, expected: tuple[str, str]
) -> None:
    with hash_searcher(tmp_path, FILES) as searcher:
        top = searcher.search(trace, top_k=3).hits[0].chunk
        assert (top.path, top.symbol) == expected


LIFESPAN = {
    "starlette/routing.py": '''
class _AsyncLiftContextManager:
    async def __aenter__(self):
        return await self._cm.__aenter__()


class _DefaultLifespan:
    def __init__(self, router):
        self._router = router

    async def __aenter__(self):
        await self._router.startup()

    async def __aexit__(self, *exc_info):
        await self._router.shutdown()


class Router:
    async def startup(self):
        """Run any `.on_startup` event handlers."""
        for handler in self.on_startup:
            await handler()

    async def lifespan(self, scope, receive, send):
        """Handle ASGI lifespan messages, which allows us to manage application startup and
        shutdown events."""
        async with self.lifespan_context(app) as maybe_state:
            await send({"type": "lifespan.startup.complete"})
''',
}
LIFESPAN_TRACE = """Traceback (most recent call last):
  File "/app/.venv/lib/python3.12/site-packages/starlette/routing.py", line 25, in lifespan
    async with self.lifespan_context(app) as maybe_state:
  File "/app/.venv/lib/python3.12/site-packages/starlette/routing.py", line 10, in __aenter__
    await self._router.startup()
  File "/app/.venv/lib/python3.12/site-packages/starlette/routing.py", line 19, in startup
    await handler()
TypeError: 'NoneType' object is not callable
"""


def test_a_pasted_traceback_leads_with_the_function_it_failed_in(tmp_path: Path) -> None:
    # `__aenter__` is shaped like an identifier and named by a frame, so the fast path
    # boosts both `__aenter__` methods; `startup`, where it failed, is a plain word.
    with hash_searcher(tmp_path, LIFESPAN) as searcher:
        top = searcher.search(LIFESPAN_TRACE, top_k=3).hits[0].chunk
        assert (top.path, top.symbol) == ("starlette/routing.py", "Router.startup")


def test_a_pasted_issue_moves_its_failing_function_only_from_the_first_places() -> None:
    chunks = [chunk_of("def f():\n    pass\n", "pkg/a.py", f"f{n}") for n in range(8)]
    ranked = [(c, 1.0 - n / 10) for n, c in enumerate(chunks)]
    evidence = Evidence(paths={"pkg/a.py": 1.0}, functions={}, failing=("pkg/a.py", 1, "f6"))
    # A question: from anywhere. A pasted issue: not from 7th (its file's Acc@5 must hold).
    assert failing_frame_first(ranked, evidence)[0][0].symbol == "f6"
    assert failing_frame_first(ranked, evidence, long_query=True) == ranked
    near = Evidence(paths={"pkg/a.py": 1.0}, functions={}, failing=("pkg/a.py", 1, "f3"))
    moved = failing_frame_first(ranked, near, long_query=True)
    assert [c.symbol for c, _ in moved[:2]] == ["f3", "f0"]
    assert [s for _, s in moved] == sorted((s for _, s in moved), reverse=True)


def test_a_compiled_javascript_frame_resolves_to_its_typescript_source() -> None:
    """got (user pass): a Node trace through the installed package names the compiled
    `dist/source/core/timed-out.js`, in a frame whose method V8 calls by another name
    (`[as _onTimeout]`); the repository holds `source/core/timed-out.ts`."""
    trace = (
        "RequestError: Timeout awaiting 'request' for 5000ms\n"
        "    at ClientRequest.emit (node:events:531:35)\n"
        "    at Timeout.timeoutHandler [as _onTimeout] "
        "(file:///app/node_modules/got/dist/source/core/timed-out.js:42:25)\n"
        "    at new Request (file:///app/node_modules/got/dist/source/core/index.js:200:9)"
    )
    frames = find_frames(trace)
    assert [f.function for f in frames] == ["Request", "Timeout.timeoutHandler"]
    resolver = PathResolver(["source/core/timed-out.ts", "source/core/index.ts", "index.js"])
    evidence = resolve(find_mentions(trace), resolver)
    assert evidence.failing == ("source/core/timed-out.ts", 42, "timeoutHandler")
    assert set(evidence.paths) == {"source/core/timed-out.ts", "source/core/index.ts"}
    # A JavaScript file that is indexed is itself, and a name with no source stays as it is.
    assert resolver.resolve_path("/srv/app/index.js") == ["index.js"]
    assert resolver.resolve_path("dist/cli.js") == []
