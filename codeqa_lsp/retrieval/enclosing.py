"""A nested function's match is evidence for the function that encloses it.

JavaScript and Python define helpers inside functions (`proto.process_params` defines
`param` and `paramCallback`; a decorator defines its wrapper). Each nested function is its
own chunk, so a question about what the enclosing function does often matches a small
helper best, which alone answers nothing: the behaviour asked about is the enclosing
function's, where the helper is called. So when a nested function ranks above the
function that encloses it, the enclosing one is moved to just above it (fetched from the
index if no arm found it). Measured on the 100 questions, hybrid hit@5 / MRR@10 (2026-11-23):
local express 0.80/0.684 → 0.84/0.722, rxjs 0.64/0.537 → 0.64/0.572; hash express MRR
0.647 → 0.667, rxjs 0.539 → 0.559; requests and click unchanged. Found by position among
the candidates as well (assigned callbacks): local rxjs 0.68 → 0.72 hit@5. Methods are not nested
functions: a class is never lifted by its methods (a question about one method does not
want the class skeleton).

Once the enclosing function is above, the nested one below it says nothing new: the
enclosing chunk's text holds it, and its citation spans its lines. `fold_nested` drops such
a chunk, so the first results are distinct places. Measured on the 100 questions, local
hybrid hit@5 / MRR@10 (2026-11-25): 0.85 / 0.717 → 0.86 / 0.720; 17 questions had a function
and a function nested in it among their first five; five answers moved up (rxjs-24 from 6
to 5, click-18 from 5 to 4), none down. A definition the query names keeps its place.

The parts of a definition split for size (`Chunk.part`) are one place too: only the
best-ranked part stays, so a long function does not fill the first results with its pieces.
Found on typer, whose `Option` and `Argument` (170 lines of annotated parameters each) took
three and two of the first five results for "how does typer decide whether a parameter
becomes a CLI option or argument". Measured 2026-11-26 (local, same session): the 100
questions unchanged (0.87 / 0.7399, no rank moved), the held-out tryout questions hybrid
MRR@10 0.627 -> 0.628 (paraphrased 0.455 -> 0.459), hit@5 0.80 =.

A function holding the message a query quotes or pastes (or raising the error it names:
`literals.py`) is the line's own function, not a helper: it is neither lifted over nor
folded, and it moves above the function enclosing it, which holds the same text
(`innermost_holders_first`). Found on redux, whose store methods are functions nested in
`createStore`: "Reducers may not dispatch actions." gave `createStore` (150 lines) and no
`dispatch`. Measured 2026-11-27 (same session): the 100 questions (local and hash) and the
tryout rank identically; none of their questions quotes a message held by a nested function.

A best match is the exception to the folding when it is no small helper
(`KEPT_NESTED_LINES`): a nested function scoring within `BEST_MATCH_SHARE` of the first result
stays just below its encloser. passport's `allFailed`, which builds the 401 reply with the
strategies' challenges, is a 72-line function nested in the authenticate middleware; asked
how that reply is built, the middleware was lifted above it and `allFailed` folded away, so no
citation pointed at it (user pass over 16 repositories, not an evaluation set: None -> 2;
pino's `child` 11 -> 2; express-session's `writetop` None -> 2). Measured 2026-11-27: the 100
questions (local and hash) and the tryout rank identically (express-07's and
rxjs-16's answers are the enclosers, still first). So is a nested function whose name the
question spells word for word (`spelled_out`): express-session's `shouldSetCookie` (11 lines)
for "where does the rolling option force the Set-Cookie header to be sent" and `shouldSave`
for "... when saveUninitialized is false" were folded into the 450-line middleware (None ->
3 and 2, user pass); a question about the encloser does not spell its helpers (express's
`param`, redux's `replaceReducer`). Same measurement: the sets rank identically.

A function that defines many functions of its own (`NAMESPACE_FUNCTIONS`) is a namespace, the
way JavaScript's factory modules are written: its functions are neither lifted over nor
folded into it. debug-js's `setup(env)` defines the whole API (createDebug, enable, enabled,
selectColor, extend, ...); each question about one of them cited `setup`'s 280 lines (user
pass, not an evaluation set: 8 of 12 probes). Measured 2026-11-27 (local, same session), at
5 functions: that pass 66 / 98 -> 67 / 102 first / top 5, the other four passes (480 probes),
the 100 questions (local and hash) and the tryout identical; the threshold's own measurement
is at `NAMESPACE_FUNCTIONS`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from codeqa_lsp.chunking.model import FUNCTION_KINDS, Chunk
from codeqa_lsp.index.tokens import STOPWORDS, name_parts
from codeqa_lsp.retrieval.priors import chunk_kind

# Only the first results matter to a reader; lifting further down changes nothing useful
# and costs index reads.
LIFT_WITHIN = 10
# A nested function this long is a place of its own, not a helper (see the module docstring):
# passport's `allFailed` has 72 lines; redux's `replaceReducer` (4 lines) answers nothing
# alone, nor does the 13-line `param` of tests/retrieval/test_enclosing.py's router.
KEPT_NESTED_LINES = 20
# A nested function scoring this share of the best result is a best match too: express-
# session's `writetop` (36 lines) scored 1.055 under its encloser `res.end`'s 1.066 and was
# folded (user pass, not an evaluation set).
# Measured 2026-11-27: the 100 questions (local and hash) and the tryout rank identically
# at 1.0 (only the first result), 0.95 and 0.9; the probes gain one more at 0.95 than at
# 1.0, and 0.9 moved fastify's `headRouteOnSendHandler` 2 -> 3.
BEST_MATCH_SHARE = 0.95
# A function defining this many functions of its own is a namespace, not a function with
# helpers: debug-js's `setup(env)` defines createDebug, enable, disable, enabled, selectColor,
# extend, coerce ... and was lifted above each, which then folded into its 280 lines (user
# pass, not an evaluation set: 8 of its 12 probes cited `setup`). Its functions are neither
# lifted over nor folded into it. Measured (2026-11-27, local, same session; six user passes,
# 720 blind probes, first / top 5 against no rule): 5 -> +1 / +4 (debug); 4 -> +1 / +5
# (node-lru-cache's `backgroundFetch` too); 3 -> +2 / +6, but factory_bot's answer 3 -> 5 under
# a three-helper method. The 100 questions (local and hash) and the tryout rank identically at
# each. 4: the most with nothing lost; three helpers are still a function's own.
NAMESPACE_FUNCTIONS = 4
# How many functions a function defines (`functions_defined_in`: the search's index read).
Nested = Callable[[Chunk], int]


def functions_defined_in(
    file_definitions: Callable[[Sequence[str]], list[tuple[str, str, str]]],
) -> Nested:
    """`Nested` over the index: how many definitions a function's symbol names directly as
    its children in its file (`file_definitions`: (id, path, symbol) of a file's chunks),
    each file read once per search."""
    symbols: dict[str, list[str]] = {}
    counts: dict[str, int] = {}

    def count(chunk: Chunk) -> int:
        if chunk.kind not in FUNCTION_KINDS:
            return 0
        if chunk.id not in counts:
            if chunk.path not in symbols:
                found = file_definitions([chunk.path])
                symbols[chunk.path] = [symbol for _, _, symbol in found]
            prefix = chunk.symbol + "."
            counts[chunk.id] = sum(1 for s in symbols[chunk.path] if _child(s, prefix))
        return counts[chunk.id]

    return count


def _child(symbol: str, prefix: str) -> bool:
    return symbol.startswith(prefix) and "." not in symbol[len(prefix) :]


def enclosing_first(
    ranked: Sequence[tuple[Chunk, float]],
    definitions: Callable[[str], list[Chunk]],
    holders: frozenset[str] = frozenset(),
    nested: Nested = lambda _: 0,
) -> list[tuple[Chunk, float]]:
    """`ranked` with each nested function's enclosing function placed just above it (when
    it ranked lower or not at all); `definitions(name)` finds indexed definitions by name.
    A function holding the query's literal (`holders`) is where it is, not evidence for
    another."""
    out = list(ranked)
    index = 0
    while index < min(len(out), LIFT_WITHIN):
        chunk, score = out[index]
        parent = None if chunk.id in holders else _enclosing(chunk, out, definitions)
        if parent is not None and nested(parent) < NAMESPACE_FUNCTIONS:
            position = next((i for i, (c, _) in enumerate(out) if c.id == parent.id), None)
            if position is None or position > index:
                if position is not None:
                    out.pop(position)
                out.insert(index, (parent, score))
                continue  # the parent's own parent, if any, is judged next
        index += 1
    return out


def enclosers_placed(
    ranked: Sequence[tuple[Chunk, float]],
    definitions: Callable[[str], list[Chunk]],
    holders: frozenset[str],
    asked: frozenset[str] = frozenset(),
    nested: Nested = lambda _: 0,
) -> tuple[list[tuple[Chunk, float]], frozenset[str]]:
    """`enclosing_first`, then `innermost_holders_first`; with the ids `fold_nested` must
    keep: the best matches (`best_matches_kept`), the functions whose name the question
    spells (`asked`, its tokens; `spelled_out`) and the functions of a namespace (`nested`)."""
    lifted = enclosing_first(ranked, definitions, holders, nested)
    spelled = {c.id for c, _ in lifted[:LIFT_WITHIN] if spelled_out(c, asked)}
    outers: dict[str, list[Chunk]] = {}  # the first results' functions, by file
    for chunk, _ in lifted[:LIFT_WITHIN]:
        if chunk.kind in FUNCTION_KINDS:
            outers.setdefault(chunk.path, []).append(chunk)
    namespaced = {  # `nested` reads the index: asked only of a function enclosing another
        c.id
        for c, _ in lifted
        if c.path in outers
        and any(_encloses(o, c) and nested(o) >= NAMESPACE_FUNCTIONS for o in outers[c.path])
    }
    kept = best_matches_kept(ranked) | spelled | namespaced
    return innermost_holders_first(lifted, holders), frozenset(kept)


def spelled_out(chunk: Chunk, asked: frozenset[str]) -> bool:
    """Whether every word of a function's name (stopwords aside) is among the question's
    tokens: "where does the rolling option force the Set-Cookie header" spells
    express-session's nested `shouldSetCookie`, which is the answer, not a helper."""
    if chunk.kind not in FUNCTION_KINDS or chunk.parts > 1:  # a split definition shows once
        return False
    if chunk_kind(chunk) in ("test", "example"):  # body-parser's tests' `verify` callbacks
        return False
    words = [t for t in name_parts(chunk.name) if t not in STOPWORDS]
    return bool(words) and all(word in asked for word in words)


def best_matches_kept(ranked: Sequence[tuple[Chunk, float]]) -> frozenset[str]:
    """The functions of `ranked` (before `enclosing_first`) that are no small helper and
    score within BEST_MATCH_SHARE of the best: each is a best match of its own, kept just
    below the function enclosing it instead of being folded into it."""
    if not ranked:
        return frozenset()
    bar = ranked[0][1] * BEST_MATCH_SHARE
    return frozenset(
        chunk.id
        for chunk, score in ranked[:LIFT_WITHIN]
        if score >= bar
        and chunk.kind in FUNCTION_KINDS
        and chunk.parts == 1  # a split definition shows once
        and chunk.end_line - chunk.start_line + 1 >= KEPT_NESTED_LINES
    )


def innermost_holders_first(
    ranked: Sequence[tuple[Chunk, float]], holders: frozenset[str]
) -> list[tuple[Chunk, float]]:
    """`ranked` with each function holding the query's literal moved just above the first
    function of its file that encloses it: both hold the quoted message, the nested one
    says where it is."""
    out = list(ranked)
    for index in range(min(len(out), LIFT_WITHIN)):
        chunk = out[index][0]
        if chunk.id not in holders or chunk.kind not in FUNCTION_KINDS:
            continue
        above = next((i for i, (c, _) in enumerate(out[:index]) if _encloses(c, chunk)), None)
        if above is not None:
            out.insert(above, out.pop(index))
    return out


def fold_nested(
    ranked: Sequence[tuple[Chunk, float]], keep: set[str] | frozenset[str] = frozenset()
) -> list[tuple[Chunk, float]]:
    """`ranked` without each function whose lines lie inside a function ranked above it in
    the same file (its text is part of that one's), and without each part of a split
    definition once a part of it ranked above (`_same_definition`); chunks whose id is in
    `keep` stay."""
    out: list[tuple[Chunk, float]] = []
    functions: dict[str, list[Chunk]] = {}  # per file, the functions kept so far
    shown: set[tuple[str, str, str, int]] = set()
    for chunk, score in ranked:
        if chunk.parts > 1:
            definition = _same_definition(chunk)
            if definition in shown and chunk.id not in keep:
                continue
            shown.add(definition)
        inside = chunk.kind in FUNCTION_KINDS and any(
            _encloses(above, chunk) for above in functions.get(chunk.path, ())
        )
        if inside and chunk.id not in keep:
            continue
        out.append((chunk, score))
        if chunk.kind in FUNCTION_KINDS:
            functions.setdefault(chunk.path, []).append(chunk)
    return out


def _same_definition(chunk: Chunk) -> tuple[str, str, str, int]:
    """What the parts of one split definition share (`Chunk`: parts share the symbol)."""
    return (chunk.path, chunk.symbol, chunk.kind, chunk.parts)


def _enclosing(
    chunk: Chunk,
    ranked: Sequence[tuple[Chunk, float]],
    definitions: Callable[[str], list[Chunk]],
) -> Chunk | None:
    if chunk.kind not in FUNCTION_KINDS:
        return None
    # Among the candidates, by position: a nested function's symbol does not always name
    # what encloses it (`socket.onopen = () => ...` inside `WebSocketSubject._connectSocket`).
    around = [c for c, _ in ranked if c.parts == 1 and _encloses(c, chunk)]
    if around:
        return min(around, key=lambda c: c.end_line - c.start_line)
    if "." not in chunk.symbol:
        return None
    owner = chunk.symbol.rsplit(".", 1)[0]
    for candidate, _ in ranked:
        if _is_enclosing(candidate, chunk, owner):
            return candidate
    name = owner.rsplit(".", 1)[-1]
    found = [c for c in definitions(name) if _is_enclosing(c, chunk, owner)]
    return min(found, key=lambda c: c.part) if found else None


def _encloses(outer: Chunk, inner: Chunk) -> bool:
    """`outer` is a function of `inner`'s file whose lines hold `inner`'s (and more)."""
    return (
        outer.path == inner.path
        and outer.kind in FUNCTION_KINDS
        and outer.start_line <= inner.start_line
        and inner.end_line <= outer.end_line
        and (outer.start_line, outer.end_line) != (inner.start_line, inner.end_line)
    )


def _is_enclosing(candidate: Chunk, chunk: Chunk, owner: str) -> bool:
    return (
        candidate.path == chunk.path
        and candidate.symbol == owner
        and candidate.kind in FUNCTION_KINDS
        # a piece of a split definition need not span the nested one itself
        and (
            candidate.parts > 1
            or (candidate.start_line <= chunk.start_line and candidate.end_line >= chunk.end_line)
        )
    )
