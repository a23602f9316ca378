"""`codeqa index --store URL ROOT [--ref REF]`: publish a snapshot to the shared team index.

Meant for CI after a checkout of REF (default HEAD): the scanner's rules decide what is
published, only file versions the database does not hold yet are chunked, and only
embedding texts it has never seen are embedded. Output never shows a password (the URL is
refused if it carries one, and database errors are redacted).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from codeqa_lsp.cli import CommandError, print_json
from codeqa_lsp.cli.common import engine_errors, settings_from_args
from codeqa_lsp.config import Settings

if TYPE_CHECKING:
    from codeqa_lsp.index.embedders.cache import EmbeddingCache
    from codeqa_lsp.index.pg.publish import Publisher


def cmd_publish(args: argparse.Namespace) -> int:
    from codeqa_lsp.index.pg.dsn import StoreUrlError, redact
    from codeqa_lsp.index.pg.publish import Publisher, PublishError

    settings = settings_from_args(args)
    tty = sys.stderr.isatty() and not args.json

    def progress(done: int, total: int) -> None:
        if tty:
            sys.stderr.write(f"\rpublish {done}/{total} files".ljust(60))
            sys.stderr.flush()

    with engine_errors():
        try:
            publisher = Publisher(settings.store or "", args.root, settings)
            cache = _local_cache(publisher, settings)
            publisher.cache = cache
            try:
                report = publisher.publish(args.ref or "HEAD", progress=progress)
            finally:
                cache.close()
        except (StoreUrlError, PublishError, ConnectionError) as exc:
            raise CommandError(redact(str(exc))) from None
        except Exception as exc:  # database errors (permissions, schema): one line, redacted
            raise CommandError(
                redact(f"publishing failed: {type(exc).__name__}: {exc}".strip())
            ) from None
    if tty:
        sys.stderr.write("\r" + " " * 60 + "\r")
    if args.json:
        print_json(
            {
                "repo": report.repo,
                "commit": report.commit,
                "snapshot": report.snapshot_id,
                "already_published": report.already_published,
                "files": report.files_seen,
                "files_written": report.files_written,
                "chunks_total": report.chunks_total,
                "chunks_added": report.chunks_added,
                "embedded": report.embedded,
                "reused": report.reused,
                "skipped": dict(report.skipped),
                "collected": vars(report.collected),
                "seconds": round(report.seconds, 3),
            }
        )
    elif report.already_published:
        print(
            f"{report.repo} @ {report.commit[:12]} is already published (snapshot "
            f"{report.snapshot_id})"
        )
    else:
        print(
            f"Published {report.repo} @ {report.commit[:12]}: {report.chunks_total} chunks from "
            f"{report.files_seen} files in {report.seconds:.1f} seconds"
        )
        print(
            f"  new file versions: {report.files_written}, chunks written: {report.chunks_added}, "
            f"embedded: {report.embedded}, vectors reused: {report.reused}"
        )
        if report.skipped:
            print("  skipped: " + ", ".join(f"{k} {v}" for k, v in report.skipped.most_common()))
        if report.collected.snapshots:
            print(
                f"  old snapshots collected: {report.collected.snapshots} "
                f"({report.collected.chunks} chunk rows no kept snapshot used)"
            )
    return 0


def _local_cache(publisher: Publisher, settings: Settings) -> EmbeddingCache:
    """The publisher machine's embedding cache (the one its local index fills): a machine
    that indexed the tree locally publishes without embedding again."""
    import platformdirs

    from codeqa_lsp.index.embedders.cache import EmbeddingCache

    embedder = publisher.embedder
    space = f"{embedder.name}|{embedder.model}|{embedder.dim}"
    directory = (
        Path(settings.index_dir).expanduser() / "embedding-cache"
        if settings.index_dir
        else (Path(platformdirs.user_cache_dir("codeqa-lsp")) / "embedding-cache")
    )
    return EmbeddingCache(directory, settings.embedding_cache_bytes, namespace=space)
