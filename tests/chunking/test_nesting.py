"""Deeply nested functions must not multiply the stored text: only the outer levels get
chunks of their own, and the innermost code is still inside a chunk."""

from __future__ import annotations

from codeqa_lsp.chunking.chunker import MAX_FUNCTION_NESTING, chunk_source


def nested_python(depth: int) -> str:
    lines = []
    for level in range(depth):
        lines.append("    " * level + f"def level_{level}(x):")
    lines.append("    " * depth + "return 'innermost marker'")
    return "\n".join(lines) + "\n"


def test_shallow_nesting_keeps_a_chunk_per_function() -> None:
    chunks = chunk_source("m.py", nested_python(3))
    assert [c.symbol for c in chunks] == ["level_0", "level_0.level_1", "level_0.level_1.level_2"]


def test_deep_nesting_stops_giving_inner_functions_their_own_chunks() -> None:
    source = nested_python(12)
    chunks = chunk_source("m.py", source)
    symbols = [c.symbol for c in chunks]
    assert len({s for s in symbols}) == MAX_FUNCTION_NESTING + 1
    assert max(s.count(".") for s in symbols) == MAX_FUNCTION_NESTING
    assert sum(len(c.text) for c in chunks) <= (MAX_FUNCTION_NESTING + 2) * len(source)
    assert any("innermost marker" in c.text for c in chunks)
