"""`codeqa-lsp`: start the language server (stdio by default, or `--tcp HOST:PORT`).

stdout belongs to the protocol, so logs go to stderr (editors show it in their LSP log) or
to `--log-file`. Every log record passes through a redaction filter: initialize params and
configuration responses carry API keys, and pygls logs those messages at debug level.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys
from collections.abc import Sequence

from codeqa_lsp import __version__
from codeqa_lsp.secret_shapes import LOG_REDACTED
from codeqa_lsp.secret_shapes import redact as redact_secrets
from codeqa_lsp.server.framing import DEFAULT_MAX_MESSAGE_BYTES
from codeqa_lsp.server.transport import DEFAULT_AUTH_TIMEOUT_SECONDS

SWITCH_INTERVAL_SECONDS = 0.001
LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def redact(text: str) -> str:
    """Log lines: the shared secret shapes plus keyed values, bearer tokens, URL userinfo."""
    return redact_secrets(text, LOG_REDACTED, logs=True)


class RedactingFilter(logging.Filter):
    """Replaces anything key-shaped in a record before any handler writes it."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:
            return True
        cleaned = redact(message)
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        record.msg, record.args = cleaned, None
        return True


def configure_logging(level_name: str, log_file: str | None) -> None:
    level = getattr(logging, level_name.upper())
    handler: logging.Handler = (
        logging.FileHandler(log_file, encoding="utf-8")
        if log_file
        else logging.StreamHandler(sys.stderr)
    )
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    handler.addFilter(RedactingFilter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    # pygls logs every message it sends at INFO; keep that for --log-level debug only.
    logging.getLogger("pygls").setLevel(
        level if level <= logging.DEBUG else max(level, logging.WARNING)
    )


def _host_port(value: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit() or not 0 < int(port) < 65536:
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, got {value!r}")
    return host or "127.0.0.1", int(port)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="codeqa-lsp", description="Language server: ask questions about your codebase."
    )
    transport = parser.add_mutually_exclusive_group()
    transport.add_argument(
        "--stdio", action="store_true", help="talk LSP over stdin/stdout (default)"
    )
    transport.add_argument(
        "--tcp", type=_host_port, metavar="HOST:PORT", help="listen on a TCP port"
    )
    parser.add_argument(
        "--token-file",
        metavar="PATH",
        help="TCP: read the client's token from this 0600 file (or write a new one there); "
        "default: $CODEQA_LSP_TOKEN, else a new token in "
        "$XDG_RUNTIME_DIR/codeqa-lsp/tcp-PORT.token",
    )
    parser.add_argument(
        "--max-clients",
        type=int,
        default=1,
        metavar="N",
        help="TCP: serve N client sessions one after another, then exit (default 1)",
    )
    parser.add_argument(
        "--auth-timeout",
        type=float,
        default=DEFAULT_AUTH_TIMEOUT_SECONDS,
        metavar="SECONDS",
        help="TCP: close a connection that has not authenticated within this time (default 10)",
    )
    parser.add_argument(
        "--max-message-bytes",
        type=int,
        default=DEFAULT_MAX_MESSAGE_BYTES,
        metavar="N",
        help="refuse (-32600) and skip any message larger than this (default 64 MB)",
    )
    parser.add_argument(
        "--base-url",
        metavar="URL",
        help=(
            "trusted answer endpoint (OpenAI-compatible server or gateway): may receive your API "
            "key"
        ),
    )
    parser.add_argument(
        "--embedding-base-url",
        metavar="URL",
        help="trusted embedding endpoint: may receive your API key",
    )
    parser.add_argument("--log-file", help="write logs here instead of stderr")
    parser.add_argument(
        "--log-level", default="info", choices=["debug", "info", "warning", "error"], type=str.lower
    )
    parser.add_argument("--version", action="version", version=f"codeqa-lsp {__version__}")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    configure_logging(args.log_level, args.log_file)
    # Indexing runs in threads next to hover and search; a 1 ms GIL switch interval (5 ms by
    # default) lets those short reads get the interpreter back quickly mid-index.
    sys.setswitchinterval(SWITCH_INTERVAL_SECONDS)
    from codeqa_lsp.server.setup import build_server, prewarm_engine

    prewarm_engine()
    from codeqa_lsp.server import transport

    server = build_server()
    server.trusted_settings = {
        k: v
        for k, v in (("baseUrl", args.base_url), ("embeddingBaseUrl", args.embedding_base_url))
        if v
    }
    if args.tcp:
        host, port = args.tcp
        try:
            token, written = transport.resolve_token(port, args.token_file)
        except (OSError, ValueError) as exc:
            sys.stderr.write(f"codeqa-lsp: cannot set up the TCP token: {exc}\n")
            return 2
        if written is not None:
            sys.stderr.write(f"codeqa-lsp: TCP token written to {written}\n")
        transport.serve_tcp(
            server, host, port, token, args.max_message_bytes, args.max_clients, args.auth_timeout
        )
    else:
        transport.serve_stdio(server, args.max_message_bytes)
    # LSP: exit code 0 only when `shutdown` came first. By now `shutdown` has persisted and
    # closed every index; leave without joining worker threads that may sit in a provider's
    # network timeout (a cancelled answer), which would keep the editor waiting for nothing.
    code = 0 if getattr(server.protocol, "_shutdown", False) else 1
    logging.getLogger(__name__).info("exiting with code %d", code)
    logging.shutdown()
    with contextlib.suppress(Exception):  # pygls closes stdout on `exit`
        sys.stdout.flush()
    os._exit(code)


if __name__ == "__main__":
    raise SystemExit(main())
