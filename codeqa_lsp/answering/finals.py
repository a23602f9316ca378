"""The one way a text becomes a final `Answer`: citations verified, model text sanitised.

Extractive text is ours, so only its citation markers are checked; model text is untrusted,
so it is sanitised to the markdown whitelist first and, when none of its citations survive
verification, carries a note saying so (a confident-sounding answer that cites nothing
checkable must not look like a grounded one).
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from codeqa_lsp.answering.citations import CitationResolver, verify
from codeqa_lsp.answering.model import Answer, Usage
from codeqa_lsp.answering.sanitize import sanitize_markdown
from codeqa_lsp.chunking.model import Chunk

UNCITED_NOTE = "\n\n*This answer cites no code that could be verified; treat it with care.*"


def extractive_final(
    text: str,
    chunks: Sequence[Chunk],
    resolver: CitationResolver,
    started: float,
    confident: bool = True,
) -> Answer:
    checked = verify(text, chunks, resolver, check_mentions=False)
    return Answer(
        text=checked.text,
        citations=checked.citations,
        chunks=list(chunks),
        confident=confident,
        provider="extractive",
        model=None,
        latency_s=time.monotonic() - started,
        dropped_citations=checked.dropped,
        unverified_mentions=checked.unverified_mentions,
    )


def model_final(
    raw: str,
    chunks: Sequence[Chunk],
    resolver: CitationResolver,
    started: float,
    provider: str,
    model: str,
    usage: Usage | None,
    cached: bool = False,
) -> Answer:
    """`started` 0 means "not timed" (a cached explanation looked up without a request)."""
    checked = verify(sanitize_markdown(raw), chunks, resolver)
    text = checked.text if checked.citations else checked.text.rstrip() + UNCITED_NOTE
    return Answer(
        text=text,
        citations=checked.citations,
        chunks=list(chunks),
        confident=True,
        provider=provider,
        model=model,
        usage=usage,
        cached=cached,
        latency_s=time.monotonic() - started if started else 0.0,
        dropped_citations=checked.dropped,
        unverified_mentions=checked.unverified_mentions,
    )


def usage_of(entry: dict[str, object]) -> Usage | None:
    """The token usage a cache entry recorded, if it recorded one."""
    raw = entry.get("usage")
    if isinstance(raw, list) and len(raw) == 2:
        return Usage(*(v if isinstance(v, int) else None for v in raw))
    return None
