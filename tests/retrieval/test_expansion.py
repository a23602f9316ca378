"""Code-vocabulary query expansion: a question in everyday words reaches code that uses the
field's own terms, over a real index (SQLite FTS5, hnswlib, the `hash` embedder)."""

from __future__ import annotations

from pathlib import Path

from codeqa_lsp.config import Settings
from codeqa_lsp.index.indexer import Indexer
from codeqa_lsp.retrieval.expansion import expansion_terms, vocabulary
from codeqa_lsp.retrieval.search import HybridSearcher

FILES = {
    "app/settings.py": '''
class Settings:
    """Where the service is and how long to wait for it."""

    def endpoint_url(self):
        """The base address of the remote index service."""
        return self.base + "/index"

    def request_timeout(self):
        """Seconds to wait for the index service before giving up."""
        return self.timeout
''',
    "app/filters.py": '''
"""Which files the crawler must skip: a file holding a secret or a credential
(a PEM block, a token) is excluded before anything reads it."""

SECRET_PREFIXES = ("-----BEGIN RSA", "ghp_", "sk-")


def holds_secret(text):
    """True when the text carries a credential or token shape."""
    return any(prefix in text for prefix in SECRET_PREFIXES)
''',
    "app/report.py": '''
def render_report(rows):
    """Format the crawl statistics as a table."""
    return "\\n".join(str(row) for row in rows)
''',
}


def test_phrases_map_to_the_codes_words_minus_the_querys_own() -> None:
    assert vocabulary()["api keys"]  # the shipped table loads
    terms = expansion_terms("where are API keys kept out of the index?")
    assert {"secret", "credential", "skip", "exclude"} <= set(terms)
    assert "index" not in terms and "api" not in terms
    # A bare "key" is a dict key as often as a credential: no expansion.
    assert expansion_terms("how is the cache key computed") == []
    # The query's own words are never added twice.
    assert "secret" not in expansion_terms("which secret do api keys use")
    # What a tool writes when a user mistypes a command: yargs's `recommendCommands` picks
    # the candidate at the smallest edit distance (user pass, not an evaluation set).
    terms = expansion_terms("how does it suggest a command when the user mistypes one")
    assert {"recommend", "distance", "closest"} <= set(terms)
    # Abbreviations code writes for a word the question spells out (spdlog's `msg`, pflag's
    # `readAsCSV`), but not for words a CLI library uses everywhere ("command line").
    assert {"msg", "buf"} <= set(expansion_terms("how are messages copied into the buffer"))
    assert "csv" in expansion_terms("how are comma separated values parsed")
    assert "cli" not in expansion_terms("how are command line options parsed")
    assert expansion_terms("where is the entry point of the tool") == ["main"]


def test_a_question_in_everyday_words_finds_the_code_in_the_codes_words(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text.lstrip())
    settings = Settings(embedder="hash", index_dir=str(tmp_path / "index"))
    indexer = Indexer(root, settings)
    try:
        indexer.index()
        searcher = HybridSearcher(indexer, settings)
        question = "where are api keys kept out of the index"
        hybrid = searcher.search(question, top_k=3)
        assert hybrid.hits[0].chunk.path == "app/filters.py"
        # BM25 alone (no expansion) finds only the words "index" in the settings file.
        plain = searcher.search(question, top_k=3, mode="bm25")
        assert all(h.chunk.path != "app/filters.py" for h in plain.hits)
        searcher.close()
    finally:
        indexer.close()
