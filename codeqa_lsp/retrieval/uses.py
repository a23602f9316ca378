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

from codeqa_lsp.chunking.code_text import code_only
from codeqa_lsp.chunking.model import Chunk
from codeqa_lsp.index.tokens import tokenize
from codeqa_lsp.retrieval.priors import chunk_kind
from codeqa_lsp.retrieval.query import symbol_matches

_ASKS_FOR_USES = re.compile(
    r"\b(?:who|what|which)\b(?:\s+[\w`.()]+){0,3}?\s+(?:calls?|invokes?|uses?|references?)\b"
    # Not "usage" (a CLI's usage line) nor a lone "caller" ("how can a caller remove ...").
    r"|\b(?:callers|usages|callers? of|call[- ]sites? (?:of|for)|references to|uses of)\b"
    r"|\bwhere\b[^?.;]{0,80}?\b(?:called|invoked|used|referenced)\b",
    re.IGNORECASE,
)
# Uses placed after the named definitions; the rest keep their ranks below them.
MAX_USES = 10
# Chunks read for the name's term: a name used in more places than this is listed by its
# best-matching uses only.
USE_CANDIDATES = 200

BM25Lookup = Callable[[list[str], int], Sequence[tuple[Chunk, float]]]


def asks_for_uses(question: str) -> bool:
    """Does the question ask who calls or uses something (not what it does)?"""
    return bool(_ASKS_FOR_USES.search(question))


def uses_of(
    named: Sequence[Chunk], lookup: BM25Lookup, limit: int = MAX_USES, skip: Set[str] = frozenset()
) -> list[Chunk]:
    """Up to `limit` chunks whose code uses the name of a definition in `named`, in the
    name's BM25 order, module chunks (imports, script code) last. `skip`: ids not to list
    (the named definitions as ranked).

    A name that other definitions share (`generate` of another class) is ambiguous by
    name alone: then only uses in a named definition's file, or in code that also names
    its class, are kept (fd: `CommandTemplate.generate` was said to be used by `main.rs`'s
    `clap_complete::generate(...)` call)."""
    names = {chunk.name for chunk in named}
    keys = {(chunk.path, chunk.symbol) for chunk in named}
    owners = {chunk.symbol.rsplit(".", 1)[0] for chunk in named if "." in chunk.symbol}
    found: dict[str, Chunk] = {}
    ambiguous = False
    for name in sorted(names):
        pattern = re.compile(rf"(?<![\w$]){re.escape(name)}(?![\w$])")
        terms = tokenize(name)[:1]  # the whole identifier's token comes first
        candidates = lookup(terms, USE_CANDIDATES) if terms else []
        for chunk, _ in candidates:
            if chunk.id in skip or chunk.id in found:
                continue
            if chunk.name in names and chunk.kind != "module":
                # The definition itself (any part), or a namesake: not a use.
                ambiguous = ambiguous or (chunk.path, chunk.symbol) not in keys
                continue
            if chunk.symbol in owners and chunk.kind == "class":
                continue  # the class skeleton listing the method's signature
            if pattern.search(chunk.text) and pattern.search(code_only(chunk.text, chunk.language)):
                found[chunk.id] = chunk
    uses = list(found.values())
    if ambiguous:
        paths = {path for path, _ in keys}
        classes = [
            re.compile(rf"(?<![\w$]){re.escape(o.rsplit('.', 1)[-1])}(?![\w$])") for o in owners
        ]
        uses = [c for c in uses if c.path in paths or any(p.search(c.text) for p in classes)]
    # A use inside a nested function is listed there, not again as its enclosing one's.
    inner = {(c.path, c.symbol.rsplit(".", 1)[0]) for c in uses if "." in c.symbol}
    uses = [c for c in uses if (c.path, c.symbol) not in inner]
    # Library code first, then tests and examples; module-level code (imports) last. Stable:
    # BM25 order within each.
    uses.sort(key=lambda c: (c.kind == "module", chunk_kind(c) != "source"))
    return uses[:limit]


def uses_first(
    ranked: list[tuple[Chunk, float]],
    named_ids: set[str],
    lookup: BM25Lookup,
    identifiers: Sequence[str] = (),
) -> list[tuple[Chunk, float]]:
    """`ranked` with the named definitions first, then up to `MAX_USES` chunks that use them
    (those already ranked in their order, then the others by the name's BM25), then the rest.
    Scores stay in descending order (folders' results are merged by score).

    The subject is the first of the query's `identifiers` that names a definition: a
    follow-up ("and where is it called from?") is searched with the previous question and
    the symbols its answer cited, and the uses asked for are those of the question's subject,
    not of every class the answer also cited."""
    named = [chunk for chunk, _ in ranked if chunk.id in named_ids]
    for identifier in identifiers:
        subject = [chunk for chunk in named if symbol_matches(chunk.symbol, identifier)]
        if subject:
            named = subject
            break
    if not named:
        return ranked
    found = uses_of(named, lookup, USE_CANDIDATES, skip={c.id for c in named})
    if not found:
        return ranked
    position = {chunk.id: i for i, (chunk, _) in enumerate(ranked)}
    uses = sorted(found, key=lambda c: (c.kind == "module", position.get(c.id, 1 << 30)))
    head = named + uses[:MAX_USES]
    head_ids = {chunk.id for chunk in head}
    top = max(score for _, score in ranked)
    floor = top - len(head) * 1e-6
    rest = [(chunk, min(score, floor)) for chunk, score in ranked if chunk.id not in head_ids]
    return [(chunk, top - i * 1e-6) for i, chunk in enumerate(head)] + rest
