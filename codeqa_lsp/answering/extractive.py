"""Answers without a model: what the index found, laid out so a developer can act on it.

Used when no provider is configured (the default: nothing leaves the machine), when
`allowRemote` is false, and as the fallback when a provider fails. For each top chunk: the
symbol and its location, the first sentence of its docstring or doc comment, its signature,
and the lines that share words with the question, every item cited with the chunk's [n].
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence

from codeqa_lsp.answering.markdown import code_fence, code_span
from codeqa_lsp.answering.sanitize import sanitize_markdown
from codeqa_lsp.chunking.model import Chunk
from codeqa_lsp.index.tokens import query_terms, tokenize

MAX_ITEMS = 5
MAX_MATCHING_LINES = 3

NO_MODEL_NOTE = (
    "*No language model is configured, so this is an extractive answer: the code the index "
    "found most relevant, quoted as is. To get written answers, set the `provider` setting "
    "to `anthropic` (with `ANTHROPIC_API_KEY`) or `openai` (with `OPENAI_API_KEY`, or "
    "`baseUrl` pointing at a local OpenAI-compatible server such as Ollama).*"
)
REMOTE_FORBIDDEN_NOTE = (
    "*`allowRemote` is false, so no code is sent to the `{provider}` provider; this is an "
    "extractive answer: the code the index found most relevant, quoted as is.*"
)
FALLBACK_NOTE = "**The language model could not answer: {reason}.** Extractive answer instead:"
LOW_CONFIDENCE_TEXT = "I couldn't find code in this workspace that answers that confidently."


def first_sentence(doc: str) -> str:
    """The first sentence of a docstring/doc comment, on one line."""
    paragraph = doc.strip().split("\n\n", 1)[0]
    flat = " ".join(paragraph.split())
    match = re.match(r"(.+?[.!?])(?:\s|$)", flat)
    sentence = match.group(1) if match else flat
    return sentence if len(sentence) <= 240 else sentence[:237] + "..."


def matching_lines(
    chunk: Chunk,
    question: str,
    limit: int = MAX_MATCHING_LINES,
    weights: Mapping[str, float] | None = None,
) -> list[tuple[int, str]]:
    """(line number, stripped line) of the chunk lines sharing the most with the question.

    A shared term counts its weight (`term_weights`: a term in every quoted chunk, like
    "file" in a question about secret files, says least). The signature's lines are left
    out, a multi-line one too (it is shown anyway); ties go to the earlier line."""
    terms = set(query_terms(question))
    if not terms:
        return []
    scored: list[tuple[float, int, str]] = []
    doc = " ".join(chunk.doc.split())
    lines = chunk.text.splitlines()
    header = _signature_lines(lines, chunk.signature)
    for offset, line in enumerate(lines):
        stripped = line.strip()
        words = stripped.strip("\"'#/*! \t")
        if not stripped or offset in header or (len(words) >= 12 and words in doc):
            continue
        shared = terms.intersection(tokenize(stripped))
        if shared:
            score = sum(weights.get(t, 1.0) for t in shared) if weights else len(shared)
            scored.append((-score, offset, stripped))
    best = sorted(scored)[:limit]
    return [
        (chunk.start_line + offset, text[:160])
        for _, offset, text in sorted(best, key=lambda s: s[1])
    ]


def _signature_lines(lines: Sequence[str], signature: str) -> set[int]:
    """Offsets of the lines that spell the signature (`def f(` ... `) -> T:`), found as the
    first run of lines whose joined text is a prefix of it."""
    wanted = " ".join(signature.split())
    if not wanted:
        return set()
    for start, line in enumerate(lines):
        seen = " ".join(line.split())
        if not seen or not wanted.startswith(seen):
            continue
        run = {start}
        for offset in range(start + 1, len(lines)):
            if seen == wanted:
                break
            piece = " ".join(lines[offset].split())
            joined = f"{seen} {piece}" if piece else seen
            glued = seen + piece  # `def f(` + `x)`: the signature has no space after `(`
            if wanted.startswith(joined):
                seen = joined
            elif wanted.startswith(glued):
                seen = glued
            else:
                break
            run.add(offset)
        return run
    return set()


def term_weights(question: str, chunks: Sequence[Chunk]) -> dict[str, float]:
    """Each question term's weight among the quoted chunks: log(1 + n / chunks holding it)."""
    terms = set(query_terms(question))
    holding = dict.fromkeys(terms, 0)
    for chunk in chunks:
        for term in terms.intersection(tokenize(chunk.text)):
            holding[term] += 1
    n = len(chunks)
    return {t: math.log(1 + n / count) for t, count in holding.items() if count}


def describe_chunk(
    number: int, chunk: Chunk, question: str = "", weights: Mapping[str, float] | None = None
) -> str:
    """One cited item: symbol, location, doc sentence, signature, matching lines."""
    lines = [
        f"**[{number}]** {code_span(chunk.symbol)} ({chunk.kind}) — "
        f"{code_span(f'{chunk.path}:{chunk.start_line}-{chunk.end_line}')}"
    ]
    if chunk.doc.strip():
        # Workspace text: its links, images and HTML reduced to text like a model's answer.
        lines.append(f"> {sanitize_markdown(first_sentence(chunk.doc))}")
    headline = " ".join(chunk.signature.split()) or _first_code_line(chunk.text)
    if headline:
        lines.append(code_fence(headline, chunk.language))
    matched = matching_lines(chunk, question, weights=weights) if question else []
    if matched:
        lines.append(
            "Matching lines: "
            + "; ".join(f"L{n} {code_span(text)}" for n, text in matched)
            + f" [{number}]"
        )
    return "\n".join(lines)


def _first_code_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()[:160]
    return ""


def extractive_answer(
    question: str,
    chunks: Sequence[Chunk],
    note: str,
    calls: Mapping[str, Sequence[int]] | None = None,
) -> str:
    """The extractive answer to `question` from `chunks` (numbered 1..n, most relevant first).
    `calls`: for a question about uses, the lines where each using chunk (by id) uses the
    name; the answer leads with them."""
    shown = chunks[:MAX_ITEMS]
    weights = term_weights(question, shown)
    items = [describe_chunk(n, c, question, weights) for n, c in enumerate(shown, 1)]
    if not items:
        return f"{note}\n\nThe index has no code matching this question."
    calls = calls or {}
    users = [(n, c) for n, c in enumerate(shown, 1) if calls.get(c.id)]
    if users:
        places = ", ".join(
            f"{code_span(c.symbol)} at {code_span(f'{c.path}:{calls[c.id][0]}')} [{n}]"
            for n, c in users
        )
        items.insert(0, f"Used by: {places}.")
    return f"{note}\n\n" + "\n\n".join(items)


def extractive_explanation(
    target: Chunk,
    callees: Sequence[Chunk],
    note: str,
    callers: Sequence[Chunk] = (),
    calls: Mapping[str, int] | None = None,
) -> str:
    """What the index knows about `target` ([1]), the definitions it calls ([2]..) and the
    code that uses it (numbered after those), each at the line where it calls (`calls`, by
    chunk id), not where it starts."""
    parts = [note, describe_chunk(1, target)]
    if callees:
        parts.append(f"It calls: {_places(callees, 2)}.")
    if callers:
        lines = [(calls or {}).get(c.id, c.start_line) for c in callers]
        parts.append(f"It is used by: {_places(callers, 2 + len(callees), lines)}.")
    return "\n\n".join(parts)


def _places(chunks: Sequence[Chunk], first: int, lines: Sequence[int] = ()) -> str:
    """`symbol` (`path:line`) [n] for each chunk: `lines` when given, else where each starts."""
    at = lines or [c.start_line for c in chunks]
    return ", ".join(
        f"{code_span(c.symbol)} ({code_span(f'{c.path}:{line}')}) [{n}]"
        for n, (c, line) in enumerate(zip(chunks, at, strict=True), first)
    )


def low_confidence_answer(candidates: Sequence[Chunk], reason: str) -> str:
    """The "I don't know" answer, listing the nearest candidates so the user can look."""
    text = LOW_CONFIDENCE_TEXT
    if reason:
        text += f" ({reason})"
    if candidates:
        nearest = "\n".join(
            f"- [{n}] {code_span(c.symbol)} — {code_span(f'{c.path}:{c.start_line}-{c.end_line}')}"
            for n, c in enumerate(candidates, 1)
        )
        text += f"\n\nNearest candidates, in case one is what you meant:\n{nearest}"
    return text
