"""Workspace text the server renders as markdown: a hostile repository's docstrings.

An extractive answer quotes a definition's first doc sentence and a hover shows its whole
doc. Both come from files anyone can write (a cloned repository, a dependency), so they get
the answers' whitelist (`sanitize_markdown`): an image in a docstring must not be fetched
when the answer or the hover renders, a link must not run an editor command. Code quoted
beside them goes in spans and fences that its own backticks cannot close (`markdown.py`),
so a JavaScript template literal is quoted exactly instead of losing its backticks.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from codeqa_lsp.answering.extractive import describe_chunk
from codeqa_lsp.answering.markdown import code_fence, code_span
from codeqa_lsp.chunking.model import Chunk
from codeqa_lsp.server.convert import file_uri
from codeqa_lsp.server.hover import definition_markdown
from tests.chunks import chunk_of
from tests.security.test_sanitize import ATTACKS, active_markup

_PARSE = MarkdownIt("commonmark")


def hostile_chunk(
    doc: str,
    text: str = "",
    language: str = "python",
    path: str = "shop/pricing.py",
    symbol: str = "apply_discount",
) -> Chunk:
    body = text or f'def apply_discount(total):\n    """{doc}"""\n    return total\n'
    chunk = chunk_of(body, path, symbol, language=language, start_line=3)
    return replace(chunk, signature=body.split("\n", 1)[0], doc=doc)


@pytest.mark.parametrize("attack", ATTACKS)
def test_a_hostile_docstring_renders_nothing_active_in_an_extractive_answer(attack: str) -> None:
    item = describe_chunk(1, hostile_chunk(f"Apply the discount. {attack}"), "apply discount")
    assert active_markup(item) == [], item


@pytest.mark.parametrize("attack", ATTACKS)
def test_a_hostile_docstring_renders_nothing_active_in_a_hover(attack: str, tmp_path: Path) -> None:
    chunk = hostile_chunk(f"{attack} Apply the discount.")
    hover = definition_markdown(tmp_path, chunk)
    own = f"{file_uri(tmp_path / chunk.path)}#L{chunk.start_line}"
    # The only link left is the hover's own, to the definition.
    assert active_markup(hover) == [f"link_open:{{'href': '{own}'}}"], hover
    assert "Apply the discount." in hover


QUOTED_CODE = [
    "const message = `error: required option '${option.flags}' not specified`;",
    "x = ``double`` and `single`",
    "`starts and ends with a backtick`",
    " padded on both sides ",
    "```fence inside```",
]


@pytest.mark.parametrize("content", QUOTED_CODE)
def test_spans_and_fences_quote_code_exactly(content: str) -> None:
    inline = [
        child.content
        for token in _PARSE.parse(f"see {code_span(content)} here")
        for child in token.children or []
        if child.type == "code_inline"
    ]
    assert inline == [content]
    fences = [t.content for t in _PARSE.parse(code_fence(content, "js")) if t.type == "fence"]
    assert fences == [content + "\n"]


def test_an_extractive_answer_quotes_a_template_literal_with_its_backticks() -> None:
    line = "const message = `error: required option '${option.flags}' not specified`;"
    text = f"missing(option) {{\n  {line}\n  this.error(message);\n}}\n"
    chunk = hostile_chunk("Report a missing option.", text, "javascript")
    item = describe_chunk(1, chunk, "required option not specified message")
    quoted = [
        child.content
        for token in _PARSE.parse(item)
        for child in token.children or []
        if child.type == "code_inline"
    ]
    assert line in quoted, item


def test_a_hover_keeps_dunder_names_and_paths_whole(tmp_path: Path) -> None:
    body = "def __init__(self):\n    self.items = []\n"
    chunk = hostile_chunk("", body, path="shop/__init__.py", symbol="Cart.__init__")
    render = MarkdownIt("commonmark")
    render.validateLink = lambda url: True  # type: ignore[method-assign]  # editors open file:
    html = render.render(definition_markdown(tmp_path, chunk))
    assert "<code>Cart.__init__</code>" in html, html
    href = f"{file_uri(tmp_path / chunk.path)}#L3"
    assert f'<a href="{href}"><code>shop/__init__.py:3</code></a>' in html, html
    assert "<strong>" not in html and "<em>" not in html
