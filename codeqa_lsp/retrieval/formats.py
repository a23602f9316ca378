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
from functools import lru_cache

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


def format_share(text: str, messages: Iterable[str]) -> float:
    """The largest share of one message's written words (numbers aside) that a format
    string of `text` covers when it matches the message; 0 when none matches."""
    patterns = [p for literal in _literals(text) if (p := _pattern(literal)) is not None]
    best = 0.0
    for message in messages if patterns else ():
        spans = [(m.start(), m.group().lower()) for m in _WORD.finditer(message.lower())]
        written = [start for start, word in spans if not word.isdigit()]
        if not written:
            continue
        for pattern in patterns:
            found = pattern.search(message)
            if found is not None:
                best = max(best, _covered(found, message, written) / len(written))
    return best


def _covered(found: re.Match[str], message: str, written: list[int]) -> int:
    """Written words inside the match, each placeholder's beyond `MAX_VALUE_WORDS` left out."""

    def count(start: int, end: int) -> int:
        return sum(1 for at in written if start <= at < end)

    end = _word_end(message, found.end())
    covered = count(found.start(), end)
    for group in range(1, (found.lastindex or 0) + 1):
        start, stop = found.span(group)
        covered -= max(0, count(start, _word_end(message, stop)) - MAX_VALUE_WORDS)
    return covered


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
def _pattern(literal: str) -> re.Pattern[str] | None:
    """The literal as a pattern with a group for each placeholder, or None when it has no
    placeholder or too few fixed words. A placeholder at the end takes the rest of the line
    (`with ${others}`: `--xml or --yaml`), one elsewhere as little as lets the rest match."""
    pieces = [piece.strip() for piece in _PLACEHOLDER.split(literal)]
    if len(pieces) < 2 or len(_WORD.findall(" ".join(pieces).lower())) < MIN_MESSAGE_WORDS:
        return None
    fixed = [r"\s+".join(map(re.escape, piece.split())) for piece in pieces]
    value = rf"\s*(.{{1,{MAX_VALUE_CHARS}}}?)\s*"
    body = value.join(fixed[:-1])
    last = rf"\s*(.{{1,{MAX_VALUE_CHARS}}})" if not fixed[-1] else value + fixed[-1]
    return re.compile(body + last, re.IGNORECASE)


def _word_end(message: str, at: int) -> int:
    """`at` moved to the end of the word it falls in (a trailing value's lazy group stops
    after one character)."""
    while at < len(message) and message[at].isalnum():
        at += 1
    return at
