"""Find the definitions in a parsed file and give each its qualified name.

One pass of the language's query (`queries/<lang>.scm`) yields the definition nodes; the
rest is cheap bookkeeping over that list, never a walk over the whole tree:

1. name each match (`@name` relative, `@path` as written, Go `@receiver`, C `@declarator`,
   JS object-literal owners);
2. widen each node to what belongs with it: wrappers (`export`, decorators, `template<>`,
   the `const` around a declarator) and the doc comments, decorators and attributes right
   above it (no blank line between);
3. nest the definitions by byte range (a stack over the sorted list, no recursion) to build
   `Class.method` / `outer.inner` names, and decide method vs function;
4. merge adjacent definitions that share a symbol (getter/setter pairs, `@property` and its
   setter, TypeScript overload signatures and their implementation) into one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from tree_sitter import Node, QueryCursor

from codeqa_lsp.chunking.languages import Grammar
from codeqa_lsp.chunking.model import FUNCTION_KINDS
from codeqa_lsp.chunking.operators import operator_name, without_template_args

# Parents that wrap a definition without adding meaning of their own: the chunk starts at
# the wrapper so `export`, decorators and `template <...>` stay with the code.
_WRAPPERS = frozenset(
    {
        "decorated_definition",
        "export_statement",
        "template_declaration",
        "ambient_declaration",
        "lexical_declaration",
        "variable_declaration",
        "type_declaration",
    }
)
# Wrappers that may hold several definitions: only widened to when holding just one.
_SHARED_WRAPPERS = frozenset({"lexical_declaration", "variable_declaration", "type_declaration"})
# Preceding siblings that document or annotate a definition.
_ATTACHED = frozenset(
    {"decorator", "attribute_item", "attribute", "annotation", "marker_annotation"}
)
_DECLARATOR_LEAVES = frozenset(
    {
        "identifier",
        "field_identifier",
        "qualified_identifier",
        "destructor_name",
        "operator_name",
        "type_identifier",
        "template_function",
        "operator_cast",
    }
)
_GENERIC_ARGS = re.compile(r"<[^<>]*>|\[[^\[\]]*\]")
_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*|#[^\n]*", re.S)
_IDENTIFIER = re.compile(r"[A-Za-z_$][\w$]*")
# Names as people write them: identifiers joined by dots, operators, JS computed keys, Ruby
# predicates and bang methods (`empty?`, `save!`).
_SANE_NAME = re.compile(r"^[\w$~.!?=<>+\-*/%&|^\[\]'\"`]+$")
_SPACE = re.compile(r"\s+")
# A method named by an operator alone (Ruby's `<=>`, `==`, `<<`, `[]=`, `-@`): its angle
# brackets are no generic arguments to strip.
_OPERATOR_METHOD = re.compile(r"[-+*/%<>=!~^&|\[\]@]{1,4}")
_STATEMENT_LANGUAGES = frozenset({"c", "cpp", "java", "csharp", "go"})
_STATEMENT_WORDS = frozenset(
    {"if", "else", "for", "while", "do", "switch", "case", "catch", "return", "sizeof"}
)
_NOT_IDENT = re.compile(r"[^0-9A-Za-z_$]")


@dataclass(slots=True, eq=False)
class Definition:
    """A definition found in the tree, with the byte/row span of its chunk."""

    node: Node  # the captured node
    kind: str  # function | method | class | impl | namespace
    name: str
    absolute: bool  # the name is already qualified (`@path`, Go receivers)
    start_byte: int = 0  # widened: wrappers, doc comments, decorators
    start_row: int = 0
    end_byte: int = 0
    end_row: int = 0
    doc_nodes: list[Node] = field(default_factory=list)
    first: Node | None = None  # the first node of the span (a doc comment, or the wrapper)
    parent: Definition | None = None
    children: list[Definition] = field(default_factory=list)
    symbol: str = ""
    members: list[Node] = field(default_factory=list)  # nodes merged into this one
    body: Node | None = None  # filled by the chunker, once per definition
    signature: str = ""

    @property
    def is_chunk(self) -> bool:
        return self.kind in ("function", "method", "class")


def find_definitions(
    gram: Grammar,
    root: Node,
    data: bytes,
    path: str,
    matches: Iterable[dict[str, list[Node]]] | None = None,
) -> list[Definition]:
    """All chunk-producing definitions (and containers), sorted by start, named and nested.

    `matches`: the query's matches (captures by name) when a combined pass already walked
    the tree (`tree_pass.py`), else this runs the query."""
    if matches is None:
        matches = (captures for _, captures in QueryCursor(gram.query).matches(root))
    defs: list[Definition] = []
    seen: set[int] = set()
    siblings = _Siblings()
    for captures in matches:
        found = _from_match(captures, data, path)
        if found is None or found.node.id in seen or _statement_named(found, gram.name):
            continue
        seen.add(found.node.id)
        _widen(found, siblings)
        defs.append(found)
    defs.sort(key=lambda d: (d.start_byte, -d.end_byte))
    _nest(defs)
    return _merge_same_symbol(defs, siblings)


def _text(node: Node) -> str:
    raw = node.text
    return raw.decode("utf-8", "replace") if raw is not None else ""


_OWNED = frozenset({"pair", "method_definition"})  # may belong to an object literal
_DEF_KINDS = {f"definition.{kind}": kind for kind in ("function", "class", "impl", "namespace")}


def _statement_named(definition: Definition, language: str) -> bool:
    """A C-family "definition" named like a statement: what tree-sitter made of `switch (x)
    {` or `if (a) {` inside code it could not parse (nlohmann/json's amalgamated header:
    `serializer.switch`, a function `if` in a macro body). Those languages reserve the
    words; JavaScript does not (`promise.catch`, `iterator.return`, `Symbol.for`)."""
    return (
        language in _STATEMENT_LANGUAGES and definition.name.rsplit(".", 1)[-1] in _STATEMENT_WORDS
    )


def _from_match(captures: dict[str, list[Node]], data: bytes, path: str) -> Definition | None:
    kind = node = None
    for key, nodes in captures.items():
        kind = _DEF_KINDS.get(key)
        if kind is not None:
            node = nodes[0]
            break
    if node is None or kind is None:
        return None
    plain = captures.get("name")
    if (
        plain is not None
        and len(captures) <= 3
        and "receiver" not in captures
        and "owner" not in captures
        and "declarator" not in captures
    ):
        # The common case (`@name`, maybe `@body`): slicing the source beats `Node.text`.
        name_node = plain[0]
        raw = data[name_node.start_byte : name_node.end_byte].decode("utf-8", "replace")
        if raw.isidentifier() and kind in ("function", "class") and node.type not in _OWNED:
            body = captures.get("body")
            return Definition(
                node=node, kind=kind, name=raw, absolute=False, body=body[0] if body else None
            )
    if "path" in captures:
        name, absolute = _assigned_name(captures["path"][0]), True
    elif "receiver" in captures:
        receiver = _type_name(_text(captures["receiver"][0]))
        member = _text(captures["name"][0])
        # A name the parser had to invent while recovering from an error is empty.
        name, absolute = (f"{receiver}.{member}" if member else ""), True
    elif "owner" in captures:
        name = f"{_SPACE.sub('', _text(captures['owner'][0]))}.{_text(captures['name'][0])}"
        absolute = True
    elif "declarator" in captures:
        name = _declarator_name(captures["declarator"][0])
        absolute = "." in name
    elif "name" in captures:
        name_node = captures["name"][0]
        name = _clean_name(_text(name_node))
        absolute = False
        if kind == "impl":
            name = _type_name(_text(name_node))
        elif node.type in _OWNED:
            owner = _object_owner(node, path)
            if owner is not None:
                name, absolute = f"{owner}.{name}", True
    else:
        return None
    if name.startswith(".") and not absolute:
        # A leading `::` names the top level (`module ::HelperOne` in Ruby, `::f` in C++), not
        # a member of what encloses it (`HelpersTest..HelperOne` before).
        name, absolute = name.lstrip("."), True
    if not name:
        return None
    body = captures.get("body")
    return Definition(
        node=node, kind=kind, name=name, absolute=absolute, body=body[0] if body else None
    )


def _clean_name(raw: str) -> str:
    if raw.isidentifier():
        return raw
    if raw.startswith("#") and raw[1:].isidentifier():
        # A JavaScript private member (`#calculateDelay() {}`) goes by its name without the
        # marker, as calls of it do (`references.call_name`): `where is calculateDelay` and
        # `this.#calculateDelay()` both find it. (The comment pattern below erased the whole
        # name, and every private method was left out of the index: ky's retry logic.)
        return raw[1:]
    name = raw.strip()
    if len(name) >= 2 and name[0] in "'\"`" and name[-1] == name[0]:
        name = name[1:-1]  # `{'content-type': function () {}}`
    if name.startswith("[") and name.endswith("]") and name != "[]":
        # Computed keys: `[Symbol.observable]() {}`. Ruby's index method is named `[]`
        # (rake's `TaskManager#[]`, the failing frame of "Don't know how to build task").
        name = name[1:-1]
    name = _COMMENT.sub("", name)
    operator = operator_name(name)
    if operator is not None:
        return operator
    if _OPERATOR_METHOD.fullmatch(name):
        return name  # Ruby's `def <=>(other)`, `def ==(other)`, `def <<(item)`
    name = without_template_args(name)  # C++/TS/Rust generics: `Map<K, V>` → `Map`
    name = name.split("(", 1)[0]  # `f(x)` in a recovered declarator → `f`
    name = _SPACE.sub("", name).replace("::", ".")
    if len(name) > 80 or not _SANE_NAME.match(name):
        # What error recovery or macros made of a name: keep its last identifier.
        identifiers = _IDENTIFIER.findall(name)
        name = identifiers[-1] if identifiers else ""
    return name


def _type_name(raw: str) -> str:
    """`*Server[T]` → `Server`; `Vec<T>` → `Vec`; `crate::io::Reader` → `Reader`; Kotlin's
    nullable `String?` → `String`."""
    text = _SPACE.sub("", raw).rstrip("?")
    previous = None
    while previous != text:
        previous, text = text, _GENERIC_ARGS.sub("", text)
    text = text.lstrip("*&").removeprefix("mut").removeprefix("dyn")
    return text.replace("::", ".").rsplit(".", 1)[-1] or raw.strip()


def _declarator_name(node: Node) -> str:
    """Descend a C/C++ declarator (`*A::g(int)`) to its name, `::` written as `.`."""
    current: Node | None = node
    for _ in range(16):  # declarators nest a handful of levels at most
        if current is None:
            break
        if current.type in _DECLARATOR_LEAVES:
            text = _text(current)
            return operator_name(text) or _clean_name(_GENERIC_ARGS.sub("", text))
        current = current.child_by_field_name("declarator") or (
            current.named_children[0] if current.named_child_count else None
        )
    return ""


def _assigned_name(left: Node) -> str:
    """The name of an assigned function: the left-hand side as written, except in a chained
    assignment (`res.set = res.header = function header() {}`), where the target whose last
    component is the function's own name is the one its author meant (`res.header`; the
    other targets are aliases). Without such a target, the outermost one."""
    names = [left]
    holder = left.parent
    right = holder.child_by_field_name("right") if holder is not None else None
    while right is not None and right.type == "assignment_expression":
        inner = right.child_by_field_name("left")
        if inner is not None:
            names.append(inner)
        right = right.child_by_field_name("right")
    own = right.child_by_field_name("name") if right is not None and len(names) > 1 else None
    cleaned = [_SPACE.sub("", _COMMENT.sub("", _text(n))) for n in names]
    if own is not None:
        wanted = _text(own)
        for candidate in cleaned:
            if candidate.rsplit(".", 1)[-1] == wanted:
                return candidate
    return cleaned[0]


def _object_owner(member: Node, path: str) -> str | None:
    """The name of the object literal a member belongs to, or None (a class member).

    `module.exports = {...}` / `exports = {...}` take the file's conventional object name
    (its stem: `response.js` → `response`); nested literals chain their keys.
    """
    obj = member.parent
    if obj is None or obj.type != "object":
        return None
    holder = obj.parent
    if holder is None:
        return None
    if holder.type == "variable_declarator":
        name_node = holder.child_by_field_name("name")
        return _text(name_node) if name_node is not None else None
    if holder.type == "assignment_expression":
        left = holder.child_by_field_name("left")
        if left is None:
            return None
        lhs = _SPACE.sub("", _text(left))
        if lhs in ("module.exports", "exports"):
            stem = PurePosixPath(path).stem
            return _NOT_IDENT.sub("_", stem) or "module"
        return lhs
    if holder.type == "pair":
        key = holder.child_by_field_name("key")
        outer = _object_owner(holder, path)
        if key is None:
            return outer
        return f"{outer}.{_clean_name(_text(key))}" if outer else _clean_name(_text(key))
    return None


class _Siblings:
    """`prev_sibling` without its cost: tree-sitter finds a node's previous sibling by
    walking from the parent's first child, which is quadratic over a file of many top-level
    statements. Each parent's children are listed once per file instead."""

    def __init__(self) -> None:
        self._by_parent: dict[int, tuple[list[Node], dict[int, int]]] = {}

    def previous(self, node: Node, parent: Node | None = None) -> Node | None:
        """The previous sibling; pass the parent when known (`Node.parent` is not free)."""
        if parent is None:
            parent = node.parent
        if parent is None:
            return None
        entry = self._by_parent.get(parent.id)
        if entry is None:
            children = parent.children
            entry = (children, {child.id: index for index, child in enumerate(children)})
            self._by_parent[parent.id] = entry
        children, positions = entry
        index = positions.get(node.id, 0)
        return children[index - 1] if index > 0 else None


def _widen(definition: Definition, siblings: _Siblings) -> None:
    """Grow the span to the wrappers around the node and the comments/decorators above it."""
    outer = definition.node
    parent = outer.parent
    while parent is not None:
        parent_type = parent.type
        if parent_type not in _WRAPPERS or (
            parent_type in _SHARED_WRAPPERS and parent.named_child_count != 1
        ):
            break
        outer, parent = parent, parent.parent
    start_node = outer
    docs: list[Node] = []
    holder, holder_parent = outer, parent
    sibling = siblings.previous(holder, holder_parent)
    # First statement of a body (Ruby's `body_statement`): its comments precede the body.
    while (
        sibling is None
        and holder_parent is not None
        and holder_parent.start_byte == holder.start_byte
    ):
        grandparent = holder_parent.parent
        if grandparent is None:
            break
        holder, holder_parent = holder_parent, grandparent
        sibling = siblings.previous(holder, holder_parent)
    while (
        sibling is not None
        and ("comment" in sibling.type or sibling.type in _ATTACHED)
        and last_row(sibling) >= start_node.start_point[0] - _max_gap(sibling, start_node)
        and not _is_trailing(sibling, siblings, holder_parent)
    ):
        docs.append(sibling)
        start_node = sibling
        sibling = siblings.previous(sibling, holder_parent)
    docs.reverse()
    definition.doc_nodes = docs
    definition.first = start_node
    definition.start_byte, definition.start_row = start_node.start_byte, start_node.start_point[0]
    definition.end_byte = outer.end_byte
    definition.end_row = last_row(outer)


def _max_gap(sibling: Node, below: Node) -> int:
    """Rows allowed between an attached node and what follows: a doc block comment
    (`/** ... */`, as in JSDoc and Javadoc) may be followed by one blank line; anything else
    must touch."""
    if below.type == sibling.type or not sibling.type.endswith("comment"):
        return 1
    text = sibling.text or b""
    return 2 if text.startswith(b"/**") else 1


def _is_trailing(comment: Node, siblings: _Siblings, parent: Node | None) -> bool:
    """A comment that ends a line of code belongs to that code, not to what follows."""
    before = siblings.previous(comment, parent)
    return before is not None and last_row(before) == comment.start_point[0]


def last_row(node: Node) -> int:
    """The last row holding text of the node (a node ending with its newline, like a Rust
    `///` comment, ends at column 0 of the next row)."""
    row, column = node.end_point
    return row - 1 if column == 0 and row > node.start_point[0] else row


def _nest(defs: list[Definition]) -> None:
    """Attach parents by containment and compute symbols and kinds (no recursion)."""
    stack: list[Definition] = []
    for definition in defs:
        node = definition.node
        while stack and not (
            stack[-1].node.start_byte <= node.start_byte
            and node.end_byte <= stack[-1].node.end_byte
        ):
            stack.pop()
        parent = stack[-1] if stack else None
        definition.parent = parent
        if parent is not None:
            parent.children.append(definition)
        name = definition.name
        if name.startswith("this.") and parent is not None:
            definition.symbol = f"{_class_scope(parent)}.{name[5:]}"
        elif definition.absolute or parent is None:
            definition.symbol = name
        else:
            definition.symbol = f"{parent.symbol}.{name}"
        if definition.kind == "function" and (
            (parent is not None and parent.kind in ("class", "impl"))
            or (
                definition.absolute and "." in name and not name.startswith(("exports.", "module."))
            )
        ):
            definition.kind = "method"
        stack.append(definition)


def _class_scope(definition: Definition) -> str:
    """For `this.x = ...`: the class (or constructor function) that `this` refers to."""
    current: Definition | None = definition
    while current is not None:
        if current.kind == "class":
            return current.symbol
        current = current.parent
    return definition.symbol


def _follows(previous: Definition, definition: Definition, siblings: _Siblings) -> bool:
    """Nothing but comments and punctuation between the two definitions."""
    sibling = siblings.previous(definition.first) if definition.first is not None else None
    while sibling is not None and (not sibling.is_named or "comment" in sibling.type):
        if sibling.end_byte <= previous.end_byte:
            break
        sibling = siblings.previous(sibling)
    return sibling is not None and sibling.end_byte == previous.end_byte


def _merge_same_symbol(defs: list[Definition], siblings: _Siblings) -> list[Definition]:
    """Fold a definition into the previous sibling when they share a symbol and nothing but
    comments or separators lie between: one chunk for `get x`/`set x`, `@property` and
    its setter, TypeScript overload signatures and their implementation."""
    merged: list[Definition] = []
    last_by_parent: dict[int, Definition] = {}
    for definition in defs:
        key = id(definition.parent)
        previous = last_by_parent.get(key)
        if (
            previous is not None
            and previous.symbol == definition.symbol
            and previous.kind in FUNCTION_KINDS
            and definition.kind == previous.kind
            and previous.end_byte <= definition.start_byte
            and _follows(previous, definition, siblings)
        ):
            previous.end_byte = definition.end_byte
            previous.end_row = max(previous.end_row, definition.end_row)
            previous.members.append(definition.node)
            for child in definition.children:
                child.parent = previous
                previous.children.append(child)
            if definition.parent is not None:
                definition.parent.children.remove(definition)
            continue
        last_by_parent[key] = definition
        merged.append(definition)
    return merged
