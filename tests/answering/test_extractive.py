"""Extractive answers quote the lines that say most about the question (real chunks)."""

from __future__ import annotations

from codeqa_lsp.answering.extractive import extractive_answer, matching_lines, term_weights
from codeqa_lsp.chunking.chunker import chunk_source

PATHS = '''
def resolve_file(
    root, raw, settings, workspace_filter
) -> ResolvedFile:
    """A workspace file an agent may read."""
    rel = relative(root, raw)
    source = read_file_source(root, rel, settings)
    if secret_name_rule(rel) is not None:
        raise ToolInputError(f"{rel} is refused")
    return ResolvedFile(rel, source)


def read_file_bytes(root, rel):
    """The bytes of a file."""
    return (root / rel).read_bytes()
'''


def test_matching_lines_skip_the_signature_and_weigh_rare_terms() -> None:
    chunks = {c.symbol: c for c in chunk_source("mcp/paths.py", PATHS)}
    resolve = chunks["resolve_file"]
    question = "how does it decide a file holds a secret?"
    # Unweighted, the line naming "file" ties with the secret check and comes first; the
    # signature's own lines (`def resolve_file(`, `) -> ResolvedFile:`) are never quoted.
    plain = matching_lines(resolve, question, limit=5)
    assert plain[0] == (7, "source = read_file_source(root, rel, settings)")
    assert not any(t.startswith(("def resolve_file(", ") -> ResolvedFile:")) for _, t in plain)
    # "file" is in every quoted chunk, "secret" in one: the secret check is quoted first.
    weights = term_weights(question, list(chunks.values()))
    assert weights["secret"] > weights["file"]
    weighted = matching_lines(resolve, question, limit=1, weights=weights)
    assert weighted == [(8, "if secret_name_rule(rel) is not None:")]
    answer = extractive_answer(question, [resolve, chunks["read_file_bytes"]], "note")
    assert "Matching lines: L7 `source = read_file_source(root, rel, settings)`; L8 `if" in answer
