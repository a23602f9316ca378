"""The call graph: which indexed definition each call in a chunk means.

Edges are stored with the chunks (`Chunk.refs`, written by `chunking/references.py`), so the
graph stays as incremental as the index. Resolving a call needs the rest of the index and
is done here, by scope, in the order a reader would look:

1. `self.x()` / `cls.x()` / `this.x()`: a member of the enclosing class (same file), else
   the only method `x` in the file;
2. a bare `f()`: a definition of `f` nested in the caller or at the top of the same file,
   then what the file imports as `f`, then the only top-level `f` in the index; in a language
   where a bare call reaches the class's own methods (`IMPLICIT_THIS`), a method calling its
   own name calls itself or an overload, never the enclosing class's namesake;
3. `mod.f()` / `Class.f()`: through the file's imports (`mod` a module, `Class` a class),
   or a class of that name in the file;
4. `obj.f()` on an unknown object: only when exactly one definition in the index is named
   `f` and `f` is not a method every builtin type has (`append`, `get`, `join`, ...).

A builtin (`repr`, `len`, `print`, `Object.keys`) resolves to nothing unless the file
defines or imports that very name: it never maps to an unrelated method that happens to
share a suffix (the old text search turned attrs' `repr(...)` into `_Nothing.__repr__`).
"""

from __future__ import annotations

import builtins
import posixpath
from collections.abc import Callable, Iterable
from typing import NamedTuple

from codeqa_lsp.chunking.languages import language_for_path
from codeqa_lsp.chunking.model import Chunk

# Languages whose bare call inside a class means the class's own method (`execute(req, null)`
# in a Java method calls an overload of `execute`, not the outer class's `execute`). In
# Python, JavaScript, Go, Rust and PHP a method is reached through `self`/`this`/a receiver,
# so a bare call there means a function outside the class.
IMPLICIT_THIS = frozenset({"java", "csharp", "cpp", "kotlin", "scala", "swift", "dart", "ruby"})


class Definition(NamedTuple):
    """A definition as the graph sees it (part 0 of its chunks)."""

    id: str
    path: str
    symbol: str
    kind: str
    declaration: bool

    @property
    def name(self) -> str:
        return self.symbol.rsplit(".", 1)[-1]

    @classmethod
    def of(cls, chunk: Chunk) -> Definition:
        return cls(chunk.id, chunk.path, chunk.symbol, chunk.kind, chunk.declaration)


_SELF = frozenset({"self", "cls", "this", "super()"})
_PY_BUILTINS = frozenset(name for name in dir(builtins) if not name.startswith("_"))
_JS_GLOBALS = frozenset(
    {
        "Array",
        "Boolean",
        "Date",
        "Error",
        "JSON",
        "Map",
        "Math",
        "Number",
        "Object",
        "Promise",
        "Reflect",
        "RegExp",
        "Set",
        "String",
        "Symbol",
        "TypeError",
        "WeakMap",
        "WeakSet",
        "console",
        "decodeURIComponent",
        "encodeURIComponent",
        "parseFloat",
        "parseInt",
        "require",
        "setImmediate",
        "setTimeout",
        "clearTimeout",
        "setInterval",
        "Buffer",
        "process",
        "isNaN",
        "isFinite",
        "escape",
        "unescape",
        "arguments",
        "globalThis",
        "window",
        "document",
    }
)
BUILTIN_NAMES = _PY_BUILTINS | _JS_GLOBALS
# Methods of builtin types (str, list, dict, set, file, Array, String, Map, Promise, ...): a
# call of one of these on an object of unknown type is far more often the builtin's.
COMMON_METHODS = frozenset(
    {
        "append",
        "extend",
        "insert",
        "pop",
        "remove",
        "clear",
        "copy",
        "count",
        "index",
        "sort",
        "reverse",
        "get",
        "set",
        "keys",
        "values",
        "items",
        "update",
        "setdefault",
        "add",
        "discard",
        "join",
        "split",
        "rsplit",
        "strip",
        "lstrip",
        "rstrip",
        "replace",
        "format",
        "startswith",
        "endswith",
        "lower",
        "upper",
        "encode",
        "decode",
        "find",
        "read",
        "write",
        "close",
        "open",
        "readline",
        "readlines",
        "seek",
        "tell",
        "flush",
        "push",
        "shift",
        "unshift",
        "slice",
        "splice",
        "concat",
        "map",
        "filter",
        "reduce",
        "forEach",
        "some",
        "every",
        "includes",
        "indexOf",
        "toString",
        "valueOf",
        "then",
        "catch",
        "finally",
        "has",
        "delete",
        "call",
        "apply",
        "bind",
        "test",
        "match",
        "exec",
        "trim",
        "substring",
        "substr",
        "charAt",
        "toLowerCase",
        "toUpperCase",
        "hasOwnProperty",
        "emit",
        "on",
        "once",
        "next",
        "send",
        "end",
        "search",
        "group",
        "groups",
        "sub",
        "fullmatch",
        "isdigit",
        "isalpha",
        "partition",
        "rpartition",
        "zfill",
        "title",
        "capitalize",
        "casefold",
        "splitlines",
        "__init__",
        "__new__",
        "__call__",
        "__enter__",
        "__exit__",
        "length",
        "size",
        "log",
    }
)
_SOURCE_SUFFIXES = (".py", ".pyi", ".js", ".mjs", ".cjs", ".ts", ".tsx", ".jsx", ".mts", ".cts")

Lookup = Callable[[str], list[Definition]]


def imports_of(chunks: Iterable[Chunk | tuple[str, ...]]) -> dict[str, str]:
    """alias → target for every `alias=target` reference among `chunks` (or refs tuples)."""
    out: dict[str, str] = {}
    for item in chunks:
        refs = item.refs if isinstance(item, Chunk) else item
        for ref in refs:
            alias, sep, target = ref.partition("=")
            if sep and alias and target:
                out.setdefault(alias, target)
    return out


def calls_of(refs: Iterable[str]) -> list[str]:
    return [ref for ref in refs if "=" not in ref]


class Resolver:
    """Resolves the calls of one file's definitions. `by_name(name)` lists the indexed
    definitions whose symbol's last component is `name`; `in_file` those of the caller's file;
    `imports` the file's import table."""

    def __init__(
        self, path: str, in_file: list[Definition], imports: dict[str, str], by_name: Lookup
    ) -> None:
        self.path, self.imports, self.by_name = path, imports, by_name
        self.in_file = {d.symbol: d for d in in_file}
        self.implicit_this = language_for_path(path) in IMPLICIT_THIS

    def resolve(self, caller: str, call: str) -> Definition | None:
        """The definition the call `call` made inside `caller` (a symbol) means, or None."""
        receiver, _, name = call.rpartition(".")
        if not name or name == "*":
            return None
        if receiver in _SELF:
            return self._member(caller, name)
        if not receiver:
            return self._bare(caller, name)
        return self._qualified(receiver, name)

    # -- the three shapes of a call ------------------------------------------------------
    def _member(self, caller: str, name: str) -> Definition | None:
        scope = caller
        while "." in scope:
            scope = scope.rsplit(".", 1)[0]
            found = self.in_file.get(f"{scope}.{name}")
            if found is not None and found.symbol != caller:
                return found
        methods = [d for d in self.in_file.values() if d.name == name and "." in d.symbol]
        if len(methods) == 1 and methods[0].symbol != caller:
            return methods[0]
        if name in COMMON_METHODS:
            return None
        anywhere = [d for d in self.by_name(name) if "." in d.symbol and not d.declaration]
        return anywhere[0] if len(anywhere) == 1 else None

    def _bare(self, caller: str, name: str) -> Definition | None:
        scope = caller
        while scope:  # nested in the caller or its parents, then the top of the file
            found = self.in_file.get(f"{scope}.{name}")
            if found is not None and found.symbol != caller:
                return found
            if found is not None and self.implicit_this:
                return None  # the caller itself or its overload: not the outer class's
            scope = scope.rsplit(".", 1)[0] if "." in scope else ""
        found = self.in_file.get(name)
        if found is not None:
            return found
        target = self.imports.get(name)
        if target is not None:
            return self._imported(target)
        if name in BUILTIN_NAMES:
            return None
        top = [d for d in self.by_name(name) if d.symbol == name and not d.declaration]
        return _nearest(self.path, top) if top else None

    def _qualified(self, receiver: str, name: str) -> Definition | None:
        head = receiver.split(".", 1)[0]
        target = self.imports.get(head)
        if target is not None:
            rest = receiver[len(head) :]
            found = self._imported(f"{target}{rest}.{name}")
            if found is not None:
                return found
            found = self._imported(target, member=f"{receiver.rsplit('.', 1)[-1]}.{name}")
            if found is not None:
                return found
        found = self.in_file.get(f"{receiver}.{name}")
        if found is not None:
            return found
        if head == "*" or receiver not in BUILTIN_NAMES:
            if name in COMMON_METHODS:
                return None
            candidates = [d for d in self.by_name(name) if not d.declaration and d.kind != "class"]
            return candidates[0] if len(candidates) == 1 else None
        return None

    # -- imports -------------------------------------------------------------------------
    def _imported(self, target: str, member: str | None = None) -> Definition | None:
        """`pkg.mod.name` / `.rel.name` / `./lib/x.name`: `name` defined in a file whose path
        is that module's. With `member`, a member of the module (`Class.method`)."""
        if target.startswith((".", "/")) and ("/" in target):  # JS: './lib/util.name'
            module, _, name = target.rpartition(".") if member is None else (target, "", "")
            if module.endswith(("/.", "/..")) or module in (".", ".."):
                module, name = target, ""
            module_path = posixpath.normpath(posixpath.join(posixpath.dirname(self.path), module))
            suffixes: tuple[str, ...] = (module_path,)
        else:
            module, _, name = target.rpartition(".") if member is None else (target, "", "")
            dots = len(module) - len(module.lstrip("."))
            parts = [p for p in module.lstrip(".").split(".") if p]
            if dots:
                base = posixpath.dirname(self.path)
                for _ in range(dots - 1):
                    base = posixpath.dirname(base)
                suffixes = (posixpath.join(base, *parts) if parts else base,)
            else:
                suffixes = ("/".join(parts),) if parts else ()
        wanted = member or name
        if not wanted or not suffixes:
            return None
        last = wanted.rsplit(".", 1)[-1]
        for definition in self.by_name(last):
            if definition.symbol != wanted and not definition.symbol.endswith(f".{wanted}"):
                continue
            if (
                member is None
                and "." in definition.symbol
                and definition.symbol != wanted
                and not _exported_member(definition.symbol)
            ):
                continue
            if _module_matches(definition.path, suffixes):
                return definition
        return None


def _exported_member(symbol: str) -> bool:
    """`exports.x` / `module.exports.x` / `app.x`: what a JS module exposes under `x`."""
    return symbol.count(".") == 1


def _module_matches(path: str, suffixes: tuple[str, ...]) -> bool:
    stem = path
    for suffix in _SOURCE_SUFFIXES:
        if stem.endswith(suffix):
            stem = stem[: -len(suffix)]
            break
    for wanted in suffixes:
        wanted = wanted.strip("/")
        for candidate in (stem, stem.removesuffix("/__init__"), stem.removesuffix("/index")):
            if candidate == wanted or candidate.endswith(f"/{wanted}"):
                return True
    return False


def _nearest(path: str, candidates: list[Definition]) -> Definition | None:
    """The only candidate, else the one in the caller's directory when exactly one is."""
    if len(candidates) == 1:
        return candidates[0]
    here = posixpath.dirname(path)
    local = [d for d in candidates if posixpath.dirname(d.path) == here]
    return local[0] if len(local) == 1 else None


def resolve_calls(chunk: Chunk, resolver: Resolver) -> list[Definition]:
    """The definitions `chunk` calls, in the order of its calls, each once, itself excluded."""
    out: dict[str, Definition] = {}
    for call in calls_of(chunk.refs):
        found = resolver.resolve(chunk.symbol, call)
        if found is not None and found.symbol != chunk.symbol:
            out.setdefault(found.id, found)
    return list(out.values())
