"""`CodeService`: what the MCP tools do, as plain methods over the engine facade.

No MCP types here (the `server` module is the thin protocol layer), so each tool's
behaviour can be read, and tested, as ordinary Python. Every method:

1. reconciles the index with the tree (`IndexKeeper.refresh`; never waits for a full index),
2. confines paths to the root and refuses secret files (`paths`),
3. calls the engine, and cuts the result to the sizes documented in `results`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from codeqa_lsp.answering.extractive import NO_MODEL_NOTE
from codeqa_lsp.answering.model import Answer
from codeqa_lsp.answering.redact import Redactor
from codeqa_lsp.chunking.ignore import WorkspaceFilter
from codeqa_lsp.chunking.model import Chunk
from codeqa_lsp.config import Settings
from codeqa_lsp.engine import CodeBase
from codeqa_lsp.index.filters import SearchFilters
from codeqa_lsp.mcp.freshness import IndexKeeper
from codeqa_lsp.mcp.paths import (
    ResolvedFile,
    ToolInputError,
    is_secret,
    normalize_glob,
    resolve_file,
)
from codeqa_lsp.mcp.results import (
    ANSWER_CHARS,
    MAX_TOP_K,
    AnswerResult,
    CitationOut,
    ExplainResult,
    IndexState,
    OutlineResult,
    SearchHitOut,
    SearchResult,
    StatusResult,
    clean_text,
    definition_out,
    outline_definitions,
    snippet,
    trim,
)
from codeqa_lsp.retrieval.query import with_dots

log = logging.getLogger(__name__)

KINDS = ("function", "method", "class", "module", "section")
MAX_ALTERNATIVES = 5
_LANGUAGE_ALIASES = {
    "py": "python",
    "js": "javascript",
    "ts": "typescript",
    "c#": "csharp",
    "cs": "csharp",
    "c++": "cpp",
    "sh": "bash",
    "shell": "bash",
    "md": "markdown",
    "golang": "go",
    "rb": "ruby",
    "rs": "rust",
}
MAX_QUESTION_CHARS = 2000  # a pasted bug report fits; a pasted file does not


class CodeService:
    """One workspace root, served to MCP clients."""

    def __init__(
        self, root: Path, settings: Settings | None = None, *, start_indexing: bool = True
    ) -> None:
        self.workspace = CodeBase(root, settings)
        self.root = self.workspace.root
        self.settings = self.workspace.settings
        self.keeper = IndexKeeper(self.workspace)
        self.redactor = Redactor([self.settings.api_key, self.settings.resolved_api_key()])
        if start_indexing:
            self.keeper.start()

    def close(self) -> None:
        self.keeper.stop()
        self.workspace.close(wait=5)

    # -- tools -----------------------------------------------------------------------------
    def search(
        self,
        query: str,
        top_k: int = 8,
        language: str | None = None,
        path: str | None = None,
        kind: str | None = None,
    ) -> SearchResult:
        query = _required(query, "query")
        if not 1 <= top_k <= MAX_TOP_K:
            raise ToolInputError(f"top_k must be between 1 and {MAX_TOP_K}, got {top_k}")
        filters = self._filters(language, path, kind)
        self._refresh()
        response = self.workspace.search(query, top_k=top_k, filters=filters)
        hits = []
        for hit in response.hits:
            chunk = hit.chunk
            if is_secret(chunk.path, chunk.text):  # the index never holds them; belt and braces
                continue
            text, cut = snippet(chunk, self.redactor, hit.use_lines[0] if hit.use_lines else None)
            hits.append(
                SearchHitOut(
                    path=chunk.path,
                    symbol=chunk.symbol,
                    kind=chunk.kind,
                    language=chunk.language,
                    start_line=chunk.start_line,
                    end_line=chunk.end_line,
                    score=round(hit.score, 4),
                    snippet=text,
                    snippet_truncated=cut,
                    use_lines=list(hit.use_lines),
                )
            )
        return SearchResult(
            results=hits,
            confident=response.confident and bool(hits),
            reason=response.reason,
            index=self.index_state(),
        )

    def ask(
        self, question: str, language: str | None = None, path: str | None = None
    ) -> AnswerResult:
        question = _required(question, "question")
        if len(question) > MAX_QUESTION_CHARS:
            raise ToolInputError(
                f"question is {len(question)} characters; at most {MAX_QUESTION_CHARS}"
            )
        filters = self._filters(language, path, None)
        self._refresh()
        answer = self.workspace.ask(question, filters=filters)
        return AnswerResult(**self._answer_fields(answer))

    def explain(
        self, path: str | None = None, line: int | None = None, symbol: str | None = None
    ) -> ExplainResult:
        if symbol and (path or line):
            raise ToolInputError("give either path and line, or symbol, not both")
        self._refresh()
        alternatives: list[str] = []
        if symbol:
            rel, line, alternatives = self._locate_symbol(symbol.strip())
        elif path and line is not None:
            if line < 1:
                raise ToolInputError(f"line must be 1 or more, got {line}")
            rel = self._readable_file(path).rel_path
        else:
            raise ToolInputError("give path and line (1-based), or symbol")
        answer = self.workspace.explain(rel, line)
        target = answer.chunks[0] if answer.chunks else None
        return ExplainResult(
            **self._answer_fields(answer),
            path=rel,
            alternatives=alternatives,
            target=definition_out(target, self.redactor) if target is not None else None,
        )

    def outline(self, path: str) -> OutlineResult:
        self._refresh()
        resolved = self._readable_file(path)
        rel = resolved.rel_path
        chunks = self.workspace.chunks(path=rel)
        indexed = self.workspace.indexed_files().get(rel)
        source: Literal["index", "disk"] = "index"
        if not chunks or indexed != (resolved.source.size, resolved.source.mtime):
            chunks, source = self.workspace.chunk_text(rel, resolved.source.text), "disk"
        definitions, truncated = outline_definitions(chunks, self.redactor)
        language = chunks[0].language if chunks else "unknown"
        return OutlineResult(
            path=rel, language=language, definitions=definitions, truncated=truncated, source=source
        )

    def status(self) -> StatusResult:
        self._refresh()
        s = self.workspace.status()
        answers: str = self.settings.provider
        if answers != "extractive":
            where = self.settings.base_url or "the provider's API"
            answers += f" ({self.settings.model or 'default model'} at {where})"
            if not self.settings.allow_remote:
                answers = "extractive (a remote provider is configured but allowRemote is false)"
        return StatusResult(
            root=s.root,
            files=s.files,
            chunks=s.chunks,
            embedded=s.embedded,
            languages=s.languages,
            embedder=f"{s.embedder} ({s.embedding_model}, dim {s.dimension})",
            answers=answers,
            skipped=s.skipped,
            last_indexed=self.keeper.last_indexed or s.last_updated,
            last_error=self.keeper.last_error,
            index_dir=s.index_dir,
            index=self.index_state(),
        )

    # -- shared pieces ---------------------------------------------------------------------
    def index_state(self) -> IndexState:
        progress = self.keeper.progress()
        coverage = self.workspace.coverage()
        # The dense arm joins as soon as any chunk is embedded, but until embedding finishes
        # most hits come from keyword search: that is what the agent should assume. An index
        # saved by an earlier run is searched whole (both arms) while this run re-reads the
        # tree for what changed since.
        reading = progress.indexing and progress.phase in ("starting", "scan", "chunk")
        resumed = self.keeper.resumed
        keyword = coverage < 1.0 or (reading and not resumed) or self.workspace.keyword_only
        mode: Literal["hybrid", "keyword"] = "keyword" if keyword else "hybrid"
        note = ""
        if reading and resumed:
            note = (
                "checking the workspace for changes since the last index "
                f"({progress.done}/{progress.total} files read): results come from the index "
                "as last saved; call again or check status"
            )
        elif reading:
            note = (
                f"indexing in the background ({progress.done}/{progress.total} files read): "
                "results cover only part of the workspace; call again or check status"
            )
        elif progress.indexing and coverage < 1.0:
            note = (
                "keyword search over the whole workspace; semantic embeddings cover "
                f"{coverage:.0%} so far and are still being computed "
                f"({progress.done}/{progress.total})"
            )
        elif coverage < 1.0:
            note = f"semantic embeddings cover {coverage:.0%}; keyword search covers everything"
        return IndexState(
            indexing=progress.indexing,
            phase=progress.phase,
            done=progress.done,
            total=progress.total,
            coverage=round(coverage, 4),
            search_mode=mode,
            note=note,
        )

    def _refresh(self) -> None:
        try:
            outcome = self.keeper.refresh()
        except OSError as exc:  # a vanished root or an unreadable index: answer from what is there
            log.warning("freshness check failed: %s", exc)
            self.keeper.last_error = f"freshness check failed: {exc}"
            return
        if outcome.updated or outcome.removed:
            log.info(
                "re-indexed %d changed and %d removed files in %.0f ms",
                outcome.updated,
                outcome.removed,
                outcome.seconds * 1000,
            )

    def _filters(
        self, language: str | None, path: str | None, kind: str | None
    ) -> SearchFilters | None:
        if kind is not None and kind not in KINDS:
            raise ToolInputError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
        glob = normalize_glob(self.root, path)
        lang = (
            _LANGUAGE_ALIASES.get(language.strip().lower(), language.strip().lower())
            if language
            else ""
        )
        if lang and not self.keeper.indexing():
            indexed = self.workspace.status().languages
            if lang not in indexed:  # an empty result would read as "no such code"
                raise ToolInputError(
                    f"no indexed code in language {language!r}; indexed languages: "
                    f"{', '.join(sorted(indexed)) or 'none'}"
                )
        filters = SearchFilters(
            languages=(lang,) if lang else (),
            path_globs=(glob,) if glob else (),
            kinds=(kind,) if kind else (),  # type: ignore[arg-type]
        )
        return None if filters.is_empty() else filters

    def _readable_file(self, path: str) -> ResolvedFile:
        return resolve_file(
            self.root, path, self.settings, WorkspaceFilter(self.root, self.settings)
        )

    def _locate_symbol(self, symbol: str) -> tuple[str, int, list[str]]:
        """The definition an agent names (`parse_args`, `Config.load`, `DirEntry::from_path`):
        exact matches first."""
        if not symbol:
            raise ToolInputError("symbol is empty")
        symbol = with_dots(symbol)
        found = [
            c
            for c in self.workspace.definitions(symbol.rsplit(".", 1)[-1])
            if not is_secret(c.path, c.text)
        ]
        found = [c for c in found if c.symbol == symbol or c.symbol.endswith("." + symbol)] or found
        if not found:
            hint = " (the index is still being built)" if self.keeper.indexing() else ""
            raise ToolInputError(f"no definition named {symbol!r} in the index{hint}; try search")
        found.sort(key=_definition_rank(symbol))
        best = found[0]
        others = [
            f"{c.path}:{c.start_line} {c.symbol}"
            for c in found[1:]
            if c.symbol != best.symbol or c.path != best.path
        ][:MAX_ALTERNATIVES]
        return best.path, best.start_line, others

    def _answer_fields(self, answer: Answer) -> dict[str, Any]:
        # The editor's "no model configured, here is how to set one" note is ~400 characters
        # of an agent's context saying what `provider: extractive` already says.
        body = (
            answer.text.replace(NO_MODEL_NOTE, "").strip()
            if answer.provider == "extractive"
            else answer.text
        )
        text, cut = trim(clean_text(body, self.redactor), ANSWER_CHARS)
        citations = [
            CitationOut(
                number=c.number,
                path=c.path,
                start_line=c.start_line,
                end_line=c.end_line,
                symbol=c.symbol,
                stale=c.stale,
            )
            for c in answer.citations
            if not is_secret(c.path, "")
        ]
        error = clean_text(answer.error, self.redactor) if answer.error else None
        return {
            "answer": text,
            "truncated": cut,
            "citations": citations,
            "confident": answer.confident,
            "provider": answer.provider,
            "error": error,
            "index": self.index_state(),
        }


def _required(value: str, name: str) -> str:
    value = (value or "").strip()
    if not value:
        raise ToolInputError(f"{name} is empty")
    return value


def _definition_rank(symbol: str) -> Callable[[Chunk], tuple[int, int, int, str, int]]:
    """Exact qualified name first, then definitions over module chunks, then source over tests."""

    def key(chunk: Chunk) -> tuple[int, int, int, str, int]:
        exact = 0 if chunk.symbol == symbol else 1
        kind = 0 if chunk.kind in ("function", "method", "class") else 1
        test = 1 if "test" in chunk.path.lower() else 0
        return exact, kind, test, chunk.path, chunk.start_line

    return key


__all__ = ["CodeService", "ToolInputError"]
