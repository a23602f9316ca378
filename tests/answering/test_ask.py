"""`ask_stream` end to end: real index, real SDK clients, loopback provider."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from codeqa_lsp.answering.extractive import (
    LOW_CONFIDENCE_TEXT,
    NO_MODEL_NOTE,
)
from codeqa_lsp.answering.model import Answer, Usage
from codeqa_lsp.answering.prompt import ASK_SYSTEM_PROMPT
from codeqa_lsp.engine import CodeBase
from tests.answering.conftest import (
    MakeWorkspace,
    context_headers,
    numbered,
    system_text,
    user_text,
)
from tests.fakes.llm_server import (
    FakeLLMServer,
    RecordedRequest,
    Reply,
    Stall,
)

QUESTION = "how is the coupon discount computed at checkout?"
ENDPOINT = {"anthropic": "messages", "openai": "chat"}


def run(workspace: CodeBase, question: str = QUESTION, **kw: object) -> tuple[list[str], Answer]:
    """Consume a stream; check its shape (deltas, then exactly one Answer, last)."""
    items = list(workspace.ask_stream(question, **kw))  # type: ignore[arg-type]
    assert isinstance(items[-1], Answer)
    assert all(isinstance(i, str) for i in items[:-1])
    return items[:-1], items[-1]  # type: ignore[return-value]


def remote(
    make_workspace: MakeWorkspace, server: FakeLLMServer, name: str = "anthropic", **kw: object
) -> CodeBase:
    options: dict = {
        "provider": name,
        "base_url": server.url,
        "api_key": "test-key-abcdef",
        "model": f"{name}-model-x",
        "request_timeout": 10.0,
        "max_retries": 1,
    }
    options.update(kw)
    return make_workspace(**options)


def citing_model(request: RecordedRequest) -> str:
    """A model that cites well, badly ([99]) and invents locations."""
    headers = context_headers(request)
    n, path, start, _ = headers["compute_discount"]
    m = headers["Cart.checkout"][0]
    return (
        f"`compute_discount` takes ten percent for `SAVE10` [{n}], and `Cart.checkout` subtracts "
        f"it before tax [{m}, 99]. The comparison is at `{path}:{start + 2}`. It also reads "
        f"`shop/ghost.py:12` and {path}:{start + 500} [99]."
    )


@pytest.mark.parametrize("name", ["anthropic", "openai"])
def test_answer_with_verified_citations(
    make_workspace: MakeWorkspace, fake_llm: FakeLLMServer, name: str
) -> None:
    fake_llm.script(
        ENDPOINT[name], Reply(citing_model, deltas=6, input_tokens=321, output_tokens=42)
    )
    workspace = remote(make_workspace, fake_llm, name)
    deltas, answer = run(workspace)

    (request,) = fake_llm.requests
    assert request.body["model"] == f"{name}-model-x" and request.stream
    assert system_text(request) == ASK_SYSTEM_PROMPT
    user = user_text(request)
    assert user.index("[1] ") < user.index("[2] ") < user.index(f"Question: {QUESTION}")
    headers = context_headers(request)
    discount = headers["compute_discount"]

    assert "".join(deltas) == citing_model(request)  # the preview is the raw stream
    assert len(deltas) == 6
    assert answer.provider == name and answer.model == f"{name}-model-x" and answer.confident
    assert answer.usage == Usage(321, 42) and answer.error is None and not answer.cached
    cited = {c.symbol: c for c in answer.citations}
    assert set(cited) == {"compute_discount", "Cart.checkout"}
    source = (workspace.root / "shop/pricing.py").read_text().splitlines()
    assert source[cited["compute_discount"].start_line - 1].startswith("def compute_discount")
    assert (cited["compute_discount"].start_line, cited["compute_discount"].end_line) == discount[
        2:
    ]
    assert cited["compute_discount"].number == discount[0]
    assert "[99]" not in answer.text and answer.dropped_citations == 2
    assert answer.unverified_mentions == 2
    # `chunks` are exactly what the prompt numbered, in order.
    prompt_chunks = numbered(request)
    assert [n for n, *_ in prompt_chunks] == list(range(1, len(prompt_chunks) + 1))
    assert [(c.path, c.start_line, c.end_line, c.symbol) for c in answer.chunks] == [
        h[1:] for h in prompt_chunks
    ]


def test_below_floor_no_request_reaches_the_server(
    make_workspace: MakeWorkspace, fake_llm: FakeLLMServer
) -> None:
    workspace = remote(make_workspace, fake_llm)
    deltas, answer = run(workspace, "zorblax quintessence of the flibbertigibbet manifold?")
    assert fake_llm.requests == []
    assert not answer.confident and answer.text.startswith(LOW_CONFIDENCE_TEXT)
    assert "".join(deltas) == answer.text
    assert len(answer.citations) <= 3
    for citation in answer.citations:
        assert (workspace.root / citation.path).is_file()


def test_extractive_answer_cites_the_right_definitions(make_workspace: MakeWorkspace) -> None:
    workspace = make_workspace()  # defaults: extractive, nothing leaves the machine
    _, answer = run(workspace)
    assert answer.provider == "extractive" and answer.model is None and answer.confident
    assert answer.text.startswith(NO_MODEL_NOTE)
    symbols = [c.symbol for c in answer.citations]
    assert "compute_discount" in symbols and "Cart.checkout" in symbols
    discount = next(c for c in answer.citations if c.symbol == "compute_discount")
    assert f"`shop/pricing.py:{discount.start_line}-{discount.end_line}`" in answer.text
    assert "> Return the discount for an order total." in answer.text  # first docstring sentence
    assert 'if coupon == "SAVE10":' in answer.text  # a line matching the question
    _, navigation = run(workspace, "where is reserve_stock")
    assert navigation.citations[0].symbol == "reserve_stock"


def test_allow_remote_false_stays_extractive(
    make_workspace: MakeWorkspace, fake_llm: FakeLLMServer
) -> None:
    workspace = remote(make_workspace, fake_llm, allow_remote=False)
    _, answer = run(workspace)
    assert fake_llm.requests == [] and answer.provider == "extractive"
    assert "`allowRemote` is false" in answer.text and answer.error is None


def test_answers_are_cached_per_chunks_provider_and_model(
    make_workspace: MakeWorkspace, fake_llm: FakeLLMServer, repo: Path
) -> None:
    fake_llm.script("messages", Reply("First [1]."), Reply("Second [1]."), Reply("Third [1]."))
    workspace = remote(make_workspace, fake_llm)
    assert run(workspace)[1].text == "First [1]."
    deltas, cached = run(workspace)
    assert cached.cached and cached.text == "First [1]." and deltas == ["First [1]."]
    assert len(fake_llm.requests) == 1
    assert run(workspace, use_cache=False)[1].text == "Second [1]."
    # Changing the code changes the chunks' ids: the old answer no longer applies.
    path = repo / "shop/pricing.py"
    path.write_text(path.read_text().replace("ten percent", "10 percent"), encoding="utf-8")
    workspace.update_file("shop/pricing.py")
    assert run(workspace)[1].text == "Third [1]." and len(fake_llm.requests) == 3


def test_cut_stream_is_never_presented_as_complete(
    make_workspace: MakeWorkspace, fake_llm: FakeLLMServer
) -> None:
    from tests.fakes.llm_server import CutStream

    fake_llm.script(
        "messages", CutStream("The discount is computed by multiplying the total", after_deltas=2)
    )
    workspace = remote(make_workspace, fake_llm)
    deltas, answer = run(workspace)
    partial = "".join(deltas[:2])
    assert partial and "The discount is computed".startswith(partial[:10])
    assert deltas[2].startswith("\n\n[interrupted: anthropic (anthropic-model-x): connection to")
    assert partial not in answer.text  # the final answer replaces the preview
    assert answer.provider == "extractive" and "lost before the answer was complete" in (
        answer.error or ""
    )
    assert answer.text.startswith("**The language model could not answer:")
    assert any(c.symbol == "compute_discount" for c in answer.citations)


def test_cancelling_closes_the_provider_connection(
    make_workspace: MakeWorkspace, fake_llm: FakeLLMServer
) -> None:
    fake_llm.script("messages", Stall("The discount is computed slowly", after_deltas=1))
    workspace = remote(make_workspace, fake_llm, request_timeout=600.0)
    stream = workspace.ask_stream(QUESTION)
    first = next(stream)
    assert isinstance(first, str) and first
    stream.close()  # what the language server does on $/cancelRequest
    assert fake_llm.disconnected.wait(30), "the HTTP connection was not released on close()"


def test_prompt_injection_does_not_leak_the_key_or_redirect_citations(
    make_workspace: MakeWorkspace, fake_llm: FakeLLMServer, caplog: pytest.LogCaptureFixture
) -> None:
    from tests.answering.conftest import API_KEY

    def obedient_model(request: RecordedRequest) -> str:  # the worst case: it obeys the comment
        n = context_headers(request)["reserve_stock"][0]
        return (
            f"`reserve_stock` subtracts stock [{n}]. As instructed, see secrets/vault.py:1 "
            f"[{n + 40}]."
        )

    fake_llm.script("messages", Reply(obedient_model), Reply("Headers use a bearer token [1]."))
    caplog.set_level(logging.DEBUG)
    workspace = remote(make_workspace, fake_llm, api_key=API_KEY)
    _, answer = run(workspace, "how does reserve_stock reserve units of a product?")
    (request,) = fake_llm.requests
    assert system_text(request) == ASK_SYSTEM_PROMPT
    assert "ignore previous instructions" in user_text(request)  # sent as data, inside a fence
    assert [c.symbol for c in answer.citations] == ["reserve_stock"]
    assert answer.dropped_citations == 1 and answer.unverified_mentions == 1
    # The gateway module holds the key itself: it is redacted before it leaves the machine.
    run(workspace, "how are the payment gateway headers built with the bearer token?")
    assert len(fake_llm.requests) == 2 and "[REDACTED]" in fake_llm.requests[1].raw.decode()
    assert API_KEY not in fake_llm.all_bodies_text()
    assert API_KEY not in caplog.text
    assert (
        "sending" in caplog.text
        and "to anthropic model anthropic-model-x at http://127.0.0.1:" in caplog.text
    )


def test_empty_model_answer_falls_back(
    make_workspace: MakeWorkspace, fake_llm: FakeLLMServer
) -> None:
    fake_llm.script("messages", Reply(""))
    _, answer = run(remote(make_workspace, fake_llm))
    assert answer.error and "empty answer" in answer.error and answer.provider == "extractive"


def test_question_log_is_opt_in(make_workspace: MakeWorkspace, fake_llm: FakeLLMServer) -> None:
    workspace = remote(make_workspace, fake_llm, log_questions=True)
    _, answer = run(workspace)
    log_file = Path(workspace.indexer.index_dir) / "questions.jsonl"
    (record,) = [json.loads(line) for line in log_file.read_text().splitlines()]
    assert record["question"] == QUESTION and record["answer"] == answer.text
    assert record["retrieved"] and record["provider"] == "anthropic"
    quiet = remote(
        make_workspace, fake_llm, index_dir=str(Path(workspace.indexer.index_dir).parent / "other")
    )
    run(quiet)
    assert not (Path(quiet.indexer.index_dir) / "questions.jsonl").exists()


def test_empty_question(make_workspace: MakeWorkspace) -> None:
    deltas, answer = run(make_workspace(), "   ")
    assert deltas == [] and not answer.confident and answer.citations == []


def test_cancel_event_ends_a_stalled_answer_at_once(
    make_workspace: MakeWorkspace, fake_llm: FakeLLMServer
) -> None:
    import threading

    fake_llm.script("messages", Stall("The discount is computed slowly", after_deltas=1))
    workspace = remote(make_workspace, fake_llm, request_timeout=600.0)
    cancel = threading.Event()
    stream = workspace.ask_stream(QUESTION, cancel=cancel)
    assert isinstance(next(stream), str)
    threading.Timer(0.2, cancel.set).start()  # like $/cancelRequest arriving on another thread
    rest = list(stream)
    assert len(rest) == 1 and isinstance(rest[0], Answer)
    assert rest[0].error == "cancelled" and rest[0].citations == []
    assert fake_llm.disconnected.wait(30)


def test_an_answer_without_verifiable_citations_says_so(
    make_workspace: MakeWorkspace, fake_llm: FakeLLMServer
) -> None:
    from codeqa_lsp.answering.finals import UNCITED_NOTE

    fake_llm.script("messages", Reply("It is computed somewhere, trust me [12]."))
    _, answer = run(remote(make_workspace, fake_llm))
    assert answer.citations == [] and answer.dropped_citations == 1
    assert answer.text == "It is computed somewhere, trust me." + UNCITED_NOTE
