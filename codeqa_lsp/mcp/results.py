"""The tools' structured results, and how engine objects are cut down to fit an agent's context.

The models double as the tools' published output schemas (the SDK derives them), so every
field carries a description. Sizes are bounded so a call never floods the agent's context:

- `search`: at most `MAX_TOP_K` (20) hits; each snippet at most `SNIPPET_LINES` (12) lines
  and `SNIPPET_CHARS` (600) characters (a signature, the docstring's start and the first
  lines of the body: enough to judge a hit without opening the file).
- `ask` / `explain`: answer text at most `ANSWER_CHARS` (4,000) characters plus one short
  record per citation.
- `outline`: at most `OUTLINE_MAX` (300) definitions, signatures cut to `SIGNATURE_CHARS`.

Measured over this repository's own source (8 questions, compact JSON as sent): a default
8-hit search is 5.0 KB median / 5.8 KB max (~1.5k tokens), a 20-hit one 12.8 / 13.8 KB;
an extractive `ask` 2.4 / 3.1 KB; the outline of the largest modules (indexer, ask) 4-6 KB.

Everything returned passes `clean_text`: secret-shaped strings are blanked (the agent will
send the result to its own model) and control characters other than newline and tab are
removed (the result may be printed to a terminal).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from codeqa_lsp.answering.redact import Redactor
from codeqa_lsp.answering.sanitize import strip_controls
from codeqa_lsp.chunking.model import Chunk, ChunkKind

MAX_TOP_K = 20
DEFAULT_TOP_K = 8
SNIPPET_LINES = 12  # a signature, a docstring's first lines and the start of the body
SNIPPET_CHARS = 600
SNIPPET_CONTEXT = 3  # lines shown before a use the snippet is about
ANSWER_CHARS = 4000
OUTLINE_MAX = 300
SIGNATURE_CHARS = 160

Kind = Literal["function", "method", "class", "module", "section"]


def clean_text(text: str, redactor: Redactor) -> str:
    return strip_controls(redactor.redact(text))


def trim(text: str, limit: int) -> tuple[str, bool]:
    """At most `limit` characters, cut at a line end when one is near; (text, was_cut)."""
    if len(text) <= limit:
        return text, False
    cut = text.rfind("\n", 0, limit)
    cut = cut if cut > limit // 2 else limit
    return text[:cut].rstrip() + "\n…", True


def snippet(chunk: Chunk, redactor: Redactor, focus: int | None = None) -> tuple[str, bool]:
    """The chunk's first lines; with `focus` (a line of the file) past them, its signature
    (else its first line) and the lines from `SNIPPET_CONTEXT` before `focus` instead: a
    caller's call, not its opening."""
    lines = chunk.text.splitlines()
    at = focus - chunk.start_line if focus is not None else 0
    if at < SNIPPET_LINES - 1:
        shown, more = lines[:SNIPPET_LINES], len(lines) > SNIPPET_LINES
    else:
        start = at - SNIPPET_CONTEXT
        body = lines[start : start + SNIPPET_LINES - 2]
        head = chunk.signature or lines[0]  # not a doc comment's `/**`
        shown, more = [head, "…", *body], start + len(body) < len(lines)
    text, cut = trim(clean_text("\n".join(shown), redactor), SNIPPET_CHARS)
    if more and not cut:
        text, cut = text + "\n…", True
    return text, cut


class IndexState(BaseModel):
    """How complete the index was when the call was answered."""

    indexing: bool = Field(description="a background index run is in progress")
    phase: str = Field(description="idle | starting | scan | chunk | embed | save")
    done: int = Field(
        description="items done in the current phase (files while reading, chunks while embedding)"
    )
    total: int = Field(description="items in the current phase")
    coverage: float = Field(description="share of indexed chunks that have an embedding (0..1)")
    search_mode: Literal["hybrid", "keyword"] = Field(
        description="hybrid = keyword + semantic; keyword = BM25 only (embeddings not ready)"
    )
    note: str = Field(default="", description="what an incomplete index means for this result")


class SearchHitOut(BaseModel):
    path: str = Field(description="workspace-relative path")
    symbol: str = Field(description="qualified name, e.g. Class.method")
    kind: Kind
    language: str
    start_line: int = Field(description="1-based, inclusive")
    end_line: int = Field(description="1-based, inclusive")
    score: float = Field(
        description="fused relevance, higher is better (compare within one result)"
    )
    snippet: str = Field(
        description=f"first {SNIPPET_LINES} lines (or, for a use, the first line and the "
        f"lines around it), at most {SNIPPET_CHARS} chars"
    )
    snippet_truncated: bool
    use_lines: list[int] = Field(
        default_factory=list,
        description="for a question about uses ('who calls X?'): the lines where this "
        "result uses X",
    )


class SearchResult(BaseModel):
    results: list[SearchHitOut]
    confident: bool = Field(
        description="false when nothing matched strongly: treat results as weak leads"
    )
    reason: str = Field(default="", description="why the results are not confident")
    index: IndexState


class CitationOut(BaseModel):
    number: int = Field(description="the [n] marker in the answer text")
    path: str
    start_line: int
    end_line: int
    symbol: str
    stale: bool = Field(description="the file changed since it was indexed; lines re-pointed")


class AnswerResult(BaseModel):
    answer: str = Field(
        description=f"markdown with [n] citation markers, at most {ANSWER_CHARS} chars"
    )
    truncated: bool
    citations: list[CitationOut]
    confident: bool
    provider: str = Field(
        description="extractive (no model, nothing sent anywhere) or the model provider"
    )
    error: str | None = Field(
        default=None, description="why a configured model failed (fell back to extractive)"
    )
    index: IndexState


class DefinitionOut(BaseModel):
    symbol: str
    kind: Kind
    start_line: int
    end_line: int
    signature: str = Field(
        description=f"first line of the definition, at most {SIGNATURE_CHARS} chars"
    )


class ExplainResult(AnswerResult):
    target: DefinitionOut | None = Field(default=None, description="the definition explained")
    path: str = Field(description="workspace-relative path of the explained definition")
    alternatives: list[str] = Field(
        default_factory=list, description="other definitions with the same name (path:line symbol)"
    )


class OutlineResult(BaseModel):
    path: str
    language: str
    definitions: list[DefinitionOut] = Field(
        description="in file order; split definitions appear once"
    )
    truncated: bool = Field(description=f"more than {OUTLINE_MAX} definitions; the rest omitted")
    source: Literal["index", "disk"] = Field(
        description="index: as indexed; disk: cut from the file now (not indexed yet, or changed)"
    )


class StatusResult(BaseModel):
    root: str
    files: int = Field(description="files in the index")
    chunks: int = Field(description="definitions and blocks in the index")
    embedded: int = Field(description="chunks with an embedding")
    languages: dict[str, int] = Field(description="chunks per language")
    embedder: str = Field(description="embedder name and model")
    answers: str = Field(description="answer provider: extractive means nothing leaves the machine")
    skipped: dict[str, int] = Field(description="files left out at the last full index, by reason")
    last_indexed: float | None = Field(description="unix time of the last finished index run")
    last_error: str | None = Field(description="last indexing or freshness error, if any")
    index_dir: str
    index: IndexState


def definition_out(chunk: Chunk, redactor: Redactor) -> DefinitionOut:
    first = (chunk.signature or chunk.text).strip().splitlines()
    signature, _ = trim(clean_text(first[0] if first else "", redactor), SIGNATURE_CHARS)
    return DefinitionOut(
        symbol=chunk.symbol,
        kind=chunk.kind,
        start_line=chunk.start_line,
        end_line=chunk.end_line,
        signature=signature.replace("\n…", "…"),
    )


def outline_definitions(
    chunks: list[Chunk], redactor: Redactor
) -> tuple[list[DefinitionOut], bool]:
    """Definitions in file order; the parts of a split definition merge into one entry."""
    merged: dict[tuple[str, ChunkKind], Chunk] = {}
    spans: dict[tuple[str, ChunkKind], tuple[int, int]] = {}
    for chunk in sorted(chunks, key=lambda c: (c.start_line, c.part)):
        if chunk.kind in ("module", "section") and chunk.symbol.startswith("<"):
            continue  # top-level glue code, not a definition
        key = (chunk.symbol, chunk.kind)
        start, end = spans.get(key, (chunk.start_line, chunk.end_line))
        spans[key] = (min(start, chunk.start_line), max(end, chunk.end_line))
        merged.setdefault(key, chunk)
    out = []
    for key, chunk in merged.items():
        item = definition_out(chunk, redactor)
        item.start_line, item.end_line = spans[key]
        out.append(item)
    return out[:OUTLINE_MAX], len(out) > OUTLINE_MAX
