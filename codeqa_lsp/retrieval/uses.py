"""Questions about where a definition is used: `who calls rebuild_auth?`, `where is
merge_setting called?`, `usages of ServiceRegistrar`.

Such a question is answered by the code that refers to the definition, not by the definition
alone, and neither arm ranks that code for it: BM25 and the embedder both rank what *looks*
like the question, which is the definition and its namesakes (requests: "who calls
rebuild_auth" gave `rebuild_auth`, `rebuild_method`, `rebuild_proxies`, ... and never
`resolve_redirects`, its one caller).

So when the question asks for uses and names a definition the index has (the fast path's
named definitions, `search.py`), the chunks that use that name follow the definition at the
top of the results: found through the name's own BM25 term (the whole identifier, one token
in the index), kept when their code mentions the name as a word once comments and strings are
blanked (`chunking/code_text.py`). By name, so it works alike in every language the chunker
reads, those without a reference query included; a definition of the same name elsewhere is
not a use, nor is the class whose skeleton lists the method's signature.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence, Set
from dataclasses import replace
from pathlib import PurePosixPath

from codeqa_lsp.chunking.code_text import code_only
from codeqa_lsp.chunking.model import Chunk
from codeqa_lsp.index.tokens import STOPWORDS, tokenize
from codeqa_lsp.retrieval.model import Use
from codeqa_lsp.retrieval.priors import chunk_kind, is_code
from codeqa_lsp.retrieval.query import (
    QueryInfo,
    looks_like_identifier,
    symbol_matches,
    with_dots,
)

# The words of a question about uses, shared by the two patterns below.
_VERBS = r"calls?|invokes?|uses?|references?"
_OF = r"callers? of|usages of|uses of|call[- ]sites? (?:of|for)|references to"
_PASSIVE = r"called|invoked|used|referenced"
_ASKS_FOR_USES = re.compile(
    rf"\b(?:who|what|which)\b(?:\s+[\w`.()]+){{0,3}}?\s+(?:{_VERBS})\b"
    # Not "usage" (a CLI's usage line) nor a lone "caller" ("how can a caller remove ...").
    rf"|\b(?:callers|usages|{_OF})\b"
    rf"|\bwhere\b[^?.;]{{0,80}}?\b(?:{_PASSIVE})\b",
    re.IGNORECASE,
)
# Uses placed after the named definitions; the rest keep their ranks below them.
MAX_USES = 10
# A plain word defined more often than this is too common to tell its uses by name (`get`,
# `run`); up to it, a name the fast path leaves (more than `named.MAX_NAMED_DEFINITIONS`) is
# an overridden method, and every call of the name is a call of one of its definitions. A
# name shaped like an identifier (`_deserialize`, `parseNode`) says what it is however often
# it is overridden (marshmallow defines `_deserialize` 25 times, tests included), up to
# `MAX_OVERRIDES_NAMED`.
MAX_OVERRIDES = 25
MAX_OVERRIDES_NAMED = 200
# Chunks read for the name's term: a name used in more places than this is listed by its
# best-matching uses only.
USE_CANDIDATES = 200
# Read when those are all taken and the uses are still short of the limit: the term is shared
# with words the name is not (`_deserialize` is the term `deserialize`, stemmed as
# "deserialization" is: marshmallow's 200 best were tests named for deserialization, and
# `Schema._do_load`, a caller, was not among them). Costs ~10 ms more for a common term
# (75,823 stdlib chunks: 200 in 2 ms, 1,000 in 10 ms).
DEEP_USE_CANDIDATES = 1000

BM25Lookup = Callable[[list[str], int], Sequence[tuple[Chunk, float]]]
Ranked = list[tuple[Chunk, float]]
# Chunk id → the lines where it uses the name, for each use that leads a ranking.
Used = dict[str, tuple[int, ...]]


# The name a question about uses is about, even when it is not shaped like an identifier
# (`who calls getpreferredencoding`, `where is linenoise used`): the word after the verb,
# or between "where is" and "called".
# A trailing `!` is part of the name: Ruby's `route!`, `save!` (sinatra: "who calls route!"
# listed the callers of `route`); named.py falls back to the bare name for a Rust macro.
_SUBJECT = re.compile(
    rf"\b(?:{_VERBS}|{_OF})\s+(?:the\s+)?`?([A-Za-z_$][\w$.]*!?)"
    r"|\bwhere\s+(?:is|are|does|do)\s+(?:the\s+)?`?([A-Za-z_$][\w$.]*!?)`?(?:\(\))?"
    rf"\s+(?:\w+\s+){{0,2}}?(?:{_PASSIVE})\b",
    re.IGNORECASE,
)


def asks_for_uses(question: str) -> bool:
    """Does the question ask who calls or uses something (not what it does)?"""
    return bool(_ASKS_FOR_USES.search(question))


def with_subject(info: QueryInfo) -> QueryInfo:
    """`info` with the name a question about uses asks about among its identifiers (first),
    when the identifier finder did not take it (a plain lowercase word)."""
    match = _SUBJECT.search(with_dots(info.text))
    found = next((g for g in match.groups() if g), None) if match else None
    word = (found or "").rstrip(".")
    if len(word) < 3 or word.lower() in STOPWORDS or word in info.identifiers:
        return info
    return replace(info, identifiers=(word, *info.identifiers))


def uses_of(
    named: Sequence[Chunk],
    lookup: BM25Lookup,
    limit: int = MAX_USES,
    skip: Set[str] = frozenset(),
    name: str | None = None,
) -> list[Use]:
    """Up to `limit` chunks whose code uses the name of a definition in `named`, in the
    name's BM25 order, module chunks (imports, script code) last. `skip`: ids not to list
    (the named definitions as ranked).

    A name that other definitions share (`generate` of another class) is ambiguous by
    name alone: then only uses in a named definition's file, or in code that also names
    its class or module, are kept (fd: `CommandTemplate.generate` was said to be used by
    `main.rs`'s `clap_complete::generate(...)` call). `name`: the name when `named` define it
    by assignment (a module chunk holding `#define LIMIT 1000`, `constants.py`)."""
    names = {name} if name else {chunk.name for chunk in named}
    keys = {(chunk.path, chunk.symbol) for chunk in named}
    owners = {chunk.symbol.rsplit(".", 1)[0] for chunk in named if "." in chunk.symbol}
    mentions: dict[str, tuple[Chunk, str]] = {}  # chunk → the name it has as a word
    ambiguous = False
    for name in sorted(names):
        pattern = _word(name)
        through = re.compile(rf"(?:\.|->|::)\s*{re.escape(name)}\s*\(")
        terms = tokenize(name)[:1]  # the whole identifier's token comes first
        candidates = lookup(terms, USE_CANDIDATES) if terms else []
        if len(candidates) == USE_CANDIDATES and len(mentions) < limit:
            candidates = lookup(terms, DEEP_USE_CANDIDATES)
        for chunk, _ in candidates:
            if chunk.id in skip or chunk.id in mentions or not is_code(chunk):
                continue
            if chunk.name in names and chunk.kind != "module":
                # The definition itself (any part), or a namesake: not a use, unless the
                # namesake calls the name on another object (a proxy's `map` calling
                # `$this->routeCollector->map(...)`, Slim; an override's `super().f()`).
                namesake = (chunk.path, chunk.symbol) not in keys
                ambiguous = ambiguous or namesake
                if not (namesake and through.search(chunk.text)):
                    continue
            if chunk.symbol in owners and chunk.kind == "class":
                continue  # the class skeleton listing the method's signature
            if pattern.search(chunk.text):
                mentions[chunk.id] = (chunk, name)
    listed = list(mentions.values())
    if ambiguous:
        paths = {path for path, _ in keys}
        # The class, or the module a call qualifies a function with (`locale.getpreferred
        # encoding(...)`); in any case, as an instance is named after its class
        # (`$this->routeCollector->map(...)`, `session.send(...)`).
        words = {owner.rsplit(".", 1)[-1] for owner in owners} | {_module(p) for p in paths}
        words |= {w[:1].lower() + w[1:] for w in words}  # `routeCollector` for RouteCollector
        qualifiers = [_word(w) for w in words if w]
        listed = [
            (chunk, name)
            for chunk, name in listed
            if chunk.path in paths or any(q.search(chunk.text) for q in qualifiers)
        ]
    # Library code first, then tests and examples; module-level code (imports) last. Stable:
    # BM25 order within each. Only as many are parsed (comments and strings blanked) as are
    # listed: a name used in hundreds of places costs `limit` parses, not hundreds.
    listed.sort(key=lambda item: (item[0].kind == "module", chunk_kind(item[0]) != "source"))
    uses: list[Use] = []
    for chunk, name in listed:
        lines = use_lines(chunk, name)
        if lines:
            uses.append(Use(chunk, lines))
            if len(uses) >= limit:
                break
    # A use inside a nested function is listed there, not again as its enclosing one's.
    inner = {
        (u.chunk.path, u.chunk.symbol.rsplit(".", 1)[0]) for u in uses if "." in u.chunk.symbol
    }
    return [u for u in uses if (u.chunk.path, u.chunk.symbol) not in inner]


# What precedes a name that a line defines rather than uses: `def f`, `fn f`, `func f`,
# `func (r *T) f`, `function f`, `sub f`.
_DEFINES = re.compile(r"\b(?:def|fn|func|function|sub)\s+(?:\([^()]*\)\s*)?$")
# A line that imports or re-exports the name: it makes the name available, it does not use it
# (hono: `compose` was "used by" two files' `import { compose } from ...` lines).
_IMPORTS = re.compile(
    r"[ \t]*(?:import\b|from\s+\S+\s+import\b|export\s*(?:\{|\*)|use\s|#\s*include\b"
    r"|(?:const|let|var)\s+\{[^}]*\}\s*=\s*require\b)"
)


def _use_offsets(code: str, pattern: re.Pattern[str]) -> list[int]:
    """Where `code` uses the name (`pattern`) other than by defining or importing it. A test
    that overrides the method in a subclass of its own defines it (marshmallow: two tests that
    define `_deserialize` on a custom field were listed as its callers)."""
    found = []
    for match in pattern.finditer(code):
        line_start = code.rfind("\n", 0, match.start()) + 1
        if _DEFINES.search(code, line_start, match.start()) or _IMPORTS.match(code, line_start):
            continue
        found.append(match.start())
    return found


def use_lines(chunk: Chunk, name: str) -> tuple[int, ...]:
    """The lines (1-based, in the file) where `chunk`'s code uses `name`."""
    code = code_only(chunk.text, chunk.language)
    offsets = _use_offsets(code, _word(name))
    return tuple(dict.fromkeys(chunk.start_line + code.count("\n", 0, at) for at in offsets))


def _word(name: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w$]){re.escape(name)}(?![\w$])")


def _module(path: str) -> str:
    """The name code imports a file by: its stem, or its directory's for a package file."""
    parts = PurePosixPath(path).with_suffix("").parts
    if len(parts) > 1 and parts[-1] in ("__init__", "index", "mod"):
        return parts[-2]
    return parts[-1] if parts else ""


def uses_led(
    ranked: Ranked,
    named_ids: set[str],
    identifiers: Sequence[str],
    lookup: BM25Lookup,
    definitions: Callable[[str], Sequence[Chunk]],
) -> tuple[Ranked, Used]:
    """The ranking of a question about uses: `uses_first` when the fast path named the
    subject's definitions, else `overrides_used_first`."""
    if named_ids:
        return uses_first(ranked, named_ids, lookup, identifiers)
    return overrides_used_first(ranked, identifiers, definitions, lookup)


def uses_first(
    ranked: Ranked,
    named_ids: set[str],
    lookup: BM25Lookup,
    identifiers: Sequence[str] = (),
) -> tuple[Ranked, Used]:
    """`ranked` with the named definitions first, then up to `MAX_USES` chunks that use them
    (library code before tests; those already ranked in their order, then the others by the
    name's BM25), then the rest; and the lines of each use. Scores stay in descending order
    (folders' results are merged by score).

    The subject is the first of the query's `identifiers` that names a definition: a
    follow-up ("and where is it called from?") is searched with the previous question and
    the symbols its answer cited, and the uses asked for are those of the question's subject,
    not of every class the answer also cited."""
    named = [chunk for chunk, _ in ranked if chunk.id in named_ids]
    name = None
    for identifier in identifiers:
        subject = [chunk for chunk in named if symbol_matches(chunk.symbol, identifier)]
        if subject:
            named = subject
            break
    else:  # no symbol is the name: the named chunks assign it (a constant, `constants.py`)
        lasts = (identifier.rsplit(".", 1)[-1] for identifier in identifiers)
        name = next((n for n in lasts if any(_word(n).search(c.text) for c in named)), None)
        if name is None:
            return ranked, {}
    uses = _ranked_uses(ranked, named, lookup, name) if named else []
    if not uses:
        return ranked, {}
    return _led_by(ranked, named + [u.chunk for u in uses]), {u.chunk.id: u.lines for u in uses}


def overrides_used_first(
    ranked: Ranked,
    identifiers: Sequence[str],
    definitions: Callable[[str], Sequence[Chunk]],
    lookup: BM25Lookup,
) -> tuple[Ranked, Used]:
    """`ranked` led by the code that uses a name defined too often for the fast path (more
    than its handful; a plain word at most `MAX_OVERRIDES` times): an overridden method,
    whose callers call it on whichever subclass (marshmallow: "who calls _deserialize" gave
    five of its 25 definitions and no caller; `Field.deserialize` and `Schema._do_load` call
    it). The definitions do not lead: listing 25 of them would bury the callers asked for.
    `definitions(name)`: the indexed definitions of that name."""
    for identifier in identifiers:
        found = [
            chunk
            for chunk in definitions(identifier.rsplit(".", 1)[-1])
            if chunk.part == 0 and symbol_matches(chunk.symbol, identifier)
        ]
        if found:
            most = MAX_OVERRIDES_NAMED if looks_like_identifier(identifier) else MAX_OVERRIDES
            if len(found) > most:
                return ranked, {}  # `get`, `run`: by name alone a use could be anything's
            uses = _ranked_uses(ranked, found, lookup)
            return _led_by(ranked, [u.chunk for u in uses]), {u.chunk.id: u.lines for u in uses}
    return ranked, {}


def _ranked_uses(
    ranked: Ranked,
    named: Sequence[Chunk],
    lookup: BM25Lookup,
    name: str | None = None,
) -> list[Use]:
    """Up to `MAX_USES` uses of `named` (of `name`, when given): library code before tests,
    module code last, those already ranked in their order, then the others by the name's
    BM25."""
    found = uses_of(named, lookup, 3 * MAX_USES, skip={c.id for c in named}, name=name)
    position = {chunk.id: i for i, (chunk, _) in enumerate(ranked)}
    uses = sorted(
        found,
        key=lambda u: (
            u.chunk.kind == "module",
            chunk_kind(u.chunk) != "source",
            position.get(u.chunk.id, 1 << 30),
        ),
    )
    return uses[:MAX_USES]


def _led_by(ranked: Ranked, head: list[Chunk]) -> Ranked:
    """`ranked` with `head` first, in its order. Scores stay in descending order (folders'
    results are merged by score)."""
    if not head or not ranked:
        return ranked
    head_ids = {chunk.id for chunk in head}
    top = max(score for _, score in ranked)
    floor = top - len(head) * 1e-6
    rest = [(chunk, min(score, floor)) for chunk, score in ranked if chunk.id not in head_ids]
    return [(chunk, top - i * 1e-6) for i, chunk in enumerate(head)] + rest
