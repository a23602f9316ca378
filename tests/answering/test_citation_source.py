"""Citations and answers over a small in-memory `CodeSource`: no index, no engine.

Answering only sees its workspace through `answering.source.CodeSource`; these tests give
it a dictionary of files (the real chunker cuts them) and check that what it cites is
verified against the files *now*: stale after an edit, dropped when deleted, kept when
re-chunking fails. The same behaviour over a real index is in `test_citations.py`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

from codeqa_lsp.answering.ask import Answerer
from codeqa_lsp.answering.citations import NOT_FOUND_NOTE, CitationResolver, verify
from codeqa_lsp.answering.model import Answer
from codeqa_lsp.answering.source import CodeSource
from codeqa_lsp.chunking.chunker import chunk_source
from codeqa_lsp.chunking.model import Chunk
from codeqa_lsp.config import Settings
from codeqa_lsp.index.filters import SearchFilters
from codeqa_lsp.retrieval.model import SearchHit, SearchResponse, Use

GREET = '''\
"""Greetings."""


def greet(name: str) -> str:
    """Say hello to someone."""
    return "hello " + name


def farewell(name: str) -> str:
    """Say goodbye to someone."""
    return "bye " + greet(name)[6:]
'''


class MemorySource:
    """Files in a dict; `index()` records what an indexer would have stored for them."""

    def __init__(self, files: dict[str, str]) -> None:
        self.files = {path: text.encode() for path, text in files.items()}
        self.indexed: dict[str, list[Chunk]] = {}
        self.hashes: dict[str, str] = {}
        self.searches: list[str] = []
        self.chunker_fails = False

    def index(self) -> None:
        for path, data in self.files.items():
            self.indexed[path] = chunk_source(path, data.decode())
            self.hashes[path] = hashlib.sha256(data).hexdigest()

    def chunk(self, symbol: str) -> Chunk:
        (found,) = [c for chunks in self.indexed.values() for c in chunks if c.symbol == symbol]
        return found

    # -- CodeSource ------------------------------------------------------------------------
    def search(
        self, query: str, top_k: int | None = None, filters: SearchFilters | None = None
    ) -> SearchResponse:
        self.searches.append(query)
        words = set(query.lower().split())
        hits = [
            SearchHit(c, float(len(words & set(c.text.lower().split()))))
            for chunks in self.indexed.values()
            for c in chunks
            if c.kind == "function"
        ]
        hits = sorted((h for h in hits if h.score > 0), key=lambda h: -h.score)[: top_k or 5]
        return SearchResponse(query=query, hits=hits, confident=bool(hits))

    def chunks(self, path: str | None = None, language: str | None = None) -> list[Chunk]:
        return [c for p, chunks in self.indexed.items() if path in (None, p) for c in chunks]

    def get_chunks(self, ids: Sequence[str]) -> list[Chunk]:
        by_id = {c.id: c for chunks in self.indexed.values() for c in chunks}
        return [by_id[i] for i in ids if i in by_id]

    def definitions(self, name: str) -> list[Chunk]:
        return [c for c in self.chunks() if c.symbol == name or c.symbol.endswith("." + name)]

    def uses(self, definition: Chunk, limit: int) -> list[Use]:
        call = f"{definition.name}("
        return [
            Use(c, (c.start_line + c.text[: c.text.index(call)].count("\n"),))
            for c in self.chunks()
            if c.name != definition.name and call in c.text
        ][:limit]

    def chunk_text(self, path: str, text: str) -> list[Chunk]:
        if self.chunker_fails:
            raise RuntimeError("chunker broke")
        return chunk_source(path, text)

    def file_hash(self, path: str) -> str | None:
        return self.hashes.get(path)

    def read_file(self, path: str) -> bytes | None:
        return self.files.get(path)

    def skip_reason(self, path: str) -> str | None:
        return "excluded" if path.startswith("vendor/") else None


def indexed_source() -> MemorySource:
    source = MemorySource({"app/greet.py": GREET})
    source.index()
    return source


def test_the_fake_is_a_code_source() -> None:
    source: CodeSource = indexed_source()  # mypy checks the protocol here
    assert source.file_hash("app/greet.py") is not None


def test_markers_and_mentions_are_checked_against_the_files_now() -> None:
    source = indexed_source()
    greet, farewell = source.chunk("greet"), source.chunk("farewell")
    text = (
        "`greet` says hello [1], `farewell` reuses it [2, 7]. See "
        f"app/greet.py:{greet.start_line + 1} and app/other.py:3."
    )
    checked = verify(text, [greet, farewell], CitationResolver(source))
    assert [(c.number, c.path, c.start_line, c.end_line, c.stale) for c in checked.citations] == [
        (1, "app/greet.py", greet.start_line, greet.end_line, False),
        (2, "app/greet.py", farewell.start_line, farewell.end_line, False),
    ]
    assert "reuses it [2]." in checked.text and checked.dropped == 1
    assert f"app/greet.py:{greet.start_line + 1} [1]" in checked.text
    assert f"app/other.py:3{NOT_FOUND_NOTE}" in checked.text and checked.unverified_mentions == 1


def test_an_edited_file_makes_the_citation_stale_and_repointed() -> None:
    source = indexed_source()
    farewell = source.chunk("farewell")
    source.files["app/greet.py"] = ("# moved down\n\n" + GREET).encode()
    (citation,) = verify("Bye [1].", [farewell], CitationResolver(source)).citations
    assert citation.stale and (citation.start_line, citation.end_line) == (
        farewell.start_line + 2,
        farewell.end_line + 2,
    )


def test_a_file_that_was_never_indexed_is_not_stale() -> None:
    source = indexed_source()
    farewell = source.chunk("farewell")
    source.hashes.clear()
    (citation,) = verify("Bye [1].", [farewell], CitationResolver(source)).citations
    assert not citation.stale


def test_a_deleted_file_drops_its_citation() -> None:
    source = indexed_source()
    greet = source.chunk("greet")
    del source.files["app/greet.py"]
    checked = verify("Hello [1].", [greet], CitationResolver(source))
    assert checked.citations == [] and checked.dropped == 1 and "[1]" not in checked.text


def test_a_chunker_failure_keeps_the_stale_citation_at_its_old_lines() -> None:
    source = indexed_source()
    greet = source.chunk("greet")
    source.files["app/greet.py"] = GREET.replace("hello ", "hi ").encode()
    source.chunker_fails = True
    (citation,) = verify("Hello [1].", [greet], CitationResolver(source)).citations
    assert citation.stale and (citation.start_line, citation.end_line) == (
        greet.start_line,
        greet.end_line,
    )


def test_an_answer_over_the_fake_source_cites_verified_lines(tmp_path: Path) -> None:
    source = indexed_source()
    answerer = Answerer(source, Settings(), tmp_path)
    try:
        items = list(answerer.ask_stream("what does farewell say to someone"))
    finally:
        answerer.close()
    answer = items[-1]
    assert isinstance(answer, Answer) and answer.provider == "extractive" and answer.confident
    assert source.searches == ["what does farewell say to someone"]
    farewell = source.chunk("farewell")
    assert ("app/greet.py", farewell.start_line, farewell.end_line) in {
        (c.path, c.start_line, c.end_line) for c in answer.citations
    }


def test_explain_over_the_fake_source_finds_callees_and_refuses_skipped_files(
    tmp_path: Path,
) -> None:
    source = indexed_source()
    answerer = Answerer(source, Settings(), tmp_path)
    try:
        farewell = source.chunk("farewell")
        *_, answer = answerer.explain_stream("app/greet.py", farewell.start_line + 2)
        *_, refused = answerer.explain_stream("vendor/lib.py", 1, text="def f():\n    return 1\n")
    finally:
        answerer.close()
    assert isinstance(answer, Answer) and isinstance(refused, Answer)
    assert [c.symbol for c in answer.chunks] == [
        "farewell",
        "greet",
    ]  # the target, then what it calls
    assert not any(c.stale for c in answer.citations)
    assert (
        "not part of the indexed workspace (excluded)" in refused.text and refused.citations == []
    )
