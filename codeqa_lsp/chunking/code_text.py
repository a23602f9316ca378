"""A chunk's code without its comments and string literals, for reading names off the code.

Shared by `explain` (the calls of a language without a reference query are read from the
text) and by questions about where a definition is used (`retrieval/uses.py`): a name in a
doc comment (`// retrieve it by calling cmd.Context()`) or in a message is not a use.
"""

from __future__ import annotations

import re
from functools import lru_cache

from codeqa_lsp.chunking.languages import parser_for

_BLANK = re.compile(rb"[^\n]")
_PUNCTUATION_ONLY = re.compile(r"^[\s{}()\[\];,]*$")


def code_only(text: str, language: str) -> str:
    """`text` with its comments and string literals blanked (same length in bytes, line
    breaks kept, so a line number read off the result is the text's). Parsed with the
    language's grammar; the text as is when there is none."""
    parser = parser_for(language)
    if parser is None:
        return text
    data = bytearray(text.encode("utf-8", "surrogatepass"))
    stack = [parser.parse(bytes(data)).root_node]
    while stack:
        node = stack.pop()
        kind = node.type
        if "comment" in kind or "string" in kind or kind == "char_literal":
            data[node.start_byte : node.end_byte] = _BLANK.sub(
                b" ", bytes(data[node.start_byte : node.end_byte])
            )
        else:
            stack.extend(node.children)
    return data.decode("utf-8", "replace")


@lru_cache(maxsize=8192)
def code_lines(text: str, language: str) -> tuple[str, ...]:
    """The lines of `text` that hold code once comments and strings are blanked: a doc
    comment, a docstring and a closing brace are no line of code (a setter's body, a thin
    method's one statement). Cached: a search reads the same candidates' lines twice."""
    lines = code_only(text, language).splitlines()
    return tuple(line for line in lines if not _PUNCTUATION_ONLY.match(line))
