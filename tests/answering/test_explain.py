"""`explain_stream` and `cached_explanation`: enclosing definition, callees, caching."""

from __future__ import annotations

from pathlib import Path

from codeqa_lsp.answering.ask import enclosing_definition
from codeqa_lsp.answering.model import Answer
from codeqa_lsp.answering.prompt import EXPLAIN_SYSTEM_PROMPT
from codeqa_lsp.engine import CodeBase
from tests.answering.conftest import MakeWorkspace, numbered, system_text, user_text
from tests.fakes.llm_server import FakeLLMServer, Reply


def line_of(repo: Path, needle: str) -> int:
    lines = (repo / "shop/pricing.py").read_text().splitlines()
    return next(i for i, text in enumerate(lines, 1) if needle in text)


def explain(
    workspace: CodeBase, line: int, text: str | None = None, path: str = "shop/pricing.py"
) -> Answer:
    items = list(workspace.explain_stream(path, line, text=text))
    assert isinstance(items[-1], Answer) and all(isinstance(i, str) for i in items[:-1])
    return items[-1]


def remote(make_workspace: MakeWorkspace, server: FakeLLMServer) -> CodeBase:
    return make_workspace(
        provider="anthropic",
        base_url=server.url,
        api_key="test-key-abcdef",
        model="claude-x",
        max_retries=0,
    )


def test_explains_the_enclosing_method_with_its_callees(
    make_workspace: MakeWorkspace, fake_llm: FakeLLMServer, repo: Path
) -> None:
    fake_llm.script(
        "messages",
        Reply("`checkout` totals the items [1], subtracts the discount [3] and adds tax [2]."),
    )
    workspace = remote(make_workspace, fake_llm)
    answer = explain(workspace, line_of(repo, "total = sum(self.items)"))
    (request,) = fake_llm.requests
    assert system_text(request) == EXPLAIN_SYSTEM_PROMPT
    chunks = numbered(request)
    assert chunks[0][4] == "Cart.checkout"
    assert {c[4] for c in chunks[1:]} == {"apply_tax", "compute_discount"}
    assert "Explain `Cart.checkout`" in user_text(request)
    assert answer.citations[0].symbol == "Cart.checkout"
    assert {c.symbol for c in answer.citations} == {
        "Cart.checkout",
        "apply_tax",
        "compute_discount",
    }
    assert answer.provider == "anthropic" and answer.confident


def test_cached_explanation_is_reused_until_the_code_changes(
    make_workspace: MakeWorkspace, fake_llm: FakeLLMServer, repo: Path
) -> None:
    fake_llm.script("messages", Reply("Adds tax [1]."), Reply("Adds tax again [1]."))
    workspace = remote(make_workspace, fake_llm)
    line = line_of(repo, "return round(amount")
    assert workspace.cached_explanation("shop/pricing.py", line) is None  # nothing yet, no call
    assert fake_llm.requests == []
    first = explain(workspace, line)
    cached = workspace.cached_explanation("shop/pricing.py", line)
    assert cached is not None and cached.cached and cached.text == first.text == "Adds tax [1]."
    assert cached.citations == first.citations and len(fake_llm.requests) == 1
    assert explain(workspace, line).cached and len(fake_llm.requests) == 1  # hover/lens reuse
    # An unsaved edit to the function is different code: no cached explanation for it.
    edited = (repo / "shop/pricing.py").read_text().replace("1 + TAX_RATE", "1.0 + TAX_RATE")
    assert workspace.cached_explanation("shop/pricing.py", line, text=edited) is None
    assert explain(workspace, line, text=edited).text == "Adds tax again [1]."


def test_explain_an_unsaved_buffer(make_workspace: MakeWorkspace) -> None:
    workspace = make_workspace()  # extractive
    buffer = (
        "from shop.pricing import apply_tax\n\n\n"
        "def invoice_total(amounts: list[float]) -> float:\n"
        '    """Sum invoice lines and add tax."""\n'
        "    return apply_tax(sum(amounts))\n"
    )
    answer = explain(workspace, 6, text=buffer, path="shop/invoices.py")  # a new, unsaved file
    assert answer.citations[0].symbol == "invoice_total"
    assert (answer.citations[0].start_line, answer.citations[0].end_line) == (4, 6)
    assert not answer.citations[0].stale
    assert answer.citations[1].symbol == "apply_tax"
    assert (
        "It calls: `apply_tax`" in answer.text and "> Sum invoice lines and add tax." in answer.text
    )
    assert (
        workspace.cached_explanation("shop/invoices.py", 6, text=buffer) is None
    )  # extractive: never cached


def test_line_outside_any_definition(
    make_workspace: MakeWorkspace, fake_llm: FakeLLMServer
) -> None:
    workspace = remote(make_workspace, fake_llm)
    answer = explain(workspace, 9999)
    assert not answer.confident and "No function, method or class encloses line 9999" in answer.text
    assert fake_llm.requests == []


def test_enclosing_prefers_the_innermost_definition(
    make_workspace: MakeWorkspace, repo: Path
) -> None:
    workspace = make_workspace()
    chunks = workspace.chunks(path="shop/pricing.py")
    assert enclosing_definition(chunks, line_of(repo, "self.items.append")).symbol == "Cart.add"  # type: ignore[union-attr]
    assert enclosing_definition(chunks, line_of(repo, "class Cart")).symbol == "Cart"  # type: ignore[union-attr]


def test_callee_in_the_edited_buffer_is_repointed(
    make_workspace: MakeWorkspace, repo: Path
) -> None:
    workspace = make_workspace()
    original = (repo / "shop/pricing.py").read_text()
    buffer = "# two new\n# lines\n" + original.replace("1 + TAX_RATE", "1.0 + TAX_RATE")
    line = line_of(repo, "total = sum(self.items)") + 2
    answer = explain(workspace, line, text=buffer)
    cited = {c.symbol: c for c in answer.citations}
    tax = cited["apply_tax"]  # indexed version differs from the buffer: stale, re-pointed
    assert tax.stale and buffer.splitlines()[tax.start_line - 1].startswith("def apply_tax")
    discount = cited["compute_discount"]  # unchanged code, but moved down two lines
    assert buffer.splitlines()[discount.start_line - 1].startswith("def compute_discount")
    assert not cited["Cart.checkout"].stale


def test_cached_explanation_expires_when_a_callee_changes(
    make_workspace: MakeWorkspace, fake_llm: FakeLLMServer, repo: Path
) -> None:
    fake_llm.script("messages", Reply("Checkout [1] uses tax [2]."), Reply("Fresh [1]."))
    workspace = remote(make_workspace, fake_llm)
    line = line_of(repo, "total = sum(self.items)")
    explain(workspace, line)
    assert workspace.cached_explanation("shop/pricing.py", line) is not None
    path = repo / "shop/inventory.py"  # unrelated file: the cache survives
    path.write_text(path.read_text() + "\n\ndef audit() -> None:\n    pass\n", encoding="utf-8")
    workspace.update_file("shop/inventory.py")
    assert workspace.cached_explanation("shop/pricing.py", line) is not None
    pricing = repo / "shop/pricing.py"  # a callee's code changes: [2] would point at new code
    pricing.write_text(
        pricing.read_text().replace(
            "round(amount * (1 + TAX_RATE), 2)", "round(amount * (1 + TAX_RATE), 3)"
        ),
        encoding="utf-8",
    )
    workspace.update_file("shop/pricing.py")
    assert workspace.cached_explanation("shop/pricing.py", line) is None
    assert explain(workspace, line).text == "Fresh [1]." and len(fake_llm.requests) == 2
