"""Direct evidence a query carries about *where* to look: traceback frames, file names and
dotted module paths.

A pasted traceback says outright which files and functions were involved
(`File "lib/sympy/core/expr.py", line 12, in evalf`; seven languages' formats, `frames.py`);
an issue mentions `requests/sessions.py` or `sphinx.ext.autodoc`. Such a mention is stronger
evidence than any number of prose words, so it is resolved against the indexed paths and
handed to the reranker as a feature.

Resolution is by path suffix: a frame from `/usr/lib/python3.9/site-packages/sympy/core/expr.py`
matches the indexed `sympy/core/expr.py`. A bare file name (`utils.py`) defined in many places
says little, so a mention that resolves to more than `MAX_FILES_PER_MENTION` files is dropped.

Tried and dropped (2026-11-26, local): a word of a short question that names a source file
(`how does the scanner decide ...` → `scanner.py`, plurals and `router/index.js` included) as
a mention of strength 0.5. The 100 questions 0.87 / 0.740 -> 0.86 / 0.738 (rxjs-03 out of the
top 5), the tryout 0.82 / 0.646 -> 0.79 / 0.631: "error", "router", "async", "validators"
name files that are not the answer far more often than "scanner" names the one that is.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from codeqa_lsp.retrieval.frames import Frame, find_frames

_SOURCE_EXT = (
    r"(?:py|pyi|js|jsx|mjs|cjs|ts|tsx|go|rs|java|kt|rb|php|c|h|cc|cpp|hpp|cs|swift|scala|lua|sh)"
)
_FILE_NAME = re.compile(rf"(?<![\w/.-])((?:[\w.-]+/)*[\w.-]+\.{_SOURCE_EXT})\b")
# `sphinx.ext.autodoc`, `sympy.core.expr.Expr`: lowercase dotted chains of 2+ parts.
_DOTTED = re.compile(r"(?<![\w.])([a-z_][a-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*){1,6})(?![\w(])")

# What a compiled JavaScript file's source is called (`PathResolver._source_of_compiled`).
_COMPILED_FROM = {"js": ("ts", "tsx"), "mjs": ("mts", "ts"), "cjs": ("cts", "ts"), "jsx": ("tsx",)}
# A mention that fits more files than this is too vague to be evidence (`__init__.py`).
MAX_FILES_PER_MENTION = 3


@dataclass
class Mentions:
    frames: list[Frame] = field(default_factory=list)
    files: list[str] = field(default_factory=list)  # file names and paths as written
    dotted: list[str] = field(default_factory=list)  # dotted module paths as written

    def __bool__(self) -> bool:
        return bool(self.frames or self.files or self.dotted)


def find_mentions(query: str) -> Mentions:
    found = Mentions(frames=find_frames(query))
    framed = {f.path for f in found.frames}
    for match in _FILE_NAME.finditer(query):
        name = match.group(1)
        if name not in framed and not any(p.endswith(name) for p in framed):
            found.files.append(name)
    for match in _DOTTED.finditer(query):
        chain = match.group(1)
        if not re.search(rf"\.{_SOURCE_EXT}$", chain):
            found.dotted.append(chain)
    found.files = list(dict.fromkeys(found.files))
    found.dotted = list(dict.fromkeys(found.dotted))
    return found


class PathResolver:
    """Indexed paths by suffix, to resolve what a query mentions."""

    def __init__(self, paths: Iterable[str]) -> None:
        self.by_name: dict[str, list[str]] = {}
        self.by_module: dict[str, list[str]] = {}
        for path in paths:
            pure = PurePosixPath(path)
            self.by_name.setdefault(pure.name, []).append(path)
            parts = list(pure.with_suffix("").parts)
            if parts and parts[-1] == "__init__":
                parts = parts[:-1]
            if parts:
                self.by_module.setdefault(parts[-1], []).append(path)

    def resolve_path(self, written: str) -> list[str]:
        """Indexed files whose path ends with the longest matching suffix of `written` (or of
        its TypeScript source's path, when `written` names compiled JavaScript)."""
        parts = PurePosixPath(written.replace("\\", "/")).parts
        if not parts:
            return []
        best: list[str] = []
        best_len = 0
        for name in (parts[-1], *self._sources_of_compiled(parts[-1])):
            named = (*parts[:-1], name)
            for path in self.by_name.get(name, []):
                n = _common_suffix(named, PurePosixPath(path).parts)
                if n > best_len:
                    best, best_len = [path], n
                elif n == best_len:
                    best.append(path)
        if best_len == 1 and len(parts) > 1:
            # Only the file name agrees, and the folders around it differ: another file of
            # that name. A .NET trace's own frame `in /src/Program.cs:line 10` (the user's
            # app) resolved to FluentValidation's `src/FluentValidation.Tests.Benchmarks/
            # Program.cs` and made its `Main` the failing function (user pass). A file at the
            # workspace's root matches whatever folders the trace puts above it.
            best = [path for path in best if len(PurePosixPath(path).parts) == 1]
        return best if len(best) <= MAX_FILES_PER_MENTION else []

    def _sources_of_compiled(self, name: str) -> list[str]:
        """The indexed TypeScript file names a compiled JavaScript file name comes from: a
        trace through an installed package names `dist/source/core/timed-out.js`, the
        repository holds `source/core/timed-out.ts` (got; user pass)."""
        stem, dot, extension = name.rpartition(".")
        sources = (f"{stem}.{source}" for source in _COMPILED_FROM.get(extension, ()))
        return [source for source in sources if dot and source in self.by_name]

    def resolve_dotted(self, chain: str) -> list[str]:
        """`sympy.core.expr` or `sympy.core.expr.Expr.evalf` → `sympy/core/expr.py`: the longest
        prefix of the chain that names a module file (ending at the module, not an attribute)."""
        parts = chain.split(".")
        for end in range(len(parts), 1, -1):
            prefix = parts[:end]
            hits = []
            for path in self.by_module.get(prefix[-1], []):
                module = list(PurePosixPath(path).with_suffix("").parts)
                if module and module[-1] == "__init__":
                    module = module[:-1]
                if _common_suffix(tuple(prefix), tuple(module)) == len(prefix):
                    hits.append(path)
            if hits:
                return hits if len(hits) <= MAX_FILES_PER_MENTION else []
        return []


def _common_suffix(a: Sequence[str], b: Sequence[str]) -> int:
    n = 0
    while n < len(a) and n < len(b) and a[-1 - n] == b[-1 - n]:
        n += 1
    return n


@dataclass(frozen=True)
class Evidence:
    """Resolved mentions: paths (with a strength in 0..1) and the functions frames name."""

    paths: dict[str, float]
    functions: dict[str, float]  # (path-less) function name → strength; last frame strongest
    # Where it failed: the last frame inside the workspace that names a function and resolves
    # to one file (path, line, function).
    failing: tuple[str, int, str] | None = None


def resolve(mentions: Mentions, resolver: PathResolver) -> Evidence:
    """Frames count most, the last frame (where it failed) above all; named files next;
    dotted module paths least (they are often imports the issue merely shows)."""
    paths: dict[str, float] = {}
    functions: dict[str, float] = {}

    def note(found: list[str], strength: float) -> None:
        for path in found:
            paths[path] = max(paths.get(path, 0.0), strength)

    # Frames outside the workspace (the standard library, site-packages of other projects)
    # resolve to nothing; "last" means the last frame that is in the workspace.
    frames = [(f, found) for f in mentions.frames if (found := resolver.resolve_path(f.path))]
    failing = None
    for i, (frame, resolved) in enumerate(frames):
        last = i == len(frames) - 1
        note(resolved, 1.0 if last else 0.8)
        if frame.function and not frame.function.startswith("<"):
            name = frame.function.rsplit(".", 1)[-1]
            functions[name] = max(functions.get(name, 0.0), 1.0 if last else 0.6)
            if last and len(resolved) == 1:
                failing = (resolved[0], frame.line, name)
    for written in mentions.files:
        note(resolver.resolve_path(written), 0.8)
    for chain in mentions.dotted:
        note(resolver.resolve_dotted(chain), 0.5)
    return Evidence(paths=paths, functions=functions, failing=failing)
