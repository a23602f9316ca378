"""A message bound to a name: the code that uses the name is where the message comes from.

Libraries often write a message once, bound to a name, and raise it elsewhere by that name:
multer's `LIMIT_UNEXPECTED_FILE: 'Unexpected field'` in a table of messages, raised as
`new MulterError('LIMIT_UNEXPECTED_FILE', ...)` by the file filter; Go's
`ErrMethodMismatch = errors.New("method is not allowed")`, returned by `Router.Match`; a Rust
`#[error("...")]` variant; a C `#define`. A pasted message then finds only the binding (a
table, a module's variables), while the question is what produced it (user pass over
expressjs/multer, not an evaluation set: "MulterError: Unexpected field" ranked the table
first and the middleware holding the raise site fourth).

So the chunks that use a name bound to a message the query quotes or pastes hold that
message too, as far as literal evidence goes (`literals.py`): they get the binding's literal
credit. Only names shaped like identifiers (`LIMIT_UNEXPECTED_FILE`, `ErrNotFound`) are
followed; a plain word (`required`) is used in too many places to mean this one.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from codeqa_lsp.chunking.model import Chunk
from codeqa_lsp.index.tokens import tokenize
from codeqa_lsp.retrieval.literals import MIN_RUN_SHARE, Literals, message_share
from codeqa_lsp.retrieval.priors import chunk_kind, is_code
from codeqa_lsp.retrieval.query import looks_like_identifier
from codeqa_lsp.retrieval.rerank import RAISED_DEFINITION_SHARE

# Uses of one bound name credited fully; past this many each gets (MAX_BOUND_USES / uses)²,
# as raise sites do (`literals.COMMON_RAISERS`).
MAX_BOUND_USES = 3
# Chunks read for a bound name's BM25 term (its uses are few when it means one message).
BOUND_USE_CANDIDATES = 50

# `NAME: 'message'`, `"NAME": "message"`, `NAME = "message"`, `NAME := errors.New("message")`,
# `static final String NAME = "message"`, `NAME => 'message'`: the name right before the
# string (or before the call the string is the first argument of). A match arm on a
# qualified variant binds it too: reqwest's `Kind::Decode => f.write_str("error decoding
# response body")` is raised where `Kind::Decode` is built (Kotlin's `Kind.DECODE -> "..."`).
_BINDING = re.compile(
    r"""(?<![\w$:.])['"]?((?:[A-Za-z_$][\w$]*(?:::|\.))*[A-Za-z_$][\w$]*)['"]?"""
    r"""\s*(?::=|=>|->|[:=])\s*(?:new\s+)?(?:[\w$.]+\s*\(\s*)?(?=['"`])"""
)
# A call opened at the end of a line and bound to a name, its arguments on the lines below:
# fastify's `FST_ERR_BAD_STATUS_CODE: createError(` with the code and the message on the next
# two lines (user pass over fastify, not an evaluation set: the message ranked the table first
# and `Reply.prototype.code`, which throws it, 14th).
_BINDING_OPENS_CALL = re.compile(
    r"""^\s*['"]?([A-Za-z_$][\w$.]*)['"]?\s*(?::=|=>|[:=])\s*(?:new\s+)?[\w$.]+\s*\(\s*$"""
)
# Argument lines between the opening line and the message: a string, a number or a name.
_ARGUMENT_LINE = re.compile(r"""^\s*(?:['"`][^'"`]*['"`]|[\w$.]+)\s*,\s*$""")
# Lines looked back over from a message for the call it is an argument of.
MAX_ARGUMENTS_BEFORE = 3
_DEFINE = re.compile(r"^\s*#\s*define\s+([A-Za-z_]\w*)\s+(?=\")")
# Rust's `#[error("message")]` names the variant on the next line.
_ERROR_ATTRIBUTE = re.compile(r"^\s*#\[error\(")
_VARIANT = re.compile(r"^\s*([A-Z]\w*)")

# A line that names a bound name without using it: an import, or a bare item of a multi-line
# import or destructuring list (`  FST_ERR_BAD_STATUS_CODE,` under `const {` ... `require(`):
# reply.js's module chunk imports fastify's error codes and throws none of them.
_NOT_A_USE = re.compile(
    r"^\s*(?:import\b|from\s+\S+\s+import\b|(?:const|let|var)\s*\{[^}]*\}\s*=\s*require\(|"
    r"[\w$.]+\s*,?\s*$)"
)

Lookup = Callable[[list[str], int], Sequence[tuple[Chunk, float]]]


def bound_names(text: str, literals: Literals) -> list[str]:
    """Identifier-shaped names that `text` binds a message of `literals` to."""
    lines = text.splitlines()
    names: dict[str, None] = {}
    for i, line in enumerate(lines):
        if message_share(line, literals) < MIN_RUN_SHARE:
            continue
        found = _DEFINE.match(line) or _BINDING.search(line)
        name = found.group(1) if found else _binding_above(lines, i)
        if name is None and _ERROR_ATTRIBUTE.match(line):
            after = next((x for x in lines[i + 1 : i + 3] if x.strip()), "")
            variant = _VARIANT.match(after)
            name = variant.group(1) if variant else None
        if name and _names_one_thing(name):
            names.setdefault(name, None)
    return list(names)


def _binding_above(lines: list[str], at: int) -> str | None:
    """The name bound to the call whose argument list line `at` (a message) belongs to, when
    the call opens a few argument lines above it."""
    for back in range(at - 1, max(-1, at - 1 - MAX_ARGUMENTS_BEFORE), -1):
        opens = _BINDING_OPENS_CALL.match(lines[back])
        if opens:
            return opens.group(1)
        if not _ARGUMENT_LINE.match(lines[back]):
            return None
    return None


def _names_one_thing(name: str) -> bool:
    last = name.replace("::", ".").rsplit(".", 1)[-1]
    qualified = last != name and last[:1].isupper()  # `Kind::Decode`, not `self.name`
    return qualified or looks_like_identifier(last) or (last.isupper() and len(last) >= 4)


@dataclass(frozen=True)
class BoundUsers:
    candidates: list[tuple[Chunk, float]]  # with the users added (fused score 0)
    credit: dict[str, float]  # chunk id → literal credit, the users' included
    links: dict[str, list[str]]  # a binding's id → the ids of the chunks using it


def with_bound_users(
    candidates: Sequence[tuple[Chunk, float]],
    held: Mapping[str, float],
    literals: Literals,
    lookup: Lookup,
) -> BoundUsers:
    """`candidates` (chunk, fused score) and `held` (chunk id → literal credit) with the code
    using a name that a holder of the query's message binds it to: added, and credited with
    the holder's share ((MAX_BOUND_USES / uses)² of it past MAX_BOUND_USES uses); the
    binding keeps RAISED_DEFINITION_SHARE of its own credit, as an error's class does."""
    known = {chunk.id for chunk, _ in candidates}
    out = list(candidates)
    credit = dict(held)
    links: dict[str, list[str]] = {}
    for holder, _ in candidates:
        share = held.get(holder.id, 0.0)
        if share < MIN_RUN_SHARE:
            continue
        for name in bound_names(holder.text, literals):
            word = re.compile(rf"(?<![\w$]){re.escape(name)}(?![\w$])")
            terms = tokenize(name.replace("::", ".").rsplit(".", 1)[-1])[:1]
            found = lookup(terms, BOUND_USE_CANDIDATES) if terms else []
            # A chunk holding less of the message than the binding still uses it: one of the
            # many raisers of the pasted error type holds a sliver of raise credit (yaml-cpp's
            # `LookupAnchor`, one of 25 throwing `ParserException`; user pass, not an
            # evaluation set), and that sliver had kept it from its binding's credit.
            users = [
                chunk
                for chunk, _ in found
                if held.get(chunk.id, 0.0) < share
                and _is_library_code(chunk)
                and _uses(chunk.text, word)
            ]
            scale = min(1.0, MAX_BOUND_USES / len(users)) ** 2 if users else 0.0
            for chunk in users:
                if chunk.id not in known:
                    known.add(chunk.id)
                    out.append((chunk, 0.0))
                credit[chunk.id] = max(credit.get(chunk.id, 0.0), share * scale)
                if chunk.id not in links.setdefault(holder.id, []):
                    links[holder.id].append(chunk.id)
    for binding in links:  # written there, raised elsewhere: as an error's own class
        credit[binding] *= RAISED_DEFINITION_SHARE
    return BoundUsers(out, credit, links)


def users_before_bindings(
    ranked: Sequence[tuple[Chunk, float]], links: Mapping[str, list[str]]
) -> list[tuple[Chunk, float]]:
    """`ranked` with the uses of each binding (at most MAX_BOUND_USES of them: more say less
    about which one raised it) moved just above the binding when it ranks above them: the
    message is written at the binding and comes from where the name is used. Scores stay in
    descending order (a moved use takes the binding's score)."""
    out = list(ranked)
    for binding, users in links.items():
        if len(users) > MAX_BOUND_USES:
            continue
        at = next((i for i, (c, _) in enumerate(out) if c.id == binding), None)
        if at is None:
            continue
        below = [item for item in out[at + 1 :] if item[0].id in users]
        if not below:
            continue
        moved = {c.id for c, _ in below}
        score = out[at][1]
        rest = [item for item in out if item[0].id not in moved]
        at = next(i for i, (c, _) in enumerate(rest) if c.id == binding)
        rest[at:at] = [
            (chunk, score + 1e-6 * (len(below) - i)) for i, (chunk, _) in enumerate(below)
        ]
        out = rest
    return out


def _uses(text: str, name: re.Pattern[str]) -> bool:
    return any(name.search(line) and not _NOT_A_USE.match(line) for line in text.splitlines())


def _is_library_code(chunk: Chunk) -> bool:
    """Library code (`priors.is_code`, no test or example): a test that raises the error to
    check it, a guide quoting it, a changelog entry about it are not where it comes from."""
    return (
        is_code(chunk)
        and not chunk.declaration  # a `.d.ts` list of the codes declares, it raises nothing
        and chunk_kind(chunk) not in ("test", "example")
    )
