"""The definitions a definition calls, for `explain`: resolved by scope, not by name search.

The target is cut from the current buffer (maybe unsaved), so its file's definitions and
imports come from that buffer's chunks; everything else from the index. Resolution is
`index/callgraph.py`'s: builtins stay unresolved, `self.x()` means the class's own `x`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace

from codeqa_lsp.chunking.code_text import code_only
from codeqa_lsp.chunking.model import Chunk
from codeqa_lsp.chunking.references import has_references
from codeqa_lsp.index.callgraph import Definition, Resolver, imports_of, resolve_calls

# Languages without a reference query: calls read from the code (comments and strings
# blanked), as bare names.
_CALL = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)\s*\(")
_KEYWORDS = frozenset(
    {
        "if",
        "for",
        "while",
        "return",
        "switch",
        "catch",
        "with",
        "elif",
        "and",
        "or",
        "not",
        "function",
        "def",
        "fn",
        "func",
        "new",
        "typeof",
        "sizeof",
        "assert",
        "lambda",
    }
)


def callees(
    target: Chunk,
    file_chunks: Sequence[Chunk],
    definitions: Callable[[str], list[Chunk]],
    get_chunks: Callable[[list[str]], list[Chunk]],
    limit: int,
) -> list[Chunk]:
    """Up to `limit` chunks (part 0) of the definitions `target` calls, in call order.
    `definitions(name)` and `get_chunks(ids)` read the index."""
    fresh = {c.id: c for c in file_chunks}
    in_file = [Definition.of(c) for c in file_chunks if c.kind != "module" and c.part == 0]

    def by_name(name: str) -> list[Definition]:
        """Every definition named `name`: the buffer's own file from the buffer, the rest
        from the index. (Leaving the file out made `self.headers.get_list()` in httpx's
        _models.py, where `Headers.get_list` is, resolve to the only *other* `get_list`.)"""
        here = [d for d in in_file if d.name == name]
        try:
            found = definitions(name)
        except Exception:  # a closed or rebuilding index: resolve within the file only
            return here
        return here + [
            Definition.of(c)
            for c in found
            if c.part == 0 and c.name == name and c.path != target.path
        ]

    resolver = Resolver(target.path, in_file, imports_of(file_chunks), by_name)
    if not has_references(target.language):
        code = code_only(target.text, target.language)
        calls = tuple(n for n in dict.fromkeys(_CALL.findall(code)) if n not in _KEYWORDS)
        target = replace(target, refs=calls)
    resolved = [d for d in resolve_calls(target, resolver) if d.id != target.id][:limit]
    missing = [d.id for d in resolved if d.id not in fresh]
    try:
        stored = {c.id: c for c in get_chunks(missing)} if missing else {}
    except Exception:
        stored = {}
    out = []
    for definition in resolved:
        chunk = (
            stored.get(definition.id)
            or _indexed(definition, definitions)
            or fresh.get(definition.id)
        )
        if chunk is not None:
            out.append(chunk)
    return out


def _indexed(definition: Definition, definitions: Callable[[str], list[Chunk]]) -> Chunk | None:
    """The indexed version of a definition of the buffer's own file: citations of it are then
    checked against the buffer (and re-pointed or marked stale when it moved or changed)."""
    try:
        found = definitions(definition.name)
    except Exception:
        return None
    return next(
        (
            c
            for c in found
            if c.path == definition.path and c.symbol == definition.symbol and c.part == 0
        ),
        None,
    )
