"""`codeqa chunks PATH... [--json]`: show how files are chunked, without indexing.

Folders are walked with the workspace scanner (same ignore rules, size limits and secret
checks as indexing), so what this prints is what the index would hold.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from codeqa_lsp.chunking.chunker import chunk_source
from codeqa_lsp.chunking.languages import language_for_path
from codeqa_lsp.chunking.model import Chunk
from codeqa_lsp.chunking.scanner import Skip, read_source, scan
from codeqa_lsp.chunking.secret_rules import secret_name_rule
from codeqa_lsp.cli import UsageError, print_json
from codeqa_lsp.config import Settings


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "chunks",
        help="chunk files or folders (no indexing) and list the chunks",
        description="Chunk files or folders without indexing and list the chunks.",
    )
    parser.add_argument("paths", nargs="+", metavar="PATH", help="files or folders")
    parser.add_argument(
        "--json",
        action="store_true",
        help="JSON lines: {path, symbol, kind, language, start_line, end_line}",
    )
    parser.add_argument(
        "--max-tokens",
        type=int,
        default=Settings().chunk_tokens,
        help="chunk budget in estimated tokens (default %(default)s)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.max_tokens <= 0:
        raise UsageError("--max-tokens must be positive")
    targets = []
    for raw in args.paths:
        path = Path(raw).expanduser()
        if not path.exists():
            raise UsageError(f"no such file or directory: {raw}")
        targets.append(path)
    settings = Settings(chunk_tokens=args.max_tokens)
    skipped: Counter[str] = Counter()
    for target in targets:
        for display, chunks in _chunked(target, settings, skipped):
            for chunk in chunks:
                _emit(display, chunk, args.json)
    if skipped:
        summary = ", ".join(f"{reason} {count}" for reason, count in sorted(skipped.items()))
        print(f"skipped: {summary}", file=sys.stderr)
    return 0


def _chunked(
    target: Path, settings: Settings, skipped: Counter[str]
) -> Iterator[tuple[str, list[Chunk]]]:
    """Yield (display path, chunks) per file under `target`."""
    if target.is_dir():
        root = target.resolve()
        result = scan(root, settings)
        skipped.update(result.skipped)
        for scanned in result.files:
            yield from _read_and_chunk(
                root,
                scanned.rel_path,
                settings,
                skipped,
                display=(target / scanned.rel_path).as_posix(),
            )
        return
    root = target.resolve().parent
    name = target.resolve().name
    if secret_name_rule(name) is not None:  # named explicitly or not, a key file stays unread
        skipped["secret-name"] += 1
        return
    yield from _read_and_chunk(root, name, settings, skipped, display=target.as_posix())


def _read_and_chunk(
    root: Path, rel: str, settings: Settings, skipped: Counter[str], display: str
) -> Iterator[tuple[str, list[Chunk]]]:
    source = read_source(root, rel, settings)
    if isinstance(source, Skip):
        skipped[source.reason] += 1
        return
    language = language_for_path(rel) or "text"
    yield (
        display,
        chunk_source(rel, source.text, language=language, max_tokens=settings.chunk_tokens),
    )


def _emit(display: str, chunk: Chunk, as_json: bool) -> None:
    if as_json:
        print_json(
            {
                "path": display,
                "symbol": chunk.symbol,
                "kind": chunk.kind,
                "language": chunk.language,
                "start_line": chunk.start_line,
                "end_line": chunk.end_line,
            }
        )
        return
    part = f" [{chunk.part + 1}/{chunk.parts}]" if chunk.parts > 1 else ""
    lines = f"{chunk.start_line}-{chunk.end_line}"
    sys.stdout.write(f"{display}:{lines:<11} {chunk.kind:<8} {chunk.symbol}{part}\n")
