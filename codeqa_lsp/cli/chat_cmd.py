"""`codeqa chat`: an interactive conversation in the terminal, answers streamed as they come.

Every question is a turn of one thread (follow-ups retrieve with the earlier subject; see
answering/conversation.py); the thread is the same store the editors and `codeqa ask
--continue` use, so a conversation started here can be continued there and back.

In the loop: a line is a question; `/new` starts a new thread, `/threads` lists them,
`/thread ID` switches, `/quit` (or Ctrl-D) leaves. Ctrl-C stops the answer being generated
and keeps the loop. Reads stdin line by line, so it also works piped (`printf 'q1\\nq2\\n' |`).
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from codeqa_lsp.cli import UsageError, add_root_option
from codeqa_lsp.cli.ask_cmds import _answer_options, _render, _workspace, conversation_for

HELP = (
    "type a question; /new starts a new conversation, /threads lists them, /thread ID switches, "
    "/quit leaves"
)


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "chat", help="interactive conversation about a workspace (follow-ups, streamed)"
    )
    add_root_option(p)
    follow = p.add_mutually_exclusive_group()
    follow.add_argument(
        "--continue",
        dest="continue_thread",
        action="store_true",
        help="continue the latest conversation",
    )
    follow.add_argument("--thread", metavar="ID", default=None, help="continue conversation ID")
    _answer_options(p)
    p.set_defaults(func=cmd_chat, json=False)


def _ago(stamp: float) -> str:
    minutes = int((time.time() - stamp) // 60)
    return (
        "just now"
        if minutes < 1
        else f"{minutes} min ago"
        if minutes < 60
        else f"{minutes // 60} h ago"
    )


def cmd_chat(args: argparse.Namespace) -> int:
    if args.json:
        raise UsageError("codeqa chat is interactive; use codeqa ask --json")
    from codeqa_lsp.cli.common import engine_errors

    interactive = sys.stdin.isatty()
    with engine_errors():
        workspace = _workspace(args)
        try:
            store = workspace.conversations
            thread_id: str | None = None
            if args.thread or args.continue_thread:
                thread_id = conversation_for(workspace, args.thread, args.continue_thread, "")
                thread = store.get(thread_id)
                turns = len(thread.turns) if thread else 0
                print(f"(continuing conversation {thread_id}: {turns} earlier turns)")
            if interactive:
                print(f"codeqa chat in {args.root} — {HELP}")
            while True:
                if interactive:
                    sys.stdout.write("\n? ")
                    sys.stdout.flush()
                line = sys.stdin.readline()
                if not line:
                    break
                question = line.strip()
                if not question:
                    continue
                if question in {"/quit", "/exit", "/q"}:
                    break
                if question == "/new":
                    thread_id = None
                    print("(a new conversation starts with the next question)")
                    continue
                if question == "/threads":
                    for thread in store.list():
                        mark = "*" if thread.id == thread_id else " "
                        print(
                            f"{mark} {thread.id}  {len(thread.turns):2} turns  "
                            f"{_ago(thread.updated):>11}  {thread.title}"
                        )
                    continue
                if question.startswith("/thread "):
                    wanted = question.split(maxsplit=1)[1]
                    if store.get(wanted) is None:
                        print(f"no conversation {wanted!r}", file=sys.stderr)
                    else:
                        thread_id = wanted
                    continue
                if question.startswith("/"):
                    print(HELP, file=sys.stderr)
                    continue
                if thread_id is None:
                    thread_id = store.new(question, client="cli").id
                if not interactive:
                    print(f"? {question}")
                try:
                    _render(
                        workspace.ask_in_thread_stream(
                            question, thread_id, use_cache=not args.no_cache
                        ),
                        False,
                    )
                except KeyboardInterrupt:
                    print("\n(stopped)")
            if thread_id:
                print(
                    f"(conversation {thread_id}: continue with codeqa chat --thread {thread_id})",
                    file=sys.stderr,
                )
        finally:
            workspace.close()
    return 0
