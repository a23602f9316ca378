"""One walk of the tree for both the definitions and the references of a file.

A query's cost is mostly the walk over the tree, whatever its patterns: on 600 stdlib files
the references pass (`captures()`) cost 0.19 s CPU, as much as the definitions pass
(`matches()`, 0.20 s). For the languages with references, the two pattern sets therefore
run as one query (`references.combined_query`): 0.31 -> 0.18 s for both passes on those
files, the per-match results of the reference patterns included. Every other language
keeps its single definitions pass.
"""

from __future__ import annotations

from tree_sitter import Node, QueryCursor

from codeqa_lsp.chunking.definitions import Definition, find_definitions
from codeqa_lsp.chunking.languages import Grammar
from codeqa_lsp.chunking.references import FileReferences, combined_query


def definitions_and_references(
    gram: Grammar, root: Node, data: bytes, path: str
) -> tuple[list[Definition], FileReferences]:
    """`find_definitions` and `FileReferences` of one parsed file, from one query walk."""
    query = combined_query(gram)
    if query is None:
        found = find_definitions(gram, root, data, path)
        return found, FileReferences(gram.language, gram.name, root, data)
    split = gram.query.pattern_count  # the definitions' patterns come first
    definitions: list[dict[str, list[Node]]] = []
    references: dict[str, list[Node]] = {}
    for index, captures in QueryCursor(query).matches(root):
        if index < split:
            definitions.append(captures)
            continue
        for name, nodes in captures.items():
            references.setdefault(name, []).extend(nodes)
    found = find_definitions(gram, root, data, path, definitions)
    return found, FileReferences(gram.language, gram.name, root, data, references)
