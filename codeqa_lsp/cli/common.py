"""Options and error handling shared by the engine-backed subcommands (index, search, ask...)."""

from __future__ import annotations

import argparse
import sqlite3
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from codeqa_lsp.cli import CommandError
from codeqa_lsp.cli.terminal import redraw
from codeqa_lsp.config import EMBEDDERS, Settings
from codeqa_lsp.index.model import IndexProgress


def add_engine_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--embedder", choices=EMBEDDERS, default=None)
    p.add_argument("--index-dir", metavar="DIR", default=None)
    p.add_argument(
        "--store",
        metavar="URL",
        default=None,
        help="shared team index postgresql://user@host/db (password: PGPASSWORD or ~/.pgpass)",
    )
    p.add_argument("--json", action="store_true", help="machine-readable output")


def settings_from_args(args: argparse.Namespace) -> Settings:
    changes: dict[str, Any] = {}
    if args.embedder:
        changes["embedder"] = args.embedder
    if args.index_dir:
        changes["index_dir"] = str(Path(args.index_dir).expanduser().resolve())
    if getattr(args, "store", None):
        from codeqa_lsp.cli import UsageError
        from codeqa_lsp.config import store_url_ok

        if not store_url_ok(args.store):
            raise UsageError(
                "--store must be a postgresql:// URL without a password (use PGPASSWORD or "
                "~/.pgpass)"
            )
        changes["store"] = args.store
    return Settings().replace(**changes)


@contextmanager
def engine_errors() -> Iterator[None]:
    """Engine failures become one-line errors (exit 1), never tracebacks."""
    from codeqa_lsp.index.embedders import EmbedderError

    try:
        yield
    except EmbedderError as exc:
        raise CommandError(str(exc)) from None
    except OSError as exc:
        raise CommandError(f"{exc.strerror or exc}: {exc.filename or ''}".rstrip(": ")) from None
    except (
        sqlite3.Error
    ) as exc:  # e.g. "database or disk is full" mid-run: what was committed stays
        raise CommandError(f"index database: {exc}; the index keeps what was committed") from None


def progress_printer(enabled: bool) -> Callable[[IndexProgress], None] | None:
    if not enabled:
        return None
    last = [0.0]

    def show(p: IndexProgress) -> None:
        now = time.monotonic()
        if now - last[0] < 0.1 and p.done != p.total:
            return
        last[0] = now
        width = 30
        filled = width * p.percentage // 100
        label = f"{p.phase:5} [{'#' * filled}{'.' * (width - filled)}] {p.done}/{p.total}"
        redraw(sys.stderr, label[:100].ljust(100))
        sys.stderr.flush()

    return show
