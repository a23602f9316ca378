"""Definitions named after what the question does to a named identifier (`compounds.py`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from codeqa_lsp.chunking.model import Chunk
from codeqa_lsp.retrieval.compounds import compound_ids
from tests.chunks import chunk_of
from tests.retrieval.searchers import hash_searcher


def _method(symbol: str) -> Chunk:
    return chunk_of(f"void {symbol}() {{}}", "src/Builder.java", symbol, "method", "java")


@pytest.mark.parametrize(
    ("question", "identifier", "lifted"),
    [
        (
            "where are TypeAdapterFactory instances registered",
            "TypeAdapterFactory",
            {"Builder.registerTypeAdapterFactory"},
        ),
        ("how is a new_session created", "new_session", {"create_new_session"}),
        # Every other word of the name must be in the question.
        ("how does TypeAdapterFactory build adapters", "TypeAdapterFactory", set()),
    ],
)
def test_compounds_of_a_named_identifier(question: str, identifier: str, lifted: set[str]) -> None:
    chunks = [
        _method(symbol)
        for symbol in (
            "Builder.registerTypeAdapterFactory",
            "TypeAdapterFactory",  # the identifier itself is the fast path's, not a compound
            "create_new_session",
            "Builder.registerTypeAdapter",
        )
    ]
    found = compound_ids([identifier], question, chunks)
    assert {c.symbol for c in chunks if c.id in found} == lifted


FILES = {
    "src/TypeAdapterFactory.java": """
/** Creates type adapters for a set of related types. A TypeAdapterFactory is registered
 * once and asked for each type; a TypeAdapterFactory returns null for types it ignores. */
public interface TypeAdapterFactory {
  /** Returns a type adapter for the type, or null if this TypeAdapterFactory ignores it. */
  <T> TypeAdapter<T> create(Gson gson, TypeToken<T> type);
}
""",
    "src/EnumTypeAdapterFactory.java": """
/** A TypeAdapterFactory for enums: this TypeAdapterFactory instance handles every enum. */
final class EnumTypeAdapterFactory implements TypeAdapterFactory {
  public <T> TypeAdapter<T> create(Gson gson, TypeToken<T> type) {
    return type.isEnum() ? new EnumTypeAdapter(type) : null;
  }
}
""",
    "src/GsonBuilder.java": """
public final class GsonBuilder {
  public GsonBuilder registerTypeAdapterFactory(TypeAdapterFactory factory) {
    Objects.requireNonNull(factory);
    factories.add(factory);
    return this;
  }

  public GsonBuilder setPrettyPrinting() {
    prettyPrinting = true;
    return this;
  }
}
""",
}


def test_the_compound_follows_the_named_identifier(tmp_path: Path) -> None:
    with hash_searcher(tmp_path, FILES) as searcher:
        hits = searcher.search("where are TypeAdapterFactory instances registered", top_k=3).hits
        ranked = [hit.chunk.symbol for hit in hits]
        assert ranked[:2] == ["TypeAdapterFactory", "GsonBuilder.registerTypeAdapterFactory"]


SERVER = {
    "server/wsgi.py": '''
class WSGIResponder:
    def start_response(self, status, response_headers, exc_info=None):
        """Begin the response: the status and headers go out as the start message."""
        self.status = status
        self.response_started = True
        self.send_queue.append({"type": "http.response.start", "status": int(status[:3])})
''',
    "server/cycle.py": """
class RequestResponseCycle:
    async def send(self, message):
        message_type = message["type"]
        if not self.response_started:
            if message_type != "http.response.start":
                msg = "Expected ASGI message 'http.response.start', but got '%s'."
                raise RuntimeError(msg % message_type)
            self.response_started = True
""",
}


def _app(n: int) -> str:
    return f"""
async def app_{n}(scope, receive, send):
    await send({{"type": "http.response.start", "status": 200, "headers": []}})
    await send({{"type": "http.response.body", "body": b"message {n}"}})
"""


SERVER["tests/test_http.py"] = "".join(_app(n) for n in range(6))


def test_the_dotted_values_of_a_pasted_line_name_no_compounds(tmp_path: Path) -> None:
    """uvicorn: `'http.response.start'` in a pasted message made `start_response` (start +
    the question's "response") a compound of a named identifier, lifted above the code
    that writes the message."""
    pasted = "Expected ASGI message 'http.response.body', but got 'http.response.start'."
    with hash_searcher(tmp_path, SERVER) as searcher:
        ranked = [hit.chunk.symbol for hit in searcher.search(pasted, top_k=3).hits]
        assert ranked[0] == "RequestResponseCycle.send", ranked
        assert "WSGIResponder.start_response" not in ranked  # it was second, lifted
        # Asked as a question, the same dotted name still finds its compounds.
        question = "where is the start_response for http.response.start written"
        ranked = [hit.chunk.symbol for hit in searcher.search(question, top_k=3).hits]
        assert ranked[0] == "WSGIResponder.start_response", ranked
