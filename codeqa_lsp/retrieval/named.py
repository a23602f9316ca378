"""The exact-symbol fast path: definitions a query names, first or boosted.

`where is parse_args` wants the definition of `parse_args` first, whatever the arms say; a
longer question that mentions `parse_args` wants it lifted, not forced above what the question
is really about. Which definitions a query names (`named_definitions`) and what that does to
the fused order (`with_named`, and `named_first` after the second stage) live here;
`search.py` calls them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from codeqa_lsp.chunking.model import Chunk
from codeqa_lsp.retrieval.constants import assigned
from codeqa_lsp.retrieval.priors import chunk_kind
from codeqa_lsp.retrieval.project import spells_name
from codeqa_lsp.retrieval.query import QueryInfo, symbol_matches

# A name defined in more places than this is no fast path (`get` defined fifty times): the
# arms rank its definitions like any other candidates.
MAX_NAMED_DEFINITIONS = 5
# A named definition in a longer question gains this share of the best fused score: enough
# to lift it into the top results, not enough to bury what the question is really about.
SYMBOL_BOOST = 0.5

# Top-level definitions an alias-qualified name (`z.object`) may resolve to: one module's,
# or two where a package ships two flavours of one API (zod's classic and mini `object`).
ALIASED_DEFINITIONS = 2

# The auxiliaries a question puts before the verb it asks about ("how does freeze ...").
_ASKING_VERBS = frozenset({"does", "do", "did", "can", "could", "should", "will", "would"})
# "the Parse method of FlagSet", "the method parse in Parser", "FlagSet's Parse method": a
# member named with its kind and its owner (pflag, user pass: the struct `FlagSet` and its
# `Parsed` came first, `FlagSet.Parse` fifth).
_MEMBER_KINDS = frozenset({"method", "function", "member", "property", "field", "constructor"})
_OWNER_LINKS = frozenset({"of", "in", "on"})
_WORDS = re.compile(r"[A-Za-z_$][\w$]*")

Definitions = Callable[[str], list[Chunk]]  # name → its definitions passing the filters
TermLookup = Callable[[list[str], int], Sequence[tuple[Chunk, float]]]  # BM25 terms, limit


def named_definitions(
    info: QueryInfo,
    definitions: Definitions,
    constants: TermLookup | None = None,
    project: frozenset[str] = frozenset(),
) -> list[Chunk]:
    """Indexed definitions the query names, at most a handful per identifier. A question's
    (`constants`, a BM25 lookup, given) also reach code assigning a name nothing else
    defines (`constants.py`) and names behind an import alias (`_through_alias`): both are
    guesses, and a pasted issue or traceback names dozens of identifiers (an httpx traceback's
    `httpx.InvalidURL` put the exception's class above the function raising it).

    Code is named, never a doc section titled like it (cJSON's README section `cJSON`). A
    question about anything else names the project, not a definition, with the project's
    own name (`project`, `project.name_terms`): "how does cJSON parse a number" ranked the
    struct `cJSON` and the README first, `parse_number` 4th (user pass over DaveGamble/cJSON);
    "where is cJSON defined" and "what is cJSON" still find the struct."""
    found: dict[str, Chunk] = {}
    question = constants is not None
    for ident in info.identifiers:
        if (
            question
            and info.other_terms
            and ident not in info.kinded
            and spells_name(ident, project)
        ):
            continue
        qualifier, _, name = ident.rpartition(".")
        named = _code_defining(name, definitions)
        if not named and name.endswith("!"):  # `json!`: a Rust macro, defined as `json`
            ident, name = ident[:-1], name[:-1]
            named = _code_defining(name, definitions)
        if not named and question and (camel := _camel_spelling(name)):
            ident, name = ident[: len(ident) - len(name)] + camel, camel
            named = _code_defining(name, definitions)
        matches = [c for c in named if symbol_matches(c.symbol, ident)]
        if question and not matches and qualifier.count(".") >= 1:
            matches = _without_namespace(named, ident)
        if question and not matches and qualifier and not definitions(qualifier.split(".")[-1]):
            matches = _through_alias(info, named, name)
        matches = _without_constructors(matches)
        if len(matches) > MAX_NAMED_DEFINITIONS:  # tests' namesakes go first (hono: 9)
            matches = [c for c in matches if chunk_kind(c) != "test"] or matches
        if constants is not None and not matches:
            matches = _assigned(qualifier, name, constants)
        if question and info.other_terms:
            matches = _members_asked(matches, info.text, info.other_terms, definitions)
        if 0 < len(matches) <= MAX_NAMED_DEFINITIONS:
            for chunk in matches:
                found.setdefault(chunk.id, chunk)
    return list(found.values())


def _members_asked(
    matches: list[Chunk], text: str, words: Sequence[str], definitions: Definitions
) -> list[Chunk]:
    """A named class's member that the question names by a plain word stands for it: "how
    does freeze convert BytesMut into Bytes" asks about `BytesMut.freeze`, not the struct
    (user pass over tokio-rs/bytes: the struct first, `freeze` third). The word must be
    where a question puts what it asks about: right after the class's name ("the OkHttpCall
    execute", retrofit), its own verb ("how does freeze") or its kind and owner ("the Parse
    method of FlagSet", `_named_with_owner`); a noun elsewhere names no member ("grow its
    buffer when reserving more capacity" is not about `capacity`)."""
    classes = {c.symbol: c for c in matches if c.kind == "class"}
    if not classes:
        return matches
    tokens = _WORDS.findall(text)
    lowered = [t.lower() for t in tokens]
    names = {c.name for c in classes.values()}
    asked = {
        lowered[i]
        for i in range(1, len(tokens))
        if tokens[i - 1] in names or lowered[i - 1] in _ASKING_VERBS
    } | _named_with_owner(tokens, lowered, names)
    # The word as written and capitalised too: Go's exported methods are (`FlagSet.Parse`
    # for "how does FlagSet parse unknown flags").
    spellings = {
        word: [*(t for t in tokens if t.lower() == word), word[:1].upper() + word[1:]]
        for word in asked
    }
    members = {
        c.id: c
        for word in dict.fromkeys(words)
        if len(word) >= 3 and word in asked
        for spelling in dict.fromkeys([word, *spellings[word]])
        for c in definitions(spelling)
        if c.kind in ("method", "function")
        and c.part == 0
        and c.symbol.rpartition(".")[0] in classes
        and c.name.lower() == word
    }
    if not members:
        return matches
    owners = {c.symbol.rpartition(".")[0] for c in members.values()}
    return [c for c in matches if c.symbol not in owners] + list(members.values())


def _named_with_owner(tokens: Sequence[str], lowered: Sequence[str], owners: set[str]) -> set[str]:
    """Words named as a member of one of `owners` with a kind word (`_MEMBER_KINDS`): "the
    X method of Owner", "the method X of the Owner", "Owner's X method" (lowercased, as
    `lowered`, the tokens in lower case, holds them)."""

    def owner_after(i: int) -> bool:  # "of Owner" / "of the Owner" from position i
        if i >= len(tokens) or lowered[i] not in _OWNER_LINKS:
            return False
        at = i + 2 if lowered[i + 1 : i + 2] == ["the"] else i + 1
        return at < len(tokens) and tokens[at] in owners

    found = set()
    for i, word in enumerate(lowered):
        kind_after = i + 1 < len(tokens) and lowered[i + 1] in _MEMBER_KINDS
        if kind_after and owner_after(i + 2):
            found.add(word)  # the X method of Owner
        if i > 0 and lowered[i - 1] in _MEMBER_KINDS and owner_after(i + 1):
            found.add(word)  # the method X of Owner
        if kind_after and i > 1 and lowered[i - 1] == "s" and tokens[i - 2] in owners:
            found.add(word)  # Owner's X method
    return found


def _without_constructors(matches: list[Chunk]) -> list[Chunk]:
    """The matches without the constructors of a matched class: a Java, C#, C++ or Kotlin
    constructor is named after its class (`OkHttpCall.OkHttpCall`), so naming the class named
    it too, and the boost lifted it above what the question asked (retrofit: "how does the
    OkHttpCall execute a request synchronously" ranked the constructor first, the class second
    and `OkHttpCall.execute` third; user pass). The class holds the constructor's signature."""
    classes = {c.symbol for c in matches if c.kind == "class"}

    def constructor(chunk: Chunk) -> bool:
        owner, _, name = chunk.symbol.rpartition(".")
        return chunk.kind == "method" and owner in classes and owner.rpartition(".")[2] == name

    return [c for c in matches if not constructor(c)]


def _assigned(qualifier: str, name: str, constants: TermLookup) -> list[Chunk]:
    """Code assigning a name nothing defines (`constants.py`); for a qualified name
    (`Rack::QueryParser::ParamsTooDeepError`, a constant in a class), only the assignments
    inside the qualifier's definition (rack's utils.rb re-exports the constant under the same
    name; `z.string` is an alias's function, not zod's `const string` regex). Found in a
    user's pass over rack: the pasted error name named nothing."""
    found = assigned(name, constants, MAX_NAMED_DEFINITIONS)
    if not qualifier:
        return found
    return [c for c in found if symbol_matches(c.symbol, qualifier)]


def _without_namespace(named: list[Chunk], ident: str) -> list[Chunk]:
    """The definitions a fully qualified name means when its leading parts are a namespace or
    package the symbols do not spell: `Serilog.Core.Logger.Write` is `Logger.Write`,
    `requests.sessions.Session.send` is `Session.send`. The longest suffix of two parts or more
    that some definition matches (user pass over serilog: the qualified name found nothing)."""
    parts = ident.split(".")
    for start in range(1, len(parts) - 1):
        suffix = ".".join(parts[start:])
        matches = [c for c in named if symbol_matches(c.symbol, suffix)]
        if matches:
            return matches
    return []


def _camel_spelling(name: str) -> str | None:
    """`requiredIf` for `required_if`: a snake-case key (a validation tag, an option, a
    setting) is often handled by the function named after it in camel case
    (go-playground/validator maps `"required_if"` to `requiredIf`; user pass, not an
    evaluation set: 7th for "which code makes required_if fail ..."). None for a name
    without an inner underscore or in capitals (`MAX_SIZE` is a constant's own name)."""
    head, *rest = name.strip("_").split("_")
    if not rest or name.isupper() or not head or not all(rest):
        return None
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _code_defining(name: str, definitions: Definitions) -> list[Chunk]:
    """The first parts of the code chunks defining `name`: no doc section titled like it."""
    return [c for c in definitions(name) if c.part == 0 and c.kind != "section"]


def _through_alias(info: QueryInfo, named: list[Chunk], name: str) -> list[Chunk]:
    """`z.lazy`, `np.array`: a qualifier nothing defines is a module's import alias, and the
    name a top-level definition (zod: "where is z.object defined" found no definition and
    ranked a module chunk first; `object` in classic/schemas.ts now). Tests' namesakes are
    not what the alias imports, and an alias imports one module: a name defined at the top of
    more than `ALIASED_DEFINITIONS` library modules is not resolved (zod's four `string`
    functions would have led "how does z.string validate emails", about emails). A question
    that is not a navigation takes the name only when one definition has it.

    With no top-level definition, the qualifier is an object's usual name (`ctx.throw`,
    `app.listen`, `req.query`): the members of that name, under the same limits (koa: "where
    is ctx.throw defined" ranked a test module first, `context.throw` second; user pass)."""
    most = ALIASED_DEFINITIONS if info.is_navigation else 1
    library = [c for c in named if chunk_kind(c) != "test"]
    top_level = [c for c in library if c.symbol == name]
    chosen = top_level or library
    return chosen if len(chosen) <= most else []


def with_named(
    fused: list[tuple[str, float]], named_ids: list[str], navigation: bool
) -> list[tuple[str, float]]:
    """The fused order (ids, scores) with the named definitions first for a navigation
    query (in fused order where the arms found them too), boosted by `SYMBOL_BOOST` of the
    best score for a question."""
    best = fused[0][1] if fused else 1.0
    if navigation:
        position = {doc: i for i, (doc, _) in enumerate(fused)}
        ordered = sorted(named_ids, key=lambda doc: position.get(doc, len(position)))
        top = best + 1.0
        head = [(doc, top - i * 1e-6) for i, doc in enumerate(ordered)]
        named = set(ordered)
        return head + [(doc, s) for doc, s in fused if doc not in named]
    scores = dict(fused)
    for doc in named_ids:
        scores[doc] = scores.get(doc, 0.0) + SYMBOL_BOOST * abs(best)
    return sorted(scores.items(), key=lambda item: -item[1])


def named_first(
    ranked: list[tuple[Chunk, float]], named: set[str], identifiers: Sequence[str] = ()
) -> list[tuple[Chunk, float]]:
    """A navigation query's named definitions (ids) stay first after reranking; among them,
    one whose whole symbol is a query identifier (`getPath` the function, before the
    `*Processor.getPath` methods in hono) comes first."""
    head = [item for item in ranked if item[0].id in named]
    head.sort(key=lambda item: item[0].symbol not in identifiers)
    return head + [item for item in ranked if item[0].id not in named]
