"""`codeqa index`, `codeqa search`, `codeqa list`, `codeqa stats`.

Human output by default, `--json` for scripts (one JSON document per line). Progress goes
to stderr and only on a terminal, so piping stdout stays clean.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codeqa_lsp.cli import CommandError, UsageError, add_root_option, print_json
from codeqa_lsp.cli.common import (
    add_engine_options,
    engine_errors,
    progress_printer,
    settings_from_args,
)
from codeqa_lsp.cli.terminal import redraw
from codeqa_lsp.index.filters import SearchFilters
from codeqa_lsp.index.model import IndexReport, IndexStatus
from codeqa_lsp.retrieval.model import SearchHit, SearchResponse

if TYPE_CHECKING:
    from codeqa_lsp.engine import CodeBase


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("index", help="index a workspace (only what changed)")
    add_root_option(p, positional=True)
    p.add_argument(
        "--ref",
        default=None,
        help="with --store: publish this commit (checked out) to the shared index",
    )
    add_engine_options(p)
    p.set_defaults(func=cmd_index)

    p = subparsers.add_parser("search", help="hybrid search over an indexed workspace")
    p.add_argument("query", nargs="?", metavar="QUERY")
    add_root_option(p)
    p.add_argument(
        "--queries",
        type=Path,
        metavar="FILE.jsonl",
        help='batch mode: one {"question": ...} per line',
    )
    p.add_argument(
        "-k",
        "--top-k",
        type=_positive_int,
        default=None,
        help="how many results (default: the topK setting)",
    )
    p.add_argument(
        "--lang", action="append", default=[], metavar="L", help="language filter (repeatable)"
    )
    p.add_argument(
        "--path", action="append", default=[], metavar="GLOB", help="path glob filter (repeatable)"
    )
    p.add_argument(
        "--kind",
        action="append",
        default=[],
        metavar="KIND",
        help="function|method|class|module|section",
    )
    p.add_argument(
        "--show-scores", action="store_true", help="show fused and per-arm ranks and scores"
    )
    add_engine_options(p)
    p.set_defaults(func=cmd_search)

    p = subparsers.add_parser("list", help="list indexed chunks")
    add_root_option(p)
    p.add_argument("--file", metavar="F", help="only chunks of this workspace-relative file")
    p.add_argument("--lang", metavar="L", help="only chunks in this language")
    add_engine_options(p)
    p.set_defaults(func=cmd_list)

    p = subparsers.add_parser("stats", help="show what the index holds")
    add_root_option(p)
    add_engine_options(p)
    p.set_defaults(func=cmd_stats)


def _positive_int(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise UsageError(f"not an integer: {value}") from None
    if number <= 0:
        raise UsageError(f"must be positive: {value}")
    return number


def _codebase(args: argparse.Namespace, local: bool = False) -> CodeBase:
    """The engine over ROOT. `local`: the local index alone, even with --store (what
    `list` and `stats` describe; `index --store` publishes, `search --store` merges)."""
    from codeqa_lsp.engine import CodeBase

    settings = settings_from_args(args)
    return CodeBase(args.root, settings.replace(store=None) if local else settings)


def _run_index(workspace: CodeBase, args: argparse.Namespace) -> IndexReport:
    tty = sys.stderr.isatty() and not args.json
    report = workspace.index(progress=progress_printer(tty))
    if tty:
        redraw(sys.stderr, " " * 100 + "\r")
    return report


# -- index ----------------------------------------------------------------------------------


def cmd_index(args: argparse.Namespace) -> int:
    if args.store:  # publish a snapshot to the shared team index
        from codeqa_lsp.cli.publish_cmd import cmd_publish

        return cmd_publish(args)
    if args.ref:
        raise UsageError("--ref publishes to a shared index: give --store URL too")
    with engine_errors():
        workspace = _codebase(args)
        try:
            workspace.check_writable()  # disk full / read-only: one line, the old index is kept
            report = _run_index(workspace, args)
            if report.write_error:
                raise CommandError(
                    f"writing the index failed ({report.write_error}); what was indexed "
                    "before stays searchable, and the next run completes when space returns"
                )
            status = workspace.status()
            kinds = Counter(c.kind for c in workspace.chunks())
        finally:
            workspace.close()
    if args.json:
        print_json({**_report_json(report), "status": _status_json(status), "kinds": dict(kinds)})
    else:
        definitions = kinds["function"] + kinds["method"]
        print(
            f"Indexed {definitions} functions and {kinds['class']} classes ({status.chunks} "
            f"chunks) from {status.files} files in {report.seconds:.1f} seconds"
        )
        print(
            f"  changed files: {report.files_changed}, removed: {report.files_removed}, embedded: "
            f"{report.embedded} new chunk(s) with {status.embedder} ({status.embedding_model}), "
            f"coverage {status.coverage:.0%}"
        )
        if report.windows_embedded:
            print(
                f"  later windows of {report.windows_embedded} long chunk(s) embedded after "
                f"every chunk's first ({report.dense_ready_seconds or 0:.1f} s)"
            )
        if report.skipped:
            print("  skipped: " + ", ".join(f"{k} {v}" for k, v in report.skipped.most_common()))
        if report.rebuilt_reason:
            print(f"  rebuilt: {report.rebuilt_reason}")
        if report.cancelled:
            print("  cancelled: the index keeps what was done")
    if report.embed_error:
        print(
            f"codeqa: error: embeddings failed, keyword search only: {report.embed_error}",
            file=sys.stderr,
        )
        return 1
    return 0


def _report_json(report: IndexReport) -> dict[str, Any]:
    return {
        "files_seen": report.files_seen,
        "files_changed": report.files_changed,
        "files_removed": report.files_removed,
        "chunks_total": report.chunks_total,
        "chunks_added": report.chunks_added,
        "chunks_removed": report.chunks_removed,
        "embedded": report.embedded,
        "windows_embedded": report.windows_embedded,
        "dense_ready_seconds": (
            None if report.dense_ready_seconds is None else round(report.dense_ready_seconds, 3)
        ),
        "skipped": dict(report.skipped),
        "seconds": round(report.seconds, 3),
        "cancelled": report.cancelled,
        "rebuilt_reason": report.rebuilt_reason,
        "embed_error": report.embed_error,
    }


def _status_json(status: IndexStatus) -> dict[str, Any]:
    return {
        "root": status.root,
        "files": status.files,
        "chunks": status.chunks,
        "embedded": status.embedded,
        "coverage": round(status.coverage, 4),
        "languages": status.languages,
        "embedder": status.embedder,
        "embedding_model": status.embedding_model,
        "dimension": status.dimension,
        "last_updated": status.last_updated,
        "skipped": status.skipped,
        "index_dir": status.index_dir,
        "size_bytes": status.size_bytes,
    }


# -- search ---------------------------------------------------------------------------------


def cmd_search(args: argparse.Namespace) -> int:
    if bool(args.query) == bool(args.queries):
        raise UsageError("give either a QUERY or --queries FILE.jsonl")
    questions = _read_questions(args.queries) if args.queries else [{"question": args.query}]
    filters = SearchFilters(
        languages=tuple(args.lang), path_globs=tuple(args.path), kinds=tuple(args.kind)
    )
    with engine_errors():
        workspace = _codebase(args)
        try:
            _run_index(workspace, args)
            for item in questions:
                response = workspace.search(item["question"], top_k=args.top_k, filters=filters)
                if args.json or args.queries:
                    extra = {k: v for k, v in item.items() if k != "question"}
                    print_json({"question": item["question"], **extra, **_response_json(response)})
                else:
                    _print_response(response, args.show_scores)
        finally:
            workspace.close()
    return 0


def _read_questions(path: Path) -> list[dict[str, Any]]:
    try:
        lines = path.read_text("utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {path}: {exc}") from None
    out: list[dict[str, Any]] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError:
            raise UsageError(f"{path}:{number}: not valid JSON") from None
        if not isinstance(item, dict) or not isinstance(item.get("question"), str):
            raise UsageError(f"{path}:{number}: each line needs a string 'question'")
        out.append(item)
    return out


def _hit_json(rank: int, hit: SearchHit) -> dict[str, Any]:
    c = hit.chunk
    return {
        "rank": rank,
        "path": c.path,
        "symbol": c.symbol,
        "kind": c.kind,
        "language": c.language,
        "start_line": c.start_line,
        "end_line": c.end_line,
        "score": round(hit.score, 6),
        "bm25_rank": hit.bm25_rank,
        "bm25_score": hit.bm25_score,
        "dense_rank": hit.dense_rank,
        "dense_score": hit.dense_score,
        "exact_symbol": hit.exact_symbol,
        "use_lines": list(hit.use_lines),
        "id": c.id,
    }


def _response_json(response: SearchResponse) -> dict[str, Any]:
    return {
        "confident": response.confident,
        "coverage": round(response.coverage, 4),
        "reason": response.reason,
        "results": [_hit_json(i, hit) for i, hit in enumerate(response.hits, 1)],
    }


def _print_response(response: SearchResponse, show_scores: bool) -> None:
    if not response.hits:
        print(f"No results. {response.reason}".strip())
        return
    if not response.confident:
        print(f"(low confidence: {response.reason or 'no strong match'})")
    for rank, hit in enumerate(response.hits, 1):
        c = hit.chunk
        line = f"{rank:2}. {c.path}:{c.start_line}-{c.end_line}  {c.symbol} ({c.kind})"
        if show_scores:
            line += (
                f"  score={hit.score:.4f} bm25={_rank(hit.bm25_rank)}"
                f" dense={_rank(hit.dense_rank)} "
                f"cos={'-' if hit.dense_score is None else f'{hit.dense_score:.3f}'}"
            )
        print(line)
        first = (c.signature or c.text).strip().splitlines()
        if first:
            print(f"      {first[0][:100]}")
        if hit.use_lines:  # a question about uses: where this one uses the name
            shown = ", ".join(str(n) for n in hit.use_lines[:MAX_USE_LINES])
            more = ", …" if len(hit.use_lines) > MAX_USE_LINES else ""
            print(f"      uses it at {c.path}:{shown}{more}")
    if response.coverage < 1.0:
        print(f"(embeddings cover {response.coverage:.0%} of the index so far)")


MAX_USE_LINES = 5  # line numbers printed per result


def _rank(rank: int | None) -> str:
    return "-" if rank is None else f"#{rank}"


# -- list and stats -------------------------------------------------------------------------


def cmd_list(args: argparse.Namespace) -> int:
    with engine_errors():
        workspace = _codebase(args, local=True)
        try:
            if not workspace.status().files:
                _run_index(workspace, args)
            chunks = workspace.chunks(path=args.file, language=args.lang)
        finally:
            workspace.close()
    for c in chunks:
        if args.json:
            print_json(
                {
                    "id": c.id,
                    "path": c.path,
                    "symbol": c.symbol,
                    "kind": c.kind,
                    "language": c.language,
                    "start_line": c.start_line,
                    "end_line": c.end_line,
                    "signature": c.signature,
                }
            )
        else:
            print(f"{c.path}:{c.start_line}-{c.end_line}\t{c.kind}\t{c.symbol}")
    return 0


def cmd_stats(args: argparse.Namespace) -> int:
    with engine_errors():
        workspace = _codebase(args, local=True)
        try:
            status = workspace.status()
        finally:
            workspace.close()
    if args.json:
        print_json(_status_json(status))
        return 0
    updated = (
        time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(status.last_updated))
        if status.last_updated
        else "never"
    )
    print(f"root:          {status.root}")
    print(f"files:         {status.files}")
    print(f"chunks:        {status.chunks} ({status.coverage:.0%} embedded)")
    langs = ", ".join(
        f"{k} {v}" for k, v in sorted(status.languages.items(), key=lambda kv: -kv[1])
    )
    print(f"languages:     {langs or '-'}")
    print(f"embedder:      {status.embedder} ({status.embedding_model}, dim {status.dimension})")
    print(f"last updated:  {updated}")
    skipped = ", ".join(
        f"{k} {v}" for k, v in sorted(status.skipped.items(), key=lambda kv: -kv[1])
    )
    print(f"skipped:       {skipped or '-'}")
    print(f"index:         {status.index_dir} ({status.size_bytes / 1e6:.1f} MB)")
    return 0
