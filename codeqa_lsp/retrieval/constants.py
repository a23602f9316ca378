"""Names defined by assignment: `#define CJSON_NESTING_LIMIT 1000`, `DEFAULT_TIMEOUT = 30`,
`export const defaultOptions = {...}`, `RACK_REQUEST_QUERY_HASH = 'rack.request.query_hash'`.

The chunker makes definitions of functions, classes and methods; a constant or a module-level
variable lives inside its module's chunk (or a class's), so the fast path found no definition
for "where is CJSON_NESTING_LIMIT defined" and the search ranked the macros around it. When a
name the query asks about has no definition, the chunks whose code assigns it at the start of
a statement stand in: found through the name's BM25 term, confirmed by the code (comments
and strings blanked). A name assigned in more than a handful of places (`result = ...`) is a
local variable, not a definition, and gets none.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from codeqa_lsp.chunking.code_text import code_only
from codeqa_lsp.chunking.model import Chunk
from codeqa_lsp.index.tokens import tokenize

# Chunks read for the name's term.
CANDIDATES = 50

# What may precede the name on its line: declaration keywords, then one type (`static final
# int`, `pub const MAX: usize`, `const char *`).
_KEYWORDS = (
    r"(?:(?:export|pub|public|private|protected|internal|static|final|const|let|var|readonly"
    r"|constexpr|inline|extern|unsigned|signed)\s+)*"
)
_TYPE = r"(?:[\w<>\[\],.:]+[\s*&]+)?"


def assigned(
    name: str, lookup: Callable[[list[str], int], Sequence[tuple[Chunk, float]]], limit: int
) -> list[Chunk]:
    """Chunks (at most `limit`; none if there are more) whose code defines `name` by
    assignment or `#define`, in the name's BM25 order."""
    terms = tokenize(name)[:1]  # the whole identifier's token comes first
    if not terms or len(name) < 3:
        return []
    escaped = re.escape(name)
    defines = re.compile(
        rf"^[ \t]*#[ \t]*define[ \t]+{escaped}\b"
        rf"|^[ \t]*{_KEYWORDS}{_TYPE}{escaped}[ \t]*(?::[^=\n]*)?(?::=|=)(?!=)",
        re.MULTILINE,
    )
    found = []
    for chunk, _ in lookup(terms, CANDIDATES):
        if defines.search(chunk.text) and defines.search(code_only(chunk.text, chunk.language)):
            found.append(chunk)
    return found if len(found) <= limit else []
