"""`textDocument/hover`: where the identifier under the cursor is defined, from the index.

Hover is the one feature users trigger constantly, so it only does cheap reads: the
identifier is looked up by name in the index (`CodeBase.definitions`, an SQLite query) and
the cached explanation is read if one exists. It never waits on a model; with
`hoverExplanations` on, a missing explanation is generated in the background so the next
hover shows it. It runs in the server's small read pool, never behind a full index.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types

from codeqa_lsp.answering.markdown import code_fence, code_span
from codeqa_lsp.answering.sanitize import sanitize_markdown
from codeqa_lsp.chunking.model import Chunk
from codeqa_lsp.server.buffers import document_text
from codeqa_lsp.server.convert import file_uri, line_link, link_citations

if TYPE_CHECKING:
    from codeqa_lsp.engine import CodeBase
    from codeqa_lsp.server.app import CodeQAServer

logger = logging.getLogger(__name__)

MAX_DEFINITIONS = 3
MAX_DOC_CHARS = 1200
MAX_IDENTIFIER = 256
# `$` is part of a JavaScript/TypeScript name (`$ZodType`, `source$`): without it the hover
# looked up `ZodType`, another definition. `::` qualifies like `.` (`Error::new` in Rust, C++,
# PHP, Ruby); a single `:` does not (`a[1:b]`). A trailing `?` or `!` belongs to a Ruby method
# name (`empty?`, `save!`); elsewhere it is an operator (`a!=b`, `x?.y`), and the lookup
# retries without it.
_BEFORE = re.compile(r"(?:[A-Za-z_0-9$.]|::)*$")
_AFTER = re.compile(r"^[A-Za-z_0-9$]*[?!]?")


def identifier_at(line: str, column: int) -> tuple[str, str | None] | None:
    """(name, qualifier) of the dotted identifier at `column`: `cfg.load|` → (load, cfg)."""
    if column > len(line):
        return None
    # A bounded window: on a megabyte of minified code the anchored regex would go quadratic.
    before = _BEFORE.search(line[max(0, column - MAX_IDENTIFIER) : column])
    after = _AFTER.match(line[column : column + MAX_IDENTIFIER])
    dotted = (before.group() if before else "") + (after.group() if after else "")
    dotted = dotted.replace("::", ".")
    parts = [p for p in dotted.split(".") if p]
    if not parts or parts[-1][0].isdigit():
        return None
    return parts[-1], parts[-2] if len(parts) > 1 else None


def rank_definitions(
    chunks: list[Chunk], name: str, qualifier: str | None, current: str | None
) -> list[Chunk]:
    """Qualified match first (`Class.name`), then the current file, then by path."""
    seen: set[tuple[str, str]] = set()
    unique = []
    for chunk in chunks:
        key = (chunk.path, chunk.symbol)
        if chunk.name != name or key in seen or chunk.part > 0:
            continue
        seen.add(key)
        unique.append(chunk)

    def order(chunk: Chunk) -> tuple[int, int, str, int]:
        qualified = qualifier is not None and chunk.symbol.endswith(f"{qualifier}.{name}")
        return (
            0 if qualified else 1,
            0 if chunk.path == current else 1,
            chunk.path,
            chunk.start_line,
        )

    return sorted(unique, key=order)[:MAX_DEFINITIONS]


def find_definitions(
    lookup: Callable[[str], list[Chunk]], name: str, qualifier: str | None, current: str | None
) -> list[Chunk]:
    """The definitions of `name` (`lookup` is the index's), ranked; `empty?` / `save!` that
    name none are looked up without the suffix (`a!=b` is an `a`)."""
    found = rank_definitions(lookup(name), name, qualifier, current)
    if not found and len(name) > 1 and name[-1] in "?!":
        found = rank_definitions(lookup(name[:-1]), name[:-1], qualifier, current)
    return found


def definition_markdown(root: Path, chunk: Chunk) -> str:
    signature = chunk.signature.strip() or next(
        (line.strip() for line in chunk.text.splitlines() if line.strip()), chunk.symbol
    )
    uri = file_uri(root / chunk.path)
    parts = [
        code_fence(signature, chunk.language),
        # Code spans: as plain markdown `Cart.__init__` and `pkg/__init__.py` lost their
        # underscores to emphasis ("Cart.init", "pkg/init.py").
        f"{code_span(chunk.symbol)} ({chunk.kind}) defined in "
        f"[{code_span(f'{chunk.path}:{chunk.start_line}')}]({line_link(uri, chunk.start_line)})",
    ]
    doc = chunk.doc.strip()
    if doc:
        parts.append(_shown_doc(doc))
    return "\n\n".join(parts)


@lru_cache(maxsize=1024)
def _shown_doc(doc: str) -> str:
    """A definition's doc as the hover shows it: cut, and with the answers' markdown whitelist,
    since it comes from a workspace file (a hostile docstring's image, link or HTML becomes
    text, not a fetch or a command). Cached: the CommonMark round trip costs ~0.6 ms for a
    500-character doc, up to three per hover, and the same symbols are hovered again and
    again."""
    cut = doc if len(doc) <= MAX_DOC_CHARS else doc[: MAX_DOC_CHARS - 1] + "…"
    return sanitize_markdown(cut)


def compute_hover(ls: CodeQAServer, uri: str, position: types.Position) -> types.Hover | None:
    """(read pool) The hover for `position`, or None when there is nothing to show."""
    served = ls.folders.workspace_for(uri)
    if served is None:
        return None
    root, codebase, current = served.folder.root, served.codebase, served.rel
    text = document_text(ls, uri)
    if not text:
        return None
    lines = text.splitlines(keepends=True)
    if position.line >= len(lines):
        return None
    server_pos = ls.workspace.position_codec.position_from_client_units(lines, position)
    ident = identifier_at(lines[server_pos.line].rstrip("\r\n"), server_pos.character)
    if ident is None:
        return None
    name, qualifier = ident
    definitions = find_definitions(codebase.definitions, name, qualifier, current)
    if not definitions:
        return None
    sections = [definition_markdown(root, chunk) for chunk in definitions]
    explanation = _explanation(ls, root, codebase, definitions[0])
    if explanation:
        sections.insert(1, explanation)
    return types.Hover(
        contents=types.MarkupContent(
            kind=types.MarkupKind.Markdown, value="\n\n---\n\n".join(sections)
        )
    )


def _explanation(ls: CodeQAServer, root: Path, codebase: CodeBase, chunk: Chunk) -> str | None:
    try:
        cached = codebase.cached_explanation(chunk.path, chunk.start_line)
    except Exception:
        logger.exception("reading the cached explanation of %s failed", chunk.symbol)
        return None
    if cached is not None:
        return "**Explanation**\n\n" + link_citations(cached.text, root, cached.citations)
    if ls.settings.hover_explanations:
        _explain_in_background(ls, codebase, chunk)
    return None


def _explain_in_background(ls: CodeQAServer, codebase: CodeBase, chunk: Chunk) -> None:
    """Generate the explanation the next hover shows; at most one run per definition."""

    def run() -> None:
        try:
            codebase.explain(chunk.path, chunk.start_line)
        except Exception:
            logger.exception("background explanation of %s failed", chunk.symbol)

    ls.submit_once(("explain", str(codebase.root), chunk.id), run)


async def hover(ls: CodeQAServer, params: types.HoverParams) -> types.Hover | None:
    return await ls.run_read(compute_hover, ls, params.text_document.uri, params.position)


def register(server: CodeQAServer) -> None:
    server.feature(types.TEXT_DOCUMENT_HOVER)(hover)
