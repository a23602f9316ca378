"""Code in markdown that no content can break out of: the one rule for fences and spans.

A fence or a code span ends at the first backtick run as long as its own delimiter
(CommonMark), so code that holds backticks (JavaScript template literals, Markdown in a
docstring, an attacker's comment) would close it early: the rest would render as markdown,
or, in a prompt, pose as instructions outside the code. The delimiter is therefore one
backtick longer than the longest run inside. Used by the prompt (`prompt.py`), the
sanitiser's re-serialisation (`sanitize.py`) and extractive answers (`extractive.py`); the
citation checks and the server's citation links read code back with `prose_and_code`.
"""

from __future__ import annotations

import re

_BACKTICKS = re.compile(r"`+")
# Code in a text: a fenced block (closed by the same fence, or open to the end) or an inline
# span of one or two backticks, closed by a run of exactly its own length, so a span holding
# a backtick (`` a = `b` ``, as `code_span` writes it) is one piece of code, not prose
# between two short spans.
_CODE = re.compile(
    r"(?P<fence>`{3,}|~{3,})[\s\S]*?(?:(?P=fence)|\Z)"
    r"|(?P<ticks>`{1,2})(?!`)[^\n]+?(?<!`)(?P=ticks)(?!`)"
)


def _longest_run(content: str) -> int:
    return max((len(m) for m in _BACKTICKS.findall(content)), default=0)


def fence_for(content: str) -> str:
    """The backtick fence for a code block holding `content` (at least three)."""
    return "`" * max(3, _longest_run(content) + 1)


def code_fence(content: str, info: str = "") -> str:
    """`content` as a fenced code block with `info` (the language) after the opening fence."""
    fence = fence_for(content)
    return f"{fence}{info}\n{content.rstrip(chr(10))}\n{fence}"


def code_span(content: str) -> str:
    """`content` as an inline code span, exact: a backtick inside is kept, not dropped.

    CommonMark strips one space from each end of a span that begins and ends with one, so a
    space is added on both sides when the content holds a backtick run (which could touch
    the delimiter) or itself begins and ends with a space."""
    longest = _longest_run(content)
    delimiter = "`" * (longest + 1)
    spaced = content.startswith(" ") and content.endswith(" ") and bool(content.strip())
    pad = " " if longest or spaced else ""
    return f"{delimiter}{pad}{content}{pad}{delimiter}"


def prose_and_code(text: str) -> list[str]:
    """`text` as prose and code alternating, prose first and last (possibly empty): what
    rewrites markers in prose (citation checks, citation links) must leave the code alone
    (`items[1]` is an index, not citation 1)."""
    pieces: list[str] = []
    at = 0
    for match in _CODE.finditer(text):
        pieces += [text[at : match.start()], match.group(0)]
        at = match.end()
    pieces.append(text[at:])
    return pieces
