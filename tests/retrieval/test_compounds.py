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
