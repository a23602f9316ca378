"""Answers and citations as plain data; the server turns them into LSP Locations."""

from __future__ import annotations

from dataclasses import dataclass, field

from codeqa_lsp.chunking.model import Chunk


@dataclass(frozen=True)
class Citation:
    number: int  # the [n] in the answer text
    path: str  # workspace-relative, '/' separators
    start_line: int  # 1-based inclusive, as the file is now (re-pointed when stale)
    end_line: int
    symbol: str
    stale: bool = False  # the file changed since it was indexed


@dataclass(frozen=True)
class Usage:
    input_tokens: int | None = None
    output_tokens: int | None = None


@dataclass
class Answer:
    text: str  # markdown
    citations: list[Citation] = field(default_factory=list)
    chunks: list[Chunk] = field(default_factory=list)
    confident: bool = False
    provider: str = "extractive"
    model: str | None = None
    usage: Usage | None = None
    latency_s: float = 0.0
    error: str | None = None  # one-line reason when a provider failed and we fell back
    cached: bool = False
    dropped_citations: int = 0  # [n] markers removed because they cited nothing provided
    unverified_mentions: int = 0  # `path:line` mentions outside the provided code (marked in text)
