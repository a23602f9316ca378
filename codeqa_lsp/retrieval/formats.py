"""A pasted message matched against the format strings that write it.

What a user pastes is a format string with its values filled in: koanf writes
`fmt.Errorf("incorrect types at key %v, type %T != %T", ...)` and the user sees `incorrect types
at key server.port, type float64 != string`; clikt writes `"option $name cannot be used with
${others.joinToString(" or ")}"` and the user sees `option --json cannot be used with --xml or
--yaml`. The word runs of `literals.message_share` hold 4 of the 9 words of either (the values
are words the code never holds, and a lone word between two values is no run), so the writers
got no credit and ranked outside the first ten (user pass over ten repositories, not an
evaluation set). Read as a pattern, with each placeholder standing for whatever was filled
in, the format string matches the whole message.

Placeholders of the languages the chunker reads: printf's `%s` / `%v` / `%-10s` /
`%(name)s`; `{}` / `{0}` / `{name!r}` / `{:?}` (Python, Rust, C#, SLF4J); `${expr}` (JavaScript,
Kotlin, PHP); `#{expr}` (Ruby); `$name` (Kotlin, PHP). String literals are found by their
quotes, in any language, without a parse: a literal holding a quote of its own (Kotlin's
`${others.joinToString(" or ")}`) is cut there, and the cut piece ends in a placeholder.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise

from codeqa_lsp.retrieval.message_words import MIN_MESSAGE_WORDS
from codeqa_lsp.retrieval.message_words import WORD as _WORD

# The most characters one placeholder stands for, and the most words it covers: a value is a
# name, a type, a number or a short list (`--xml or --yaml`). More is a message written
# elsewhere and passed in: thephpleague/csv's `"Casting $target using $source failed;
# $message"` wraps the message `dueToInvalidValue` writes, and covering it whole put the
# wrapper above the writer (user pass, not an evaluation set).
MAX_VALUE_CHARS = 120
MAX_VALUE_WORDS = 3

_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|`(?:[^`\\]|\\.)*`')
_PLACEHOLDER = re.compile(
    r"%(?:\([\w.]+\))?[-+ #0]*(?:\d+|\*)?(?:\.\d+)?[a-zA-Z]"
    r"|\{[^{}\n]{0,40}\}"
    r"|[$#]\{[^}\n]*\}?"
    r"|\$[A-Za-z_]\w*(?:(?:\.|->)\w+)*"
)
# A value concatenated onto a literal is a placeholder too: jimfs throws `new
# IllegalArgumentException("illegal attribute format: " + attribute)` and the user sees
# `illegal attribute format: posix:owner:name` (user pass, not an evaluation set: 3 of its 6
# words in one run, no credit, the writer outside the first ten). `+` in most languages; PHP's
# `.` only between spaces or before a variable (`"a".equals(b)` concatenates nothing).
_JOINED_AFTER = re.compile(r"\s*(?:\+|\s\.\s|\.\s*\$)\s*[\w$(]")
_JOINED_BEFORE = re.compile(r"[\w$)\]]\s*(?:\+|\s\.\s|\.)\s*$")
_JOINED = "%s"  # what stands for the joined value in the literal's pattern


@dataclass(frozen=True)
class _Format:
    """A format string as its fixed pieces (lower case, single spaces) in order, and whether
    a placeholder opens or closes it."""

    pieces: tuple[str, ...]
    leading: bool
    trailing: bool


def format_share(text: str, messages: Iterable[str]) -> float:
    """The largest share of one message's written words (numbers aside) that a format
    string of `text` covers when it matches the message; 0 when none matches."""
    formats = [f for literal in _literals(text) if (f := _format(literal)) is not None]
    best = 0.0
    for message in messages if formats else ():
        line, written = _read(message)
        for found in formats if written else ():
            best = max(best, _covered(found, line, written) / len(written))
    return best


@lru_cache(maxsize=256)
def _read(message: str) -> tuple[str, tuple[int, ...]]:
    """The message in lower case with single spaces, and where its written words (numbers
    aside) start: read once per query, not once per candidate that holds a format."""
    line = " ".join(message.lower().split())
    return line, tuple(m.start() for m in _WORD.finditer(line) if not m.group().isdigit())


def _covered(found: _Format, line: str, written: tuple[int, ...]) -> int:
    """Written words of `line` the format covers (0 when it does not match), each
    placeholder's beyond `MAX_VALUE_WORDS` left out.

    The fixed pieces are found in order, each at its first place after the one before and at
    least a character later (a placeholder stood for something): where any match exists this
    one does, and it costs one scan per piece. A regular expression with a lazy group per
    placeholder backtracked without end on a literal of twenty placeholders and a message that
    nearly matched."""
    spans: list[tuple[int, int]] = []
    at = 0
    for piece in found.pieces:
        start = line.find(piece, at + 1 if spans else 0)
        if start < 0 or (spans and start - spans[-1][1] > MAX_VALUE_CHARS):
            return 0
        spans.append((start, start + len(piece)))
        at = spans[-1][1]
    gaps = [(end, start) for (_, end), (start, _) in pairwise(spans)]  # between pieces
    first, last = spans[0][0], spans[-1][1]
    if found.leading:
        gaps.insert(0, (max(0, first - MAX_VALUE_CHARS), first))
        first = gaps[0][0]
    if found.trailing:
        gaps.append((last, min(len(line), last + MAX_VALUE_CHARS)))
        last = gaps[-1][1]

    def count(start: int, end: int) -> int:
        return sum(1 for word in written if start <= word < end)

    excess = sum(max(0, count(start, end) - MAX_VALUE_WORDS) for start, end in gaps)
    return count(first, last) - excess


def _literals(text: str) -> list[str]:
    """The string literals of `text` that may hold a format's fixed words, each with a
    placeholder where a value is concatenated onto it."""
    out = []
    for found in _STRING.finditer(text):
        literal = found.group()[1:-1]
        if literal.count(" ") < MIN_MESSAGE_WORDS - 1:  # a key or a name: no format (cheap test)
            continue
        if _JOINED_AFTER.match(text, found.end()):
            literal += _JOINED
        if _JOINED_BEFORE.search(text, max(0, found.start() - 40), found.start()):
            literal = _JOINED + literal
        out.append(literal)
    return out


@lru_cache(maxsize=4096)
def _format(literal: str) -> _Format | None:
    """The literal as a `_Format`, or None when it has no placeholder or too few fixed
    words."""
    pieces = [" ".join(piece.lower().split()) for piece in _PLACEHOLDER.split(literal)]
    if len(pieces) < 2 or len(_WORD.findall(" ".join(pieces))) < MIN_MESSAGE_WORDS:
        return None
    return _Format(tuple(p for p in pieces if p), leading=not pieces[0], trailing=not pieces[-1])
