"""`Answerer`: question → retrieval → prompt → provider stream → verified, cited `Answer`.

Stream contract (what `ask_stream` / `explain_stream` yield), for the server and the CLI:

1. zero or more `str` text deltas, a *preview* to show as it arrives;
2. exactly one final `Answer`, whose `text` is authoritative and replaces the preview:
   citation markers in it are verified (invalid ones removed), and when the provider
   failed it is the extractive answer with `Answer.error` set.

When a provider fails after some text was streamed, a delta `"\n\n[interrupted: reason]\n\n"`
is sent before the fallback text, so a consumer that only ever shows deltas still never
presents the partial answer as complete. Extractive and cached answers arrive as one delta.

Cancellation, two ways, both release the HTTP connection:
- the consumer stops iterating and calls `.close()` on the generator (takes effect when
  the generator next has control, i.e. at the next delta);
- the consumer passes a `cancel` event and sets it from any thread: this interrupts even
  a read blocked on a silent server at once; the stream then ends with an `Answer` whose
  `error` is "cancelled" (no fallback work is done).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from codeqa_lsp.answering.cache import AnswerStore, cache_key
from codeqa_lsp.answering.callees import callees
from codeqa_lsp.answering.citations import CitationResolver
from codeqa_lsp.answering.extractive import (
    FALLBACK_NOTE,
    NO_MODEL_NOTE,
    REMOTE_FORBIDDEN_NOTE,
    extractive_answer,
    extractive_explanation,
    low_confidence_answer,
)
from codeqa_lsp.answering.finals import extractive_final, model_final, usage_of
from codeqa_lsp.answering.markdown import code_span
from codeqa_lsp.answering.model import Answer, Usage
from codeqa_lsp.answering.prompt import Prompt, build_ask_prompt, build_explain_prompt
from codeqa_lsp.answering.providers import (
    Provider,
    ProviderError,
    make_provider,
    prewarm,
    provider_identity,
)
from codeqa_lsp.answering.providers.base import Cancelled
from codeqa_lsp.answering.redact import Redactor
from codeqa_lsp.answering.source import CodeSource
from codeqa_lsp.chunking.model import Chunk
from codeqa_lsp.chunking.scanner import decode_source
from codeqa_lsp.chunking.secret_rules import secret_content_rule, secret_name_rule
from codeqa_lsp.config import Settings
from codeqa_lsp.index.filters import SearchFilters
from codeqa_lsp.retrieval.model import SearchHit, Use

log = logging.getLogger("codeqa_lsp.answering")

LOW_CONFIDENCE_CANDIDATES = 3
RELATIVE_SCORE_FLOOR = 0.1  # of the best hit's fused score
MAX_CALLEES = 6
# Code that uses the explained definition, after what it calls (`retrieval/uses.py`).
MAX_CALLERS = 6
INTERRUPTED = "\n\n[interrupted: {reason}]\n\n"

Stream = Iterator[str | Answer]


class Answerer:
    """Answers for one workspace. Thread-safe: each call works on its own state.

    `source` is the workspace's code (search, chunks, files); `cache_dir` holds the answer
    cache and the question log (the index directory)."""

    def __init__(self, source: CodeSource, settings: Settings, cache_dir: Path) -> None:
        self.source = source
        self.settings = settings
        self.cache_dir = cache_dir
        self.redactor = Redactor([settings.api_key, settings.resolved_api_key()])
        self._provider: Provider | None = None
        self._store: AnswerStore | None = None
        prewarm(settings)

    @property
    def store(self) -> AnswerStore:
        if self._store is None:
            self._store = AnswerStore(
                self.cache_dir, self.settings.answer_cache_bytes, self.settings.log_questions
            )
        return self._store

    # -- ask -------------------------------------------------------------------------------
    def ask_stream(
        self,
        question: str,
        filters: SearchFilters | None = None,
        use_cache: bool = True,
        cancel: threading.Event | None = None,
        search_query: str | None = None,
        history: str = "",
    ) -> Stream:
        """`search_query` and `history` come from a conversation (answering/conversation.py):
        what to retrieve with, and the earlier turns for the prompt."""
        started = time.monotonic()
        question = question.strip()
        if not question:
            yield Answer(text="Ask a question about the code in this workspace.", latency_s=0.0)
            return
        query = (search_query or question).strip()
        try:
            response = self.source.search(query, top_k=self.settings.top_k, filters=filters)
        except Exception as exc:  # a broken index must produce a message, not a crash
            log.warning("search for a question failed", exc_info=True)
            reason = f"search failed ({type(exc).__name__}: {exc})"
            yield Answer(
                text=f"Could not search this workspace: {reason}.",
                error=reason,
                latency_s=time.monotonic() - started,
            )
            return
        hits = relevant_chunks(response.hits)
        resolver = CitationResolver(self.source)
        if not response.confident or not hits:
            # No model call: a fluent wrong answer costs more trust than "I don't know".
            candidates = hits[:LOW_CONFIDENCE_CANDIDATES]
            answer = extractive_final(
                low_confidence_answer(candidates, response.reason),
                candidates,
                resolver,
                started,
                confident=False,
            )
            self._log_question(question, hits, answer)
            yield answer.text
            yield answer
            return
        prompt = build_ask_prompt(
            question, hits, self.settings.context_tokens, self.redactor, history=history
        )
        calls = {hit.chunk.id: hit.use_lines for hit in response.hits if hit.use_lines}
        subject = f"{history}\n\n{question}" if history else question
        for item in self._generate(
            "ask",
            subject,
            prompt,
            resolver,
            started,
            use_cache,
            lambda chunks, note: extractive_answer(query, chunks, note, calls),
            cancel,
        ):
            if isinstance(
                item, Answer
            ):  # logged before it is handed over: consumers may stop there
                self._log_question(question, hits, item)
            yield item

    # -- explain ---------------------------------------------------------------------------
    def explain_stream(
        self,
        rel_path: str,
        line: int,
        text: str | None = None,
        use_cache: bool = True,
        cancel: threading.Event | None = None,
    ) -> Stream:
        started = time.monotonic()
        secret = _secret_rule(rel_path, text if text is not None else self._read(rel_path))
        if secret is not None:
            # The scanner keeps such files out of the index; explaining one must not leak it.
            yield Answer(
                text=f"{code_span(rel_path)} looks like it holds secrets ({secret}); it is never "
                "explained or sent anywhere.",
                latency_s=time.monotonic() - started,
            )
            return
        skipped = self.source.skip_reason(rel_path)
        if skipped is not None:
            # What the scanner would not index (`.git/`, excluded folders, key files) is
            # never sent to a provider either, from disk or from an editor buffer.
            yield Answer(
                text=f"{code_span(rel_path)} is not part of the indexed workspace ({skipped}); "
                "it is not explained or sent anywhere.",
                latency_s=time.monotonic() - started,
            )
            return
        found = self._explain_context(rel_path, line, text)
        if found is None:
            yield Answer(
                text=f"No function, method or class encloses line {line} of {code_span(rel_path)}.",
                latency_s=time.monotonic() - started,
            )
            return
        target, callees, resolver = found
        uses = self._callers(target, callees)
        callers = [use.chunk for use in uses]
        prompt = build_explain_prompt(
            target, callees, self.settings.context_tokens, self.redactor, callers
        )
        calls = {use.chunk.id: use.lines[0] for use in uses}  # where each caller calls it
        yield from self._generate(
            "explain",
            target.id,
            prompt,
            resolver,
            started,
            use_cache,
            lambda chunks, note: extractive_explanation(
                chunks[0],
                [c for c in chunks[1:] if c.id not in calls],
                note,
                [c for c in chunks[1:] if c.id in calls],
                calls,
            ),
            cancel,
        )

    def cached_explanation(
        self, rel_path: str, line: int, text: str | None = None
    ) -> Answer | None:
        """The cached model explanation for the current code, if any. Never calls a model."""
        identity = provider_identity(self.settings)
        found = (
            self._explain_context(rel_path, line, text, with_callees=False) if identity else None
        )
        if found is None or identity is None:
            return None
        target, _, resolver = found
        entry = self.store.get(cache_key("explain", target.id, [target], *identity))
        chunks = self._cached_chunks(entry, [target]) if entry is not None else None
        if entry is None or chunks is None:
            return None
        return model_final(
            entry["text"], chunks, resolver, 0.0, *identity, usage_of(entry), cached=True
        )

    def _cached_chunks(
        self, entry: dict[str, object], known: Sequence[Chunk]
    ) -> list[Chunk] | None:
        """The chunks a cached answer's [n] refer to, in order; None if any no longer exists.

        A vanished chunk would shift the numbering under the cached text, so such an entry
        counts as a miss (the code it was based on changed).
        """
        ids = entry.get("chunk_ids")
        if not isinstance(ids, list) or not isinstance(entry.get("text"), str):
            return None
        by_id = {c.id: c for c in known}
        missing = [i for i in ids if i not in by_id]
        if missing:
            by_id.update((c.id, c) for c in self.source.get_chunks(missing))
        chunks = [by_id.get(i) for i in ids]
        return None if any(c is None for c in chunks) else [c for c in chunks if c is not None]

    def _explain_context(
        self, rel_path: str, line: int, text: str | None, with_callees: bool = True
    ) -> tuple[Chunk, list[Chunk], CitationResolver] | None:
        """The definition enclosing `line` (cut from the current text), and what it calls."""
        if text is None:
            text = self._read(rel_path)
        try:
            chunks = (
                self.source.chunk_text(rel_path, text)
                if text is not None
                else self.source.chunks(path=rel_path)
            )
        except Exception as exc:  # a chunker failure: nothing to explain, not a crash
            log.warning("explain: chunking %s failed: %s", rel_path, exc)
            return None
        target = enclosing_definition(chunks, line)
        if target is None:
            return None
        resolver = CitationResolver(
            self.source, fresh={rel_path: text} if text is not None else None
        )
        return target, (self._callees(target, chunks) if with_callees else []), resolver

    def _read(self, rel_path: str) -> str | None:
        data = self.source.read_file(rel_path)
        return None if data is None else decode_source(data)

    def _callees(self, target: Chunk, file_chunks: Sequence[Chunk]) -> list[Chunk]:
        """Indexed definitions of what `target` calls, resolved by scope (`callees.py`)."""
        return callees(
            target, file_chunks, self.source.definitions, self.source.get_chunks, MAX_CALLEES
        )

    def _callers(self, target: Chunk, callees: Sequence[Chunk]) -> list[Use]:
        """Indexed code that uses `target` (not already a callee), with where; none when the
        index cannot say (closed, rebuilding): the explanation goes on without them."""
        try:
            found = self.source.uses(target, MAX_CALLERS)
        except Exception as exc:
            log.warning("explain: looking up the uses of %s failed: %s", target.symbol, exc)
            return []
        known = {target.id, *(c.id for c in callees)}
        return [use for use in found if use.chunk.id not in known]

    # -- generation ------------------------------------------------------------------------
    def _get_provider(self) -> Provider | None:
        """The configured provider (built once); None when extractive. Raises ProviderError."""
        if self._provider is None:
            self._provider = make_provider(self.settings)
        return self._provider

    def _generate(
        self,
        kind: str,
        subject: str,
        prompt: Prompt,
        resolver: CitationResolver,
        started: float,
        use_cache: bool,
        extractive: Callable[[list[Chunk], str], str],
        cancel: threading.Event | None = None,
    ) -> Stream:
        try:
            provider = self._get_provider()
        except ProviderError as exc:
            yield from self._fallback(
                str(exc), prompt, resolver, started, extractive, streamed=False
            )
            return
        if provider is None:
            note = (
                NO_MODEL_NOTE
                if self.settings.provider == "extractive"
                else REMOTE_FORBIDDEN_NOTE.format(provider=self.settings.provider)
            )
            answer = extractive_final(
                extractive(prompt.chunks, note), prompt.chunks, resolver, started
            )
            yield answer.text
            yield answer
            return
        key = cache_key(
            kind,
            subject,
            prompt.chunks[:1] if kind == "explain" else prompt.chunks,
            provider.name,
            provider.model,
        )
        entry = self.store.get(key) if use_cache else None
        cached_chunks = self._cached_chunks(entry, prompt.chunks) if entry is not None else None
        if entry is not None and cached_chunks is not None:
            answer = model_final(
                entry["text"],
                cached_chunks,
                resolver,
                started,
                provider.name,
                provider.model,
                usage_of(entry),
                cached=True,
            )
            yield answer.text
            yield answer
            return
        log.debug(
            "sending %d chunks (%s), ~%d tokens, to %s model %s at %s",
            len(prompt.chunks),
            ", ".join(f"{c.path}:{c.symbol}" for c in prompt.chunks),
            prompt.tokens,
            provider.name,
            provider.model,
            provider.endpoint,
        )
        pieces: list[str] = []
        usage: Usage | None = None
        error: str | None = None
        stream = provider.stream(prompt.system, prompt.user, cancel=cancel)
        try:
            for item in stream:
                if isinstance(item, Usage):
                    usage = item
                else:
                    pieces.append(item)
                    yield item
        except Cancelled:
            yield Answer(
                text="Cancelled.",
                provider=provider.name,
                model=provider.model,
                error="cancelled",
                latency_s=time.monotonic() - started,
            )
            return
        except ProviderError as exc:
            error = exc.reason
        except Exception as exc:  # nothing a provider does may crash the answer
            log.debug("provider %s failed unexpectedly", provider.name, exc_info=True)
            error = f"unexpected provider error ({type(exc).__name__})"
        finally:
            stream.close()  # on cancellation (GeneratorExit) too: releases the connection
        raw = "".join(pieces)
        if error is None and not raw.strip():
            error = "the model returned an empty answer"
        if error is not None:
            # A proxy may echo the key in its error message: it must not reach the user or a log.
            reason = self.redactor.redact(f"{provider.name} ({provider.model}): {error}")
            log.info("answer fell back to extractive: %s", reason)
            yield from self._fallback(
                reason, prompt, resolver, started, extractive, streamed=bool(pieces)
            )
            return
        answer = model_final(
            raw, prompt.chunks, resolver, started, provider.name, provider.model, usage
        )
        self.store.put(
            key,
            {
                "text": raw,
                "chunk_ids": [c.id for c in prompt.chunks],
                "usage": [usage.input_tokens, usage.output_tokens] if usage else None,
            },
        )
        yield answer

    def _fallback(
        self,
        reason: str,
        prompt: Prompt,
        resolver: CitationResolver,
        started: float,
        extractive: Callable[[list[Chunk], str], str],
        streamed: bool,
    ) -> Stream:
        if streamed:
            yield INTERRUPTED.format(reason=reason)
        answer = extractive_final(
            extractive(prompt.chunks, FALLBACK_NOTE.format(reason=reason)),
            prompt.chunks,
            resolver,
            started,
        )
        answer.error = reason
        yield answer.text
        yield answer

    def _log_question(self, question: str, hits: Sequence[Chunk], answer: Answer) -> None:
        self.store.log_question(
            {
                "question": question,
                "retrieved": [c.id for c in hits],
                "retrieved_at": [f"{c.path}:{c.start_line}-{c.end_line}" for c in hits],
                "provider": answer.provider,
                "model": answer.model,
                "confident": answer.confident,
                "answer": answer.text,
                "citations": [f"{c.path}:{c.start_line}-{c.end_line}" for c in answer.citations],
                "error": answer.error,
                "cached": answer.cached,
                "latency_s": round(answer.latency_s, 3),
            }
        )

    def close(self) -> None:
        if self._store is not None:
            self._store.close()


def relevant_chunks(hits: Sequence[SearchHit]) -> list[Chunk]:
    """The hits worth showing a model or a reader: those scoring at least a share of the best.

    Retrieval fills `top_k` even when only two chunks match; the zero-evidence tail only
    dilutes a prompt and clutters an extractive answer.
    """
    if not hits:
        return []
    best = max(hit.score for hit in hits)
    return [hit.chunk for hit in hits if best <= 0 or hit.score >= RELATIVE_SCORE_FLOOR * best]


def enclosing_definition(chunks: Sequence[Chunk], line: int) -> Chunk | None:
    """The innermost function/method/class containing `line`; else the smallest chunk there."""
    around = [c for c in chunks if c.start_line <= line <= c.end_line]
    if not around:
        return None
    definitions = [c for c in around if c.kind in ("function", "method", "class")]
    return min(definitions or around, key=lambda c: (c.end_line - c.start_line, c.start_line))


def _secret_rule(rel_path: str, text: str | None) -> str | None:
    """Why a file must not be explained (its name or content says credentials), else None."""
    return secret_name_rule(rel_path) or (secret_content_rule(text) if text else None)
