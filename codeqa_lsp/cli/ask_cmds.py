"""`codeqa ask` and `codeqa explain`: answers from the terminal, streamed as they arrive.

Output: the answer text as it streams, then the citations, one per line, as
`path:start-end  symbol` (clickable in most terminals and editors). With `--json`, one JSON
document: the final Answer. The index is brought up to date first (a warm start only
re-reads what changed).

Rendering the stream contract (see `codeqa_lsp.answering.ask`): deltas are printed as they
come; the final Answer's text is authoritative. When a provider failed, the deltas already
contain an "[interrupted: ...]" line and the extractive answer, and the reason is repeated
on stderr; when citation markers were removed from the model's text, a note says so.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path
from typing import Any

from codeqa_lsp.answering.model import Answer
from codeqa_lsp.cli import UsageError, add_root_option, print_json
from codeqa_lsp.cli.common import engine_errors, progress_printer, settings_from_args
from codeqa_lsp.cli.terminal import redraw
from codeqa_lsp.config import PROVIDERS
from codeqa_lsp.index.filters import SearchFilters


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("ask", help="ask a question about a workspace; cited answer")
    p.add_argument("question", metavar="QUESTION")
    add_root_option(p)
    p.add_argument(
        "--path",
        action="append",
        default=[],
        metavar="GLOB",
        help="restrict retrieval (repeatable)",
    )
    p.add_argument(
        "--lang", action="append", default=[], metavar="L", help="language filter (repeatable)"
    )
    p.add_argument(
        "--show-context", action="store_true", help="print the retrieved chunks with scores first"
    )
    follow = p.add_mutually_exclusive_group()
    follow.add_argument(
        "--continue",
        dest="continue_thread",
        action="store_true",
        help="a follow-up in the latest conversation (shared with the editors)",
    )
    follow.add_argument(
        "--thread", metavar="ID", default=None, help="a follow-up in conversation ID"
    )
    _answer_options(p)
    p.set_defaults(func=cmd_ask)

    p = subparsers.add_parser("explain", help="explain the function/method/class at PATH:LINE")
    p.add_argument("location", metavar="PATH:LINE")
    add_root_option(p)
    _answer_options(p)
    p.set_defaults(func=cmd_explain)


def _answer_options(p: argparse.ArgumentParser) -> None:
    from codeqa_lsp.config import EMBEDDERS

    p.add_argument(
        "--provider", choices=PROVIDERS, default=None, help="answer generator (default: extractive)"
    )
    p.add_argument("--model", default=None, help="model name for the provider")
    p.add_argument(
        "--base-url",
        default=None,
        metavar="URL",
        help="OpenAI-compatible server or API gateway (implies --provider openai unless given)",
    )
    p.add_argument("--no-cache", action="store_true", help="ignore cached answers")
    p.add_argument("--json", action="store_true", help="print the final Answer as JSON")
    p.add_argument("--embedder", choices=EMBEDDERS, default=None)
    p.add_argument("--index-dir", metavar="DIR", default=None)


def _workspace(args: argparse.Namespace) -> Any:
    from codeqa_lsp.engine import CodeBase

    changes = {
        k: v
        for k, v in (
            ("provider", args.provider),
            ("model", args.model),
            ("base_url", args.base_url),
        )
        if v
    }
    if args.base_url and not args.provider:
        changes["provider"] = (
            "openai"  # a base URL only means something to an OpenAI-compatible server
        )
    workspace = CodeBase(args.root, settings_from_args(args).replace(**changes))
    workspace.index(progress=progress_printer(sys.stderr.isatty() and not args.json))
    if sys.stderr.isatty() and not args.json:
        redraw(sys.stderr, " " * 100 + "\r")
    return workspace


def cmd_ask(args: argparse.Namespace) -> int:
    if not args.question.strip():
        raise UsageError("the question is empty")
    filters = SearchFilters(languages=tuple(args.lang), path_globs=tuple(args.path))
    with engine_errors():
        workspace = _workspace(args)
        try:
            if args.show_context:
                _print_context(workspace, args.question, filters, to_json=args.json)
            thread_id = conversation_for(
                workspace, args.thread, args.continue_thread, args.question
            )
            answer = _render(
                workspace.ask_in_thread_stream(
                    args.question, thread_id, filters=filters, use_cache=not args.no_cache
                ),
                args.json,
            )
            print(
                f"(conversation {thread_id}: follow up with --continue or --thread {thread_id})",
                file=sys.stderr,
            )
        finally:
            workspace.close()
    return 0 if answer is not None else 1


def conversation_for(
    workspace: Any, thread_id: str | None, continue_latest: bool, question: str
) -> str:
    """The thread a CLI question goes to: `--thread ID`, the latest for `--continue`, else a
    new one (so the next `--continue` can follow up on it)."""
    store = workspace.conversations
    if thread_id:
        if store.get(thread_id) is None:
            raise UsageError(
                f"no conversation {thread_id!r} in this workspace (see `codeqa chat`, /threads)"
            )
        return thread_id
    latest = store.latest() if continue_latest else None
    return str((latest or store.new(question, client="cli")).id)


def cmd_explain(args: argparse.Namespace) -> int:
    path_text, _, line_text = args.location.rpartition(":")
    if not path_text or not line_text.isdigit() or int(line_text) < 1:
        raise UsageError(f"expected PATH:LINE with a line number from 1, got {args.location!r}")
    path = Path(path_text).expanduser()
    # Relative to the current directory (what shell completion writes) when that names a
    # file, else to the workspace root (what `codeqa search` prints).
    candidates = [path] if path.is_absolute() else [Path.cwd() / path, args.root / path]
    absolute = next((c for c in candidates if c.is_file()), None)
    if absolute is None:
        raise UsageError(f"no such file: {path_text}")
    if not absolute.resolve().is_relative_to(args.root):
        raise UsageError(f"{path_text} is outside the workspace {args.root}")
    with engine_errors():
        workspace = _workspace(args)
        try:
            answer = _render(
                workspace.explain_stream(absolute, int(line_text), use_cache=not args.no_cache),
                args.json,
            )
        finally:
            workspace.close()
    return 0 if answer is not None else 1


def _render(stream: Any, to_json: bool) -> Answer | None:
    """Print deltas as they arrive (or nothing, for JSON), then the citations or the JSON."""
    streamed: list[str] = []
    answer: Answer | None = None
    try:
        for item in stream:
            if isinstance(item, Answer):
                answer = item
            elif not to_json:
                streamed.append(item)
                sys.stdout.write(item)
                sys.stdout.flush()
    finally:
        stream.close()  # Ctrl-C: stop the provider and release the connection
    if answer is None:
        return None
    if to_json:
        print_json(answer_to_json(answer))
        return answer
    if not streamed:
        sys.stdout.write(answer.text)
    sys.stdout.write("\n")
    if answer.dropped_citations:
        print(
            f"\n(removed {answer.dropped_citations} citation marker(s) that referred to no "
            "provided code)"
        )
    if answer.citations:
        print("\nCitations:")
        for c in answer.citations:
            stale = "  (file changed since indexing)" if c.stale else ""
            print(f"[{c.number}] {c.path}:{c.start_line}-{c.end_line}  {c.symbol}{stale}")
    if answer.error:
        print(f"codeqa: provider error: {answer.error}", file=sys.stderr)
    return answer


def answer_to_json(answer: Answer) -> dict[str, Any]:
    """The Answer as plain JSON: chunks by location and id rather than full text."""
    data = dataclasses.asdict(answer)
    data["chunks"] = [
        {
            "id": c.id,
            "path": c.path,
            "symbol": c.symbol,
            "kind": c.kind,
            "start_line": c.start_line,
            "end_line": c.end_line,
        }
        for c in answer.chunks
    ]
    return data


def _print_context(workspace: Any, question: str, filters: SearchFilters, to_json: bool) -> None:
    response = workspace.search(question, filters=filters)
    if to_json:
        print_json(
            {
                "context": [
                    {
                        "path": h.chunk.path,
                        "symbol": h.chunk.symbol,
                        "start_line": h.chunk.start_line,
                        "end_line": h.chunk.end_line,
                        "score": h.score,
                        "bm25_rank": h.bm25_rank,
                        "dense_rank": h.dense_rank,
                        "dense_score": h.dense_score,
                    }
                    for h in response.hits
                ],
                "confident": response.confident,
                "reason": response.reason,
            }
        )
        return
    verdict = "confident" if response.confident else f"not confident: {response.reason}"
    print(f"Retrieved {len(response.hits)} chunks ({verdict}):")
    for rank, hit in enumerate(response.hits, 1):
        c = hit.chunk
        dense = f"{hit.dense_score:.3f}" if hit.dense_score is not None else "-"
        print(
            f"{rank:2}. {hit.score:.3f}  bm25#{hit.bm25_rank or '-'} cos={dense}  "
            f"{c.path}:{c.start_line}-{c.end_line}  {c.symbol}"
        )
        for line in c.text.splitlines()[:6]:
            print(f"      {line}")
    print()
