"""Text read off a definition's tree-sitter node: its body, one-line signature, doc.

Shared by the chunker (chunk headers, class skeletons) and kept apart from it because these
are the grammar-shape rules (where a body hides behind an assignment or declarator, which
comments are doc comments) that change when a language is added, not when chunking does.
"""

from __future__ import annotations

import re

from tree_sitter import Node

from codeqa_lsp.chunking.definitions import Definition

_COMMENT_MARKERS = re.compile(
    r"^[ \t]*(?:/\*\*?|\*/|\*(?!/)|//[/!]?|#+|--|;+)[ \t]?|\*/[ \t]*$", re.M
)
_BODY_HOLDERS = ("value", "right", "declaration", "declarator", "type")
_PY_DEFS = frozenset({"function_definition", "class_definition"})


def find_body(node: Node) -> Node | None:
    """The body of a definition, looking through assignments and declarators
    (`app.x = function () {...}`, `const f = () => {...}`, `@path` statements)."""
    frontier = [node]
    for _ in range(4):
        following: list[Node] = []
        for current in frontier:
            body = current.child_by_field_name("body")
            if body is not None:
                return body
            for field in _BODY_HOLDERS:
                child = current.child_by_field_name(field)
                if child is not None:
                    following.append(child)
            if current.type in ("expression_statement", "arguments", "call_expression"):
                following.extend(
                    c
                    for c in current.named_children
                    if "function" in c.type
                    or c.type
                    in ("assignment_expression", "call_expression", "arguments", "arrow_function")
                )
        frontier = following
        if not frontier:
            break
    return None


def header_node(node: Node) -> Node:
    """Where a signature starts: `const f = () => {}` reads better with its `const`."""
    if node.type not in ("variable_declarator", "type_spec"):  # Go: `type Cart struct`
        return node
    parent = node.parent
    return parent if parent is not None and parent.named_child_count == 1 else node


def signature_of(data: bytes, node: Node, body: Node | None) -> str:
    """The definition's header up to its body, on one line (comments before the body,
    as Python allows after `def f():`, are not part of it)."""
    if body is not None and body.start_byte > node.start_byte:
        end = body.start_byte
        raw = data[node.start_byte : end]
        if b"#" in raw or b"/" in raw:  # maybe a comment: look at the children (not free)
            for child in node.children:
                if child.start_byte >= end:
                    break
                if "comment" in child.type:
                    raw = data[node.start_byte : child.start_byte]
                    break
    else:
        end = data.find(b"\n", node.start_byte, node.end_byte)
        raw = data[node.start_byte : node.end_byte if end == -1 else end]
    text = " ".join(raw.decode("utf-8", "replace").split())
    if text.endswith("=>") or text.endswith("{"):
        text = text.rstrip("{ ").rstrip()
    if text.endswith("\\"):  # a C macro's line continuation: `#define MAX(a, b) \`
        text = text.rstrip("\\ ")
    return text[:300]


def member_summary(language: str, data: bytes, member: Definition) -> str:
    body, signature = member.body, member.signature
    if body is None:
        return signature
    if language == "python":
        return f"{signature} ..."
    if data[body.start_byte : body.start_byte + 1] == b"{":
        return f"{signature} {{ ... }}"
    return f"{signature} ..."


def doc_of(data: bytes, definition: Definition, body: Node | None) -> str:
    """The docstring (Python) or the doc comment above the definition, markers stripped."""
    if (
        body is not None
        and data[body.start_byte : body.start_byte + 4].lstrip(b"rRbBuUfF")[:1] in (b'"', b"'")
        and definition.node.type in _PY_DEFS
        and body.type == "block"
    ):  # a body that starts with a string literal: a docstring
        first = body.named_child(0) if body.named_child_count else None
        if first is not None and first.type == "expression_statement" and first.named_child_count:
            string = first.named_children[0]
            if string.type == "string":
                raw = data[string.start_byte : string.end_byte].decode("utf-8", "replace")
                return _strip_quotes(raw)[:2000]
    comments = [n for n in definition.doc_nodes if "comment" in n.type]
    if not comments:
        return ""
    raw = "\n".join(data[n.start_byte : n.end_byte].decode("utf-8", "replace") for n in comments)
    text = _COMMENT_MARKERS.sub("", raw[:4000])
    return "\n".join(line.rstrip() for line in text.splitlines() if line.strip())[:2000]


def _strip_quotes(raw: str) -> str:
    text = raw.lstrip("rRbBuUfF")
    for quote in ('"""', "'''", '"', "'"):
        if text.startswith(quote) and text.endswith(quote) and len(text) >= 2 * len(quote):
            text = text[len(quote) : -len(quote)]
            break
    lines = text.strip().splitlines()
    return "\n".join(line.strip() for line in lines)
