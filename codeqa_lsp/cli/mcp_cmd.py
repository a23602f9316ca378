"""`codeqa mcp --root DIR`: serve a workspace to coding agents over MCP (stdio).

Settings come from the command line only (and the providers' own API-key environment
variables), never from a file in the workspace: a cloned repository cannot make the server
send code anywhere. With no flags nothing leaves the machine (extractive answers, local
embeddings). stdout carries the protocol; logs go to stderr.
"""

from __future__ import annotations

import argparse
import logging
from typing import Any

from codeqa_lsp.cli import CommandError, add_root_option
from codeqa_lsp.cli.common import engine_errors, settings_from_args
from codeqa_lsp.config import EMBEDDERS, PROVIDERS


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("mcp", help="serve a workspace to coding agents (MCP over stdio)")
    add_root_option(p)
    p.add_argument("--embedder", choices=EMBEDDERS, default=None)
    p.add_argument(
        "--index-dir",
        metavar="DIR",
        default=None,
        help="index location (default: the shared per-root cache)",
    )
    p.add_argument(
        "--embedding-base-url",
        metavar="URL",
        default=None,
        help="OpenAI-compatible embeddings server for --embedder openai (e.g. a local one)",
    )
    p.add_argument(
        "--embedding-model", default=None, help="embedding model name for --embedder openai"
    )
    p.add_argument(
        "--provider",
        choices=PROVIDERS,
        default=None,
        help="answer generator (default: extractive, offline)",
    )
    p.add_argument("--model", default=None, help="model name for the provider")
    p.add_argument(
        "--base-url",
        default=None,
        metavar="URL",
        help="OpenAI-compatible server (implies --provider openai)",
    )
    p.add_argument("--log-level", choices=("debug", "info", "warning", "error"), default="warning")
    p.set_defaults(func=cmd_mcp)


def cmd_mcp(args: argparse.Namespace) -> int:
    logging.basicConfig(
        level=args.log_level.upper(), format="codeqa-mcp %(levelname)s %(name)s: %(message)s"
    )
    changes = {
        k: v
        for k, v in (
            ("provider", args.provider),
            ("model", args.model),
            ("base_url", args.base_url),
            ("embedding_base_url", args.embedding_base_url),
            ("embedding_model", args.embedding_model),
        )
        if v
    }
    if args.base_url and not args.provider:
        changes["provider"] = "openai"
    try:
        from codeqa_lsp.mcp.server import run
    except ModuleNotFoundError as exc:
        if exc.name is None or not exc.name.startswith("mcp"):
            raise
        raise CommandError(
            f"the MCP server needs the `mcp` package ({exc.name} is missing): "
            "pip install 'mcp>=2.3,<3'"
        ) from None
    with engine_errors():
        run(args.root, settings_from_args(args).replace(**changes))
    return 0
