"""Engine records → LSP shapes (Locations, ranges, file URIs, `#L<start>-L<end>` links).

The engine speaks workspace-relative paths and 1-based inclusive line spans; the wire speaks
file URIs and 0-based half-open ranges. Every translation lives here so the two never drift:
a citation's `range` covers whole lines, `end` being the start of the line after `endLine`
(PROTOCOL.md).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.uris import from_fs_path, to_fs_path

from codeqa_lsp.answering.markdown import prose_and_code
from codeqa_lsp.answering.model import Answer, Citation
from codeqa_lsp.chunking.model import Chunk
from codeqa_lsp.retrieval.model import SearchHit

_SYMBOL_KINDS: dict[str, types.SymbolKind] = {
    "function": types.SymbolKind.Function,
    "method": types.SymbolKind.Method,
    "class": types.SymbolKind.Class,
    "module": types.SymbolKind.Module,
    "section": types.SymbolKind.String,
}

# `[3]` not already followed by a link target.
_CITATION_MARKER = re.compile(r"\[(\d{1,3})\](?!\()")


def file_uri(path: Path) -> str:
    return from_fs_path(str(path)) or path.as_uri()


def uri_to_path(uri: str) -> Path | None:
    """Filesystem path of a `file:` URI, or None for other schemes / unparsable input."""
    if not isinstance(uri, str) or not uri.startswith("file:"):
        return None
    try:
        fs_path = to_fs_path(uri)
    except Exception:
        return None
    return Path(fs_path) if fs_path else None


def line_range(start_line: int, end_line: int) -> types.Range:
    """Whole lines `start_line..end_line` (1-based inclusive) as a 0-based LSP range."""
    start = max(0, start_line - 1)
    return types.Range(
        start=types.Position(line=start, character=0),
        end=types.Position(line=max(start, end_line), character=0),
    )


def range_json(start_line: int, end_line: int) -> dict[str, Any]:
    r = line_range(start_line, end_line)
    return {
        "start": {"line": r.start.line, "character": r.start.character},
        "end": {"line": r.end.line, "character": r.end.character},
    }


def line_link(uri: str, start_line: int, end_line: int | None = None) -> str:
    """`file:///x.py#L10-L20` (or `#L10` for one line): what editors open at the lines."""
    if end_line is None or end_line == start_line:
        return f"{uri}#L{start_line}"
    return f"{uri}#L{start_line}-L{end_line}"


def location(root: Path, rel_path: str, start_line: int, end_line: int) -> types.Location:
    return types.Location(uri=file_uri(root / rel_path), range=line_range(start_line, end_line))


def symbol_kind(kind: str) -> types.SymbolKind:
    return _SYMBOL_KINDS.get(kind, types.SymbolKind.Variable)


def first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ""


def citation_json(root: Path, citation: Citation) -> dict[str, Any]:
    return {
        "number": citation.number,
        "uri": file_uri(root / citation.path),
        "range": range_json(citation.start_line, citation.end_line),
        "symbol": citation.symbol,
        "path": citation.path,
        "startLine": citation.start_line,
        "endLine": citation.end_line,
        "stale": citation.stale,
    }


def link_citations(text: str, root: Path, citations: list[Citation]) -> str:
    """Turn `[n]` markers into `[n](file:///abs#Ls-Le)` links; unknown numbers stay as text,
    and so does code (`argv[1]` in a span or a block is an index, not citation 1)."""
    by_number = {c.number: c for c in citations}

    def replace(match: re.Match[str]) -> str:
        citation = by_number.get(int(match.group(1)))
        if citation is None:
            return match.group(0)
        target = line_link(file_uri(root / citation.path), citation.start_line, citation.end_line)
        return f"[{citation.number}]({target})"

    pieces = prose_and_code(text)
    return "".join(
        piece if index % 2 else _CITATION_MARKER.sub(replace, piece)
        for index, piece in enumerate(pieces)
    )


def answer_json(root: Path, answer: Answer, request_id: str) -> dict[str, Any]:
    """The AnswerResult of PROTOCOL.md."""
    return {
        "requestId": request_id,
        "answer": link_citations(answer.text, root, answer.citations),
        "citations": [citation_json(root, c) for c in answer.citations],
        "confident": answer.confident,
        "provider": answer.provider,
        "model": answer.model,
        "error": answer.error,
    }


def search_hit_json(root: Path, hit: SearchHit) -> dict[str, Any]:
    chunk = hit.chunk
    return {
        "uri": file_uri(root / chunk.path),
        "range": range_json(chunk.start_line, chunk.end_line),
        "path": chunk.path,
        "symbol": chunk.symbol,
        "kind": chunk.kind,
        "score": round(float(hit.score), 6),
        "startLine": chunk.start_line,
        "endLine": chunk.end_line,
        # `who calls f?`: where this hit calls `f`; the preview is that call's line.
        "preview": _line_at(chunk, hit.use_lines[0]) if hit.use_lines else first_line(chunk.text),
        "useLines": list(hit.use_lines),
    }


def _line_at(chunk: Chunk, line: int) -> str:
    lines = chunk.text.splitlines()
    index = line - chunk.start_line
    return lines[index].strip() if 0 <= index < len(lines) else first_line(chunk.text)


def symbol_information(root: Path, chunk: Chunk) -> types.SymbolInformation:
    container = chunk.symbol.rsplit(".", 1)[0] if "." in chunk.symbol else chunk.path
    return types.SymbolInformation(
        name=chunk.symbol or chunk.path,
        kind=symbol_kind(chunk.kind),
        location=location(root, chunk.path, chunk.start_line, chunk.end_line),
        container_name=container,
    )
