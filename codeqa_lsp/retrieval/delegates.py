"""Delegates and forwarders: functions whose body only calls another definition.

Go packages expose a default instance through package functions that forward to it
(viper's `func AutomaticEnv() { v.AutomaticEnv() }`, pflag's `func Int64P(...) { return
CommandLine.Int64P(...) }`, go-retryablehttp's `Post`, zap's globals), and Python and
JavaScript modules do the same. Such a function repeats its target's name, parameters and
often its doc comment, so it matches a question as well as the method that does the work, and
the pair takes two of the top five. Like a declaration (`graph._declarations_below_
implementations`), a delegate whose target is also a candidate goes just below it, and at
most to half its own score: the places after the target are for other code
(`graph.delegates_below_targets`, applied to the second stage's ranking by
`graph.delegates_placed`, after the priors: a thin target weighs less than its delegate).

The target must be a method. A function of the same name elsewhere is not reliably the
target: CoSQA's snippets forward to library functions (`def dumps(obj): return
json.dumps(obj)`) and share names with unrelated snippets; with functions as targets CoSQA
dev hybrid nDCG@10 fell 0.5997 -> 0.5968, with methods only it is unchanged. A delegate
whose target is no candidate keeps its place (validator's `containsAny` forwards to the
standard library's `strings.ContainsAny`: it is the implementation there).

Measured 2026-11-27 (local, same session): in a user pass over viper (not an evaluation
set) `Viper.Sub` 2 -> 1, `Viper.getEnv` 4 -> 2, `getConfigManager` 5 -> 3, `Viper.writeConfig`
9 -> 7, `Viper.find` from outside the first 20 to 20th (the package functions `AutomaticEnv`
and `SetEnvPrefix` had held 2 of the top 4 beside their methods); the 100 questions (local
and hash), the tryout, CoSQA, SWE-bench and five more user passes rank identically.

A forwarder to another name is the same kind of place: a function whose body is one call
(rxjs's `switchAll() { return switchMap(identity); }`, commons-csv's `toMap()` returning
`putIn(new LinkedHashMap<>())`) says nothing of the behaviour a question asks about; the
function it calls does the work. So among the first `FORWARDER_WITHIN` results a forwarder
gives its place to the definition it calls (fetched from the index when no arm found it) and
goes to just after them (`targets_lead_forwarders`). The target is the definition of that
name in the forwarder's file (its own class first); else a type's member for a call on the
type (`FactoryBot.aliases_for(...)`), the module named after the function for a bare call
(`switchMap.ts`); a call on a variable (`strings.ContainsAny(...)`) resolves in the file
only. A forwarder the question names keeps its place, its target just below.
Measured 2026-11-27 (local, same session): the 100 questions hybrid hit@5 / MRR@10 0.87 /
0.7385 -> 0.88 / 0.7435 (rxjs-13, "which flattening operator cancels the previous inner one":
`exhaustAll` and `switchAll` had the first places, `switchMap` none -> 2), hash MRR@10 0.6580
-> 0.6597; the tryout, CoSQA and SWE-bench Lite (hash) identical; 1,080 user probes 526 / 849
-> 528 / 851 first / top 5 (commons-csv's `putIn` none -> 5, factory_bot's `aliases_for` none
-> 4, cast's `toStringMapIntE` and cachetools's `typedkey` 2 -> 1; rust-csv's
`check_field_count` 9 -> 10). Leaving the forwarder just below its target instead (in an
experiment that resolved any unique name): 529 / 850 against 529 / 851, the 100 questions
0.88 / 0.7419 against 0.88 / 0.7435.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence

from codeqa_lsp.chunking.model import FUNCTION_KINDS, Chunk
from codeqa_lsp.retrieval.priors import DECLARATION_PRIOR

# A delegate's score at most this share of its own once its target is a candidate: the
# prior a declaration gets.
DELEGATE_SHARE = DECLARATION_PRIOR
# Lines that say nothing: comments, and a Python docstring's lines.
_COMMENT_LINE = re.compile(r"^\s*(?://|#|/\*|\*)")
_DOCSTRING = re.compile(r'("""|\'\'\')[\s\S]*?\1')
# One call statement, its value returned or not: `name(args)`, `receiver.name(args)` (also
# `::`, `->`), type arguments allowed (`name<T>(args)`); group 1 the receiver, group 2 the name.
_FORWARD = re.compile(
    r"^\s*(?:return\s+)?(?:await\s+)?((?:[\w$]+(?:\.|::|->))*)([\w$]+)\s*(?:<[^()]*>)?\s*\(.*\)"
    r"\s*;?\s*$"
)
# Receivers that are the forwarder's own object: its class's methods are the targets.
_OWN = frozenset({"self.", "this.", "this->", "Self::", "static::", "self::"})
# Calls that name no definition of the code's own.
_NOT_A_TARGET = frozenset({"super", "this", "self", "new", "print", "println", "apply", "call"})
# A receiver naming a type or module (`FactoryBot.`, `Strings::`): the target is its member.
_TYPE_RECEIVER = re.compile(r"(?:^|\.|::)([A-Z][\w$]*)(?:\.|::|->)$")
# Results a forwarder is looked for in: the ones a reader sees first.
FORWARDER_WITHIN = 5
_CLOSERS = frozenset({"}", "end", "};"})
# A delegate is a few lines (doc comments aside); anything longer is read no further, which
# also bounds the regular expressions' work on a hostile chunk.
_MAX_LINES = 12
_MAX_CHARS = 4000


def forwards_to(chunk: Chunk) -> str | None:
    """The name a top-level function only forwards to, when it is its own name; else None."""
    if chunk.kind != "function" or "." in chunk.symbol or chunk.declaration:
        return None
    # Cheap tests first (a search reads every candidate): short, and its name said twice.
    if len(chunk.text) > _MAX_CHARS or chunk.text.count(chunk.name) < 2:
        return None
    call = _one_call(chunk)
    return chunk.name if call is not None and call[0] and call[1] == chunk.name else None


def forwarded_call(chunk: Chunk) -> tuple[str, str] | None:
    """(receiver, name) of the one call a function or method makes and does nothing else,
    when the name is another than its own (the receiver "" for a bare call); else None."""
    if chunk.kind not in FUNCTION_KINDS or chunk.declaration:
        return None
    call = _one_call(chunk)
    if call is None or call[1] == chunk.name or call[1] in _NOT_A_TARGET:
        return None
    return call


def _one_call(chunk: Chunk) -> tuple[str, str] | None:
    """(receiver, name) when `chunk`'s body is one call statement, signature and comments
    aside (Python's docstring, decorators and attributes too)."""
    if len(chunk.text) > _MAX_CHARS:
        return None
    text = _DOCSTRING.sub("", chunk.text) if chunk.language == "python" else chunk.text
    lines = [line for line in text.split("\n") if line.strip() and not _COMMENT_LINE.match(line)]
    while lines and lines[0].lstrip().startswith(("@", "#[")):  # decorators, attributes
        lines = lines[1:]
    if len(lines) == 1 and "{" in lines[0] and lines[0].rstrip().endswith("}"):  # one line
        head, _, rest = lines[0].partition("{")
        lines = [head, rest.rstrip()[:-1], "}"]
    if len(lines) > _MAX_LINES or len(lines) < 2 or chunk.name not in lines[0]:
        return None
    body = lines[1:-1] if lines[-1].strip() in _CLOSERS else lines[1:]
    if len(body) != 1:
        return None
    match = _FORWARD.match(body[0])
    return (match.group(1), match.group(2)) if match else None


def targets_lead_forwarders(
    ranked: Sequence[tuple[Chunk, float]],
    definitions: Callable[[str], list[Chunk]],
    named: Collection[str],
    holders: Collection[str] = (),
) -> list[tuple[Chunk, float]]:
    """`ranked` with each forwarder among the first `FORWARDER_WITHIN` replaced by the
    definition it calls (`forwarded_call`, `forward_target`), the forwarder moved to just
    after those first results; a forwarder whose id is in `named` (the question names it)
    keeps its place, its target just below it. One in `holders` (it holds the message the
    query quotes: `fail("no such key: %s", key)` writes it) is the answer and stays."""
    out = list(ranked)
    i = 0
    while i < min(FORWARDER_WITHIN, len(out)):
        chunk, score = out[i]
        call = forwarded_call(chunk) if chunk.id not in holders else None
        target = forward_target(chunk, call, definitions) if call is not None else None
        at = (
            next((j for j, (c, _) in enumerate(out) if c.id == target.id), None) if target else None
        )
        if target is None or (at is not None and at < i):
            i += 1
            continue
        own = out.pop(at)[1] if at is not None else score
        if chunk.id in named:
            out.insert(i + 1, (target, min(own, score)))
            i += 2
            continue
        out[i] = (target, score)  # the place and its score
        place = max(i + 1, min(FORWARDER_WITHIN, len(out)))
        out.insert(place, (chunk, min(score, out[place - 1][1])))  # scores stay in order
        i += 1
    return out


def forward_target(
    chunk: Chunk, call: tuple[str, str], definitions: Callable[[str], list[Chunk]]
) -> Chunk | None:
    """The definition `chunk`'s one call (`forwarded_call`) reaches: of that name in its file,
    its own class's first; else, for a call on a type or module (`FactoryBot.aliases_for`),
    that owner's; for a bare call or one on its own object, the one module named after it
    (rxjs's `switchMap.ts`). A name alone is no address: CoSQA's snippets, one function a
    file, call functions that unrelated snippets define; resolved by name alone, the step cost
    CoSQA dev hybrid nDCG@10 0.5997 -> 0.5963 (with the module rule: 0.5997, unchanged)."""
    receiver, name = call
    found = [
        c
        for c in definitions(name)
        if c.kind in FUNCTION_KINDS and not c.declaration and c.part == 0
    ]
    in_file = [c for c in found if c.path == chunk.path]
    owner = chunk.symbol.rpartition(".")[0]
    own = [c for c in in_file if c.symbol.rpartition(".")[0] == owner]
    if own or in_file:
        return (own or in_file)[0]
    named = _TYPE_RECEIVER.search(receiver) if receiver not in _OWN else None
    if named:
        typed = [c for c in found if c.symbol.rpartition(".")[0].endswith(named.group(1))]
        return typed[0] if len(typed) == 1 else None
    if receiver and receiver not in _OWN:
        return None
    modules = [c for c in found if _module_name(c.path) == _module_name(name)]
    return modules[0] if len({(c.path, c.symbol) for c in modules}) == 1 else None


def _module_name(path: str) -> str:
    """A file's name without folders and extensions, lowercase, without `_` and `-`: what a
    one-function module is named after (`switch-map.ts`, `switchMap.ts` for `switchMap`)."""
    return path.rsplit("/", 1)[-1].split(".", 1)[0].replace("_", "").replace("-", "").lower()
