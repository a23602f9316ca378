"""Citation verification against a real indexed workspace."""

from __future__ import annotations

from pathlib import Path

from codeqa_lsp.answering.citations import NOT_FOUND_NOTE, CitationResolver, parse_marker, verify
from codeqa_lsp.chunking.model import Chunk
from codeqa_lsp.engine import CodeBase
from tests.answering.conftest import MakeWorkspace


def chunk_named(workspace: CodeBase, symbol: str) -> Chunk:
    (chunk,) = [c for c in workspace.chunks() if c.symbol == symbol]
    return chunk


def test_parse_marker_forms() -> None:
    assert parse_marker("1") == [1]
    assert parse_marker("1, 3") == [1, 3]
    assert parse_marker("2-4") == [2, 3, 4]
    assert parse_marker("1; 2–3") == [1, 2, 3]
    assert parse_marker("1-400") == [1, 400]  # not a range anyone means: two numbers


def test_valid_invalid_and_hallucinated_citations(make_workspace: MakeWorkspace) -> None:
    workspace = make_workspace()
    discount = chunk_named(workspace, "compute_discount")
    tax = chunk_named(workspace, "apply_tax")
    text = (
        f"`compute_discount` gives ten percent [1] and tax is added [2, 99]. "
        f"See [99] and [1-2]. The check is at `shop/pricing.py:{discount.start_line + 2}` and "
        f"{tax.path}:{tax.start_line}. Invented: shop/vault.py:3, shop/pricing.py:400 and "
        f"`shop/inventory.py:5`. Code `items[0]` and ```\nx = y[7]\n``` are not citations."
    )
    checked = verify(text, [discount, tax], CitationResolver(workspace))
    assert [(c.number, c.path, c.start_line, c.end_line, c.symbol) for c in checked.citations] == [
        (1, "shop/pricing.py", discount.start_line, discount.end_line, "compute_discount"),
        (2, "shop/pricing.py", tax.start_line, tax.end_line, "apply_tax"),
    ]
    assert "[99]" not in checked.text and "[2, 99]" not in checked.text
    assert "tax is added [2]." in checked.text and "See and [1, 2]." in checked.text
    assert checked.dropped == 2
    # A mention inside a provided chunk gets that chunk's marker; the others are flagged.
    assert f"`shop/pricing.py:{discount.start_line + 2}` [1]" in checked.text
    assert f"{tax.path}:{tax.start_line} [2]" in checked.text
    assert checked.text.count(NOT_FOUND_NOTE) == 3 and checked.unverified_mentions == 3
    assert "`items[0]`" in checked.text and "y[7]" in checked.text


def test_code_spans_holding_backticks_are_code_whole(make_workspace: MakeWorkspace) -> None:
    # An extractive answer quotes a line with backticks in a longer span (`markdown.code_span`);
    # what is inside it is code, whatever its markers, and what follows it is prose again.
    workspace = make_workspace()
    discount = chunk_named(workspace, "compute_discount")
    quoted = "`` msg = `off [7]` + rate ``"
    fence = "````js\nx = ```y [8]```\n````"
    text = f"Line {quoted} [1] and [9].\n\n{fence}"
    checked = verify(text, [discount], CitationResolver(workspace))
    assert f"Line {quoted} [1] and." in checked.text  # [9] is prose: dropped; [7] is code
    assert fence in checked.text and checked.dropped == 1
    assert [c.number for c in checked.citations] == [1]


def test_citation_of_a_deleted_file_is_dropped(make_workspace: MakeWorkspace, repo: Path) -> None:
    workspace = make_workspace()
    reserve = chunk_named(workspace, "reserve_stock")
    (repo / "shop/inventory.py").unlink()
    checked = verify("Stock is reserved here [1].", [reserve], CitationResolver(workspace))
    assert checked.citations == [] and checked.dropped == 1 and "[1]" not in checked.text


def test_stale_citation_is_flagged_and_repointed(make_workspace: MakeWorkspace, repo: Path) -> None:
    workspace = make_workspace()
    tax = chunk_named(workspace, "apply_tax")
    path = repo / "shop/pricing.py"
    path.write_text("# a new header line\n# and another\n\n" + path.read_text(), encoding="utf-8")
    (citation,) = verify("Tax [1].", [tax], CitationResolver(workspace)).citations
    assert citation.stale
    assert (citation.start_line, citation.end_line) == (tax.start_line + 3, tax.end_line + 3)
    lines = path.read_text().splitlines()
    assert lines[citation.start_line - 1].startswith("def apply_tax")


def test_stale_citation_whose_symbol_vanished_is_clamped(
    make_workspace: MakeWorkspace, repo: Path
) -> None:
    workspace = make_workspace()
    checkout = chunk_named(workspace, "Cart.checkout")
    (repo / "shop/pricing.py").write_text('"""Emptied."""\n\nX = 1\n', encoding="utf-8")
    checked = verify("Checkout [1].", [checkout], CitationResolver(workspace))
    assert checked.citations == [] and checked.dropped == 1  # its lines no longer exist


def test_fresh_buffer_text_is_never_stale(make_workspace: MakeWorkspace) -> None:
    workspace = make_workspace()
    buffer = "def brand_new(x):\n    return x\n"
    (chunk,) = [
        c for c in workspace.chunk_text("shop/pricing.py", buffer) if c.symbol == "brand_new"
    ]
    resolver = CitationResolver(workspace, fresh={"shop/pricing.py": buffer})
    (citation,) = verify("New [1].", [chunk], resolver).citations
    assert not citation.stale and (citation.start_line, citation.end_line) == (1, 2)


FRAGMENTS = [
    "[",
    "]",
    "1",
    "2",
    "3",
    "99",
    "0",
    ",",
    "-",
    "–",
    " ",
    "`",
    "```",
    "\n",
    "see",
    "x",
    "shop/pricing.py:",
    "pricing.py:",
    "12",
    ":",
    "(",
    ")",
    "*",
    "[1]",
    "[2-3]",
    "[1, 99]",
]


def test_verify_never_fails_and_only_cites_what_was_provided(make_workspace: MakeWorkspace) -> None:
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    workspace = make_workspace()
    provided = [chunk_named(workspace, "compute_discount"), chunk_named(workspace, "apply_tax")]
    resolver = CitationResolver(workspace)
    line_counts = {
        "shop/pricing.py": len((workspace.root / "shop/pricing.py").read_text().splitlines())
    }

    @settings(
        max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
    )
    @given(st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=4), max_size=40).map("".join))
    def check(text: str) -> None:
        checked = verify(text, provided, resolver)
        assert {c.number for c in checked.citations} <= {1, 2}
        for citation in checked.citations:
            chunk = provided[citation.number - 1]
            assert (citation.path, citation.start_line, citation.end_line) == (
                chunk.path,
                chunk.start_line,
                chunk.end_line,
            )
            assert 1 <= citation.start_line <= citation.end_line <= line_counts[citation.path]
        assert checked.dropped >= 0 and checked.unverified_mentions >= 0

    check()
