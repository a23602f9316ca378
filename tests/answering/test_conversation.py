"""Conversation threads: follow-ups retrieve with the earlier subject, the prompt carries the
earlier turns within a budget, and threads survive a re-open, bounded, on disk."""

from __future__ import annotations

import json
from pathlib import Path

from codeqa_lsp.answering import conversation
from codeqa_lsp.answering.conversation import (
    ConversationStore,
    Thread,
    Turn,
    is_follow_up,
    prompt_history,
    retrieval_query,
)
from codeqa_lsp.answering.model import Answer
from tests.answering.conftest import MakeWorkspace, user_text
from tests.fakes.llm_server import FakeLLMServer, Reply


def final(stream: object) -> Answer:
    items = list(stream)  # type: ignore[call-overload]
    assert isinstance(items[-1], Answer)
    return items[-1]


def test_follow_up_detection() -> None:
    assert is_follow_up("and where is it called from?")
    assert is_follow_up("what about the tests?")
    assert is_follow_up("why?")
    assert not is_follow_up("how is the coupon discount computed at checkout?")


def test_a_follow_up_is_searched_with_the_earlier_subject_and_a_new_subject_is_not() -> None:
    thread = Thread(id="t", title="")
    thread.turns.append(
        Turn(
            "how is the coupon discount computed?",
            "…",
            [{"symbol": "compute_discount"}, {"symbol": "Cart.checkout"}],
        )
    )
    follow = retrieval_query(thread, "and where is it called from?")
    assert "compute_discount" in follow and "coupon discount" in follow
    assert retrieval_query(thread, "how are stock levels reserved in the warehouse?") == (
        "how are stock levels reserved in the warehouse?"
    )
    assert retrieval_query(None, "and where is it called?") == "and where is it called?"


def test_prompt_history_keeps_the_newest_turns_within_the_budget() -> None:
    thread = Thread(id="t", title="")
    for i in range(30):
        thread.turns.append(Turn(f"question number {i}", "answer " * 60, []))
    history = prompt_history(thread, budget=400)
    assert "question number 29" in history and "question number 0\n" not in history
    assert history.index("question number 28") < history.index("question number 29")  # oldest first
    assert len(history) < 400 * 5


def test_threads_survive_a_new_store_and_are_bounded(tmp_path: Path, monkeypatch: object) -> None:
    store = ConversationStore(tmp_path)
    first = store.new(client="Neovim")
    store.add_turn(
        first.id,
        Turn(
            "where is the cart totalled?",
            "In `Cart.checkout` [1].",
            [
                {
                    "number": 1,
                    "path": "shop/pricing.py",
                    "startLine": 30,
                    "endLine": 34,
                    "symbol": "Cart.checkout",
                }
            ],
        ),
    )
    again = ConversationStore(tmp_path).get(first.id)  # as after a server restart
    assert (
        again is not None
        and again.title == "where is the cart totalled?"
        and again.client == "Neovim"
    )
    assert again.turns[0].citations[0]["symbol"] == "Cart.checkout"
    monkeypatch.setattr(conversation, "MAX_THREADS", 3)  # type: ignore[attr-defined]
    monkeypatch.setattr(conversation, "MAX_TURNS", 2)  # type: ignore[attr-defined]
    for i in range(5):
        thread = store.new()
        for j in range(4):
            store.add_turn(thread.id, Turn(f"q{i}.{j}", "a" * 10_000, []))
    kept = ConversationStore(tmp_path).list()
    assert len(kept) == 3 and all(len(t.turns) == 2 for t in kept)
    assert [t.question for t in kept[0].turns] == ["q4.2", "q4.3"]
    assert all(len(t.answer) <= conversation.MAX_ANSWER_CHARS for t in kept[0].turns)
    assert (
        store.clear(kept[0].id) == 1
        and store.clear() == 2
        and ConversationStore(tmp_path).list() == []
    )


def test_a_damaged_history_file_starts_afresh(tmp_path: Path) -> None:
    (tmp_path / conversation.FILE_NAME).write_text("{not json")
    store = ConversationStore(tmp_path)
    assert store.list() == []
    assert store.new().id and json.loads((tmp_path / conversation.FILE_NAME).read_text())["threads"]
    assert (tmp_path / "conversations.json.damaged").exists()


def test_follow_up_through_the_engine_retrieves_and_prompts_with_the_first_turn(
    make_workspace: MakeWorkspace,
    fake_llm: FakeLLMServer,
) -> None:
    fake_llm.script(
        "messages",
        Reply("`compute_discount` takes ten percent for SAVE10 [1]."),
        Reply("It is called from `Cart.checkout` [1]."),
    )
    workspace = make_workspace(
        provider="anthropic",
        base_url=fake_llm.url,
        api_key="test-key-abcdef",
        model="m",
        request_timeout=10.0,
        max_retries=1,
    )
    thread = workspace.conversations.new(client="test")
    first = final(workspace.ask_in_thread_stream("how is the coupon discount computed?", thread.id))
    assert any(c.symbol == "compute_discount" for c in first.citations)
    # Alone, the follow-up has nothing to retrieve with ...
    alone = final(workspace.ask_stream("and where is it called from?"))
    assert (
        not any(c.symbol in {"compute_discount", "Cart.checkout"} for c in alone.citations)
        or not alone.confident
    )
    # ... in the thread it is searched with the earlier subject, and the prompt carries turn 1.
    second = final(workspace.ask_in_thread_stream("and where is it called from?", thread.id))
    prompt = user_text(fake_llm.requests[-1])
    assert (
        "Earlier in this conversation" in prompt
        and "how is the coupon discount computed?" in prompt
    )
    assert "Cart.checkout" in prompt and second.confident
    recorded = workspace.conversations.get(thread.id)
    assert recorded is not None and [t.question for t in recorded.turns] == [
        "how is the coupon discount computed?",
        "and where is it called from?",
    ]
    assert recorded.turns[1].citations


def test_extractive_threads_send_nothing_anywhere(
    make_workspace: MakeWorkspace, fake_llm: FakeLLMServer
) -> None:
    workspace = make_workspace()
    thread = workspace.conversations.new()
    final(workspace.ask_in_thread_stream("how is the coupon discount computed?", thread.id))
    answer = final(workspace.ask_in_thread_stream("and where is it called from?", thread.id))
    assert answer.provider == "extractive" and fake_llm.requests == []
    assert any(c.symbol in {"compute_discount", "Cart.checkout"} for c in answer.citations)


def test_two_processes_writing_the_same_history_keep_each_others_turns(tmp_path: Path) -> None:
    editor = ConversationStore(tmp_path)  # the server's store
    thread = editor.new()
    editor.add_turn(thread.id, Turn("first?", "a", []))
    cli = ConversationStore(tmp_path)  # `codeqa ask --continue` in a terminal: another process
    cli.add_turn(thread.id, Turn("second?", "b", []))
    editor.add_turn(thread.id, Turn("third?", "c", []))
    again = ConversationStore(tmp_path).get(thread.id)
    assert again is not None and [t.question for t in again.turns] == [
        "first?",
        "second?",
        "third?",
    ]
