"""Stack frames in a pasted trace, in the seven formats users paste: Python, JavaScript (V8),
Java and the JVM languages, C#, Go, Rust and Ruby.

A frame names a file, a line and usually the function that was running there: the strongest
evidence a query can carry about where to look (`mentions.py` resolves the files, the reranker
lifts the functions, the last frame most). "Last" means where it failed, and only Python
prints that frame last ("most recent call last"); every other runtime here prints the failing
frame first. So the frames of those formats are returned reversed: in the order of the list,
the last frame is always the innermost one.

PHP traces are left to the file-name mentions: a PHP frame names the function *called* from
its line, not the one the line is in.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Frame:
    path: str
    line: int
    function: str  # "" when the frame names none


# `File "x/y.py", line 12, in f` (the `in f` part is optional).
_PYTHON = re.compile(r'File "([^"\n]+)", line (\d+)(?:, in ([\w<>.$]+))?')
# `at f (x/y.js:12:3)`, `at async f (x/y.js:12:3)`, `at x/y.js:12:3`, `at new C (...)`, and
# V8's alias of a method called by another name, `at Timeout.timeoutHandler [as _onTimeout]
# (...)` (got's timeout trace lost its failing frame to it; user pass).
_JAVASCRIPT = re.compile(
    r"\bat (?:async )?(?:new )?(?:([\w$.<>]+)(?: \[as [\w$.<>]+\])? )?"
    r"\(?([^\s()]+?\.[cm]?[jt]sx?):(\d+)(?::\d+)?\)?"
)
# `at com.google.gson.Gson.fromJson(Gson.java:1227)`, with a `java.base/` module prefix.
_JVM = re.compile(
    r"\bat\s+(?:[\w.$-]+/)?((?:[\w$]+\.)+[\w$<>]+)\(([\w$-]+\.(?:java|kt|kts|scala|groovy)):(\d+)\)"
)
# `at Ns.Class.Method(String s) in /src/Ns/Class.cs:line 42`.
_CSHARP = re.compile(r"\bat\s+([\w.`<>$+\[\],]+?)\([^()\n]*\)\s+in\s+(\S[^\n]*?\.cs):line\s+(\d+)")
# `github.com/go-chi/chi/v5.(*node).findRoute(0xc000..., ...)` then, indented on the next
# line, `/home/u/chi/tree.go:494 +0x2a5`.
# The lookahead keeps the pattern to lines with a `(` in their first 500 characters: its two
# runs of the same characters (`[\w.\-/]*\.` then `[\w.]+`) split a long dotted word every
# way, n² steps (a pasted 200,000-character `a.a.a...` took two minutes).
_GO = re.compile(
    r"^[ \t]*(?=[^\n(]{0,500}\()"
    r"([\w.\-/]*\.(?:\(\*?[\w\[\]., ]+\)\.)?[\w.]+)\([^\n]*\)[ \t]*\n\s+(\S+\.go):(\d+)",
    re.MULTILINE,
)
# `  3: walkdir::IntoIter::check_loop` then `             at ./src/lib.rs:981:17`.
_RUST = re.compile(
    r"^[ \t]*\d+:[ \t]+(?:0x[0-9a-f]+ - )?([^\n]+?)(?:::h[0-9a-f]{16})?[ \t]*\n"
    r"[ \t]+at (\S+\.rs):(\d+)",
    re.MULTILINE,
)
# `lib/rack/request.rb:787:in 'Rack::Request::Helpers#expand_param_pairs'` (Ruby 3.4) or
# "in `expand_param_pairs'" (earlier).
# The path starts after a blank, a quote or a bracket (or the text's start) and holds none of
# them: unanchored, `\S+` tried every start inside a long word and scanned to its end from
# each, n² steps (a pasted 200,000-letter word took 45 s).
_RUBY = re.compile(
    r"(?<![^\s`'\"(\[])([^\s`'\"()\[\]]+\.rb):(\d+):in [`'\u2018]([^'\u2019\n]+)['\u2019]"
)

_GENERICS = re.compile(r"\[[^\]]*\]|`\d+")  # C#'s `Send[TResponse]`, `List`1`
_GO_CLOSURE = re.compile(r"(?:\.func\d+)+(?:\.\d+)*$")
_RUST_NOISE = re.compile(r"::\{\{closure\}\}|<[^<>]*>|\{\{[^}]*\}\}")


def find_frames(text: str) -> list[Frame]:
    """Every frame of every trace in `text`, the failing frame of each trace last."""
    frames = [Frame(m[1], int(m[2]), m[3] or "") for m in _PYTHON.finditer(text)]
    innermost_first = [
        *(Frame(m[2], int(m[3]), m[1] or "") for m in _JAVASCRIPT.finditer(text)),
        *(_jvm_frame(m) for m in _JVM.finditer(text)),
        *(
            Frame(m[2], int(m[3]), _last(_GENERICS.sub("", m[1]), "."))
            for m in _CSHARP.finditer(text)
        ),
        *(_go_frame(m) for m in _GO.finditer(text)),
        *(_rust_frame(m) for m in _RUST.finditer(text)),
        *(_ruby_frame(m) for m in _RUBY.finditer(text)),
    ]
    return [*reversed(innermost_first), *frames]


def _last(qualified: str, separator: str) -> str:
    name = qualified.rsplit(separator, 1)[-1]
    return "" if name.startswith("<") else name


def _jvm_frame(match: re.Match[str]) -> Frame:
    """The package's folders then the file (`com/google/gson/Gson.java`): the longest suffix
    of an indexed path that matches wins (`mentions.PathResolver`)."""
    parts = match.group(1).split(".")
    folders = "/".join(parts[:-2])
    path = f"{folders}/{match.group(2)}" if folders else match.group(2)
    return Frame(path, int(match.group(3)), _last(match.group(1), "."))


def _go_frame(match: re.Match[str]) -> Frame:
    function = _GO_CLOSURE.sub("", match.group(1))  # `findRoute.func1` ran inside findRoute
    return Frame(match.group(2), int(match.group(3)), _last(function, "."))


def _rust_frame(match: re.Match[str]) -> Frame:
    function = match.group(1).strip()
    while True:  # `<T as Trait>::method::{{closure}}` → `method`
        simpler = _RUST_NOISE.sub("", function)
        if simpler == function:
            break
        function = simpler
    return Frame(match.group(2), int(match.group(3)), _last(function, "::"))


def _ruby_frame(match: re.Match[str]) -> Frame:
    label = match.group(3).rsplit(" in ", 1)[-1]  # `block (2 levels) in call`
    return Frame(match.group(1), int(match.group(2)), _last(re.split(r"[#.]", label)[-1], "::"))
