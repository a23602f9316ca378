"""HybridSearcher over a real index (real SQLite, real hnswlib, the `hash` embedder)."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from codeqa_lsp.config import Settings
from codeqa_lsp.index.filters import SearchFilters
from codeqa_lsp.index.indexer import Indexer
from codeqa_lsp.retrieval.search import HybridSearcher
from tests.fakes.llm_server import QuietHTTPServer

FILES = {
    "app/cli.py": '''
"""Command line entry point."""

import argparse


def parse_args(argv):
    """Read the command line options: verbosity, output path and the input files."""
    parser = argparse.ArgumentParser(prog="tool")
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--output")
    parser.add_argument("inputs", nargs="*")
    return parser.parse_args(argv)


def describe_arguments():
    """Explain how arguments are parsed: parse args, parse options, parse args again.
    Arguments, arguments, args: the parser parses args from argv into parsed args."""
    return "parse args parse args parse args"
''',
    "app/main.py": '''
from app.cli import parse_args


def main(argv):
    """Entry point: parse_args, then run. parse_args is called once; parse_args errors exit."""
    options = parse_args(argv)
    if options.verbose:
        print(parse_args.__doc__)
    return run(options)
''',
    "app/session.py": '''
"""HTTP sessions with connection pooling and retries."""


class Session:
    """Keeps cookies and a connection pool across requests."""

    def send(self, request, timeout=None):
        """Send a prepared request over a pooled connection and return the response."""
        adapter = self.get_adapter(request.url)
        return adapter.send(request, timeout=timeout)

    def get_adapter(self, url):
        """Pick the transport adapter whose prefix matches the url."""
        for prefix, adapter in self.adapters.items():
            if url.lower().startswith(prefix.lower()):
                return adapter
        raise ValueError("no adapter for " + url)


def retry_with_backoff(call, attempts=3, base_delay=0.5):
    """Retry a failing network call, sleeping exponentially longer between attempts."""
    import time

    for attempt in range(attempts):
        try:
            return call()
        except ConnectionError:
            time.sleep(base_delay * 2 ** attempt)
    return call()
''',
    "web/router.js": """
/** Match an incoming request path against the registered routes. */
function matchRoute(routes, path) {
  for (const route of routes) {
    if (route.pattern.test(path)) {
      return route;
    }
  }
  return null;
}

/** Send a JSON response with the right content type. */
function sendJson(res, body) {
  res.setHeader("Content-Type", "application/json");
  res.end(JSON.stringify(body));
}

module.exports = { matchRoute, sendJson };
""",
}


def _write_repo(root: Path) -> Path:
    for rel, text in FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text.lstrip(), encoding="utf-8")
    return root


def _open(root: Path, settings: Settings) -> HybridSearcher:
    indexer = Indexer(root, settings)
    indexer.index()
    return HybridSearcher(indexer, settings)


@pytest.fixture
def searcher(tmp_path: Path) -> Iterator[HybridSearcher]:
    settings = Settings(embedder="hash", index_dir=str(tmp_path / "index"))
    searcher = _open(_write_repo(tmp_path / "repo"), settings)
    yield searcher
    searcher.close()
    searcher.indexer.close()


def test_hits_carry_both_arms_and_fused_order(searcher: HybridSearcher) -> None:
    response = searcher.search("retry a failing network call with exponential backoff", top_k=5)
    assert response.coverage == 1.0
    top = response.hits[0]
    assert top.chunk.symbol == "retry_with_backoff"
    assert top.bm25_rank == 1 and top.dense_rank is not None and top.dense_score is not None
    scores = [h.score for h in response.hits]
    assert scores == sorted(scores, reverse=True)


def test_single_arm_modes(searcher: HybridSearcher) -> None:
    bm25 = searcher.search("pooled connection adapter", top_k=5, mode="bm25")
    dense = searcher.search("pooled connection adapter", top_k=5, mode="dense")
    assert bm25.hits and all(h.bm25_rank is not None for h in bm25.hits)
    assert dense.hits and all(h.dense_rank is not None for h in dense.hits)
    with pytest.raises(ValueError, match="unknown search mode"):
        searcher.search("x", mode="sparse")  # type: ignore[arg-type]


def test_good_query_is_confident_unrelated_query_is_not(searcher: HybridSearcher) -> None:
    good = searcher.search("send a prepared request over a pooled connection")
    assert good.confident, good.reason
    assert good.reason == ""
    unrelated = searcher.search("chocolate cake recipe with whipped cream and strawberries")
    assert not unrelated.confident
    assert "no good source" in unrelated.reason
    assert "floor" in unrelated.reason


def test_exact_symbol_fast_path_ranks_the_definition_first(searcher: HybridSearcher) -> None:
    # The dense arm alone prefers `main`, which calls parse_args three times.
    dense = searcher.search("where is parse_args", top_k=3, mode="dense")
    assert dense.hits[0].chunk.symbol != "parse_args"
    response = searcher.search("where is parse_args", top_k=3)
    assert response.hits[0].chunk.symbol == "parse_args"
    assert response.hits[0].exact_symbol
    assert response.confident
    dotted = searcher.search("Session.send", top_k=3)
    assert dotted.hits[0].chunk.symbol == "Session.send"


def test_filters_language_path_and_kind(searcher: HybridSearcher) -> None:
    js_only = searcher.search(
        "send a response", top_k=10, filters=SearchFilters(languages=("javascript",))
    )
    assert js_only.hits and {h.chunk.language for h in js_only.hits} == {"javascript"}
    under_app = searcher.search("send", top_k=10, filters=SearchFilters(path_globs=("app/",)))
    assert under_app.hits and all(h.chunk.path.startswith("app/") for h in under_app.hits)
    methods = searcher.search("send request", top_k=10, filters=SearchFilters(kinds=("method",)))
    assert methods.hits and {h.chunk.kind for h in methods.hits} == {"method"}
    # The fast path honours filters too: parse_args lives outside web/.
    scoped = searcher.search("where is parse_args", filters=SearchFilters(path_globs=("web/",)))
    assert all(not h.exact_symbol and h.chunk.path.startswith("web/") for h in scoped.hits)


def test_empty_query_is_not_an_error(searcher: HybridSearcher) -> None:
    response = searcher.search("   ")
    assert response.hits == [] and not response.confident and response.reason


class _Refuse(http.server.BaseHTTPRequestHandler):
    """An OpenAI-compatible endpoint that refuses every key: embeddings never arrive."""

    def do_POST(self) -> None:
        body = b'{"error": {"message": "bad key", "type": "invalid_request_error"}}'
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def test_progressive_keyword_search_before_any_embedding(tmp_path: Path) -> None:
    server = QuietHTTPServer(("127.0.0.1", 0), _Refuse)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        settings = Settings(
            embedder="openai",
            embedding_base_url=f"http://127.0.0.1:{server.server_port}/v1",
            index_dir=str(tmp_path / "index"),
            max_retries=0,
        )
        searcher = _open(_write_repo(tmp_path / "repo"), settings)
        try:
            response = searcher.search("retry a failing network call with exponential backoff")
            assert response.coverage == 0.0
            assert response.hits[0].chunk.symbol == "retry_with_backoff"
            assert all(h.dense_rank is None for h in response.hits)
            assert response.confident  # the keyword evidence is strong
            vague = searcher.search("chocolate cake recipe")
            assert not vague.confident and "no embeddings yet" in vague.reason
        finally:
            searcher.indexer.close()
    finally:
        server.shutdown()
