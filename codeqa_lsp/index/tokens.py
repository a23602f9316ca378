"""The code-aware token stream shared by BM25 indexing, BM25 queries and the hash embedder.

Why one module: BM25 only works when the query is tokenized exactly like the documents.
Code identifiers hide words (`parseArgs`, `parse_args`, `Session.send`, `max-age`), so each
identifier yields its parts *and* the whole, lowercased and with separators removed:

    parseArgs      -> parseargs, parse, args
    parse_args     -> parseargs, parse, args        (the same as camelCase: conventions match)
    Session.send   -> sessionsend, session, send
    HTTPServerError -> httpservererror, http, server, error

Tokens only contain alphanumerics, so the SQLite FTS5 `unicode61` tokenizer (behind `porter`
stemming) splits our space-joined stream back into exactly these tokens.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

MAX_TOKEN_CHARS = 48  # longer runs are minified noise, hashes or base64: not words

# An identifier, optionally chained with `.` (attribute access) or `-` (kebab-case names).
_COMPOUND = re.compile(r"[^\W\d][\w$]*(?:[.\-][^\W\d][\w$]*)*|\d+")
# Parts of one identifier segment: acronyms, Capitalized words, lowercase words, digits.
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
# Non-ASCII identifiers: no reliable case split in `re`, so split on `_` and digits only.
_UNICODE_WORDS = re.compile(r"[^\W\d_]+|\d+")
_SEPARATORS = re.compile(r"[._\-$]+")

# Dropped from *queries* only: they carry no evidence about which code is meant, and in a
# natural-language question they dominate the term count.
STOPWORDS: frozenset[str] = frozenset(
    (
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "been",
        "being",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "done",
        "for",
        "from",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "me",
        "my",
        "no",
        "nor",
        "not",
        "of",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "out",
        "over",
        "own",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "code",
        "codebase",
        "function",
        "functions",
        "method",
        "methods",
        "implemented",
        "implement",
        "implementation",
        "defined",
        "definition",
        "happen",
        "happens",
        "located",
        "locate",
        "logic",
        "whats",
    )
)


@lru_cache(maxsize=65_536)
def _compound_tokens(compound: str) -> tuple[str, ...]:
    """Tokens for one identifier chain such as `os.path.join` or `HTTPServerError`."""
    if compound.isdigit():
        return (compound,) if len(compound) <= 12 else ()
    out: list[str] = []
    parts: list[str] = []
    for segment in re.split(r"[.\-]", compound):
        words = (_CAMEL if segment.isascii() else _UNICODE_WORDS).findall(segment)
        whole = "".join(_SEPARATORS.split(segment)).lower()
        if len(words) > 1 and 1 < len(whole) <= MAX_TOKEN_CHARS:
            out.append(whole)
        parts.extend(w.lower() for w in words)
    chain = "".join(parts)
    if (
        len(parts) > 1
        and max(map(len, parts)) > 1
        and len(chain) <= MAX_TOKEN_CHARS
        and chain not in out
    ):
        out.insert(0, chain)
    out.extend(p for p in parts if 1 < len(p) <= MAX_TOKEN_CHARS)
    return tuple(out)


def tokenize(text: str) -> list[str]:
    """All tokens of `text` in order (with repeats: term frequency matters to BM25)."""
    out: list[str] = []
    extend = out.extend  # hot loop: one call per identifier in every indexed chunk
    for compound in _COMPOUND.findall(text):
        extend(_compound_tokens(compound))
    return out


@lru_cache(maxsize=64)
def token_set(text: str) -> frozenset[str]:
    """The distinct tokens of `text`, cached: one search asks for its query's in several
    steps (the priors, twice; expansion; feedback; compounds; spelled names)."""
    return frozenset(tokenize(text))


def name_parts(name: str) -> list[str]:
    """The words of a name (`registerTypeAdapterFactory` → register, type, adapter,
    factory): `tokenize` gives the whole compound first, then its parts."""
    tokens = tokenize(name)
    return tokens[1:] if len(tokens) > 1 else tokens


def token_stream(text: str) -> str:
    """The space-joined stream stored in an FTS5 column."""
    return " ".join(tokenize(text))


def query_terms(query: str) -> list[str]:
    """Distinct query tokens, stopwords removed (all tokens if only stopwords remain)."""
    tokens = _dedupe(tokenize(query))
    kept = [t for t in tokens if t not in STOPWORDS]
    return kept or tokens


def fts_match_expression(terms: Iterable[str]) -> str | None:
    """An FTS5 MATCH expression OR-ing the terms; None when there is nothing to match.

    Terms are alphanumeric by construction, and quoting them keeps FTS5 keywords such as
    `AND`/`NEAR` from being parsed as operators.
    """
    quoted = [f'"{t}"' for t in terms if t]
    return " OR ".join(quoted) if quoted else None


def _dedupe(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))
