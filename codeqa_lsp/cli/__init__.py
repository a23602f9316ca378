"""`codeqa`: the command-line front of the engine (index, search, ask, list, stats, eval).

Each group of subcommands lives in its own module exposing `register(subparsers)`; this
module only builds the parser and maps errors to exit codes:
0 ok, 1 runtime error, 2 usage error. A user mistake prints one line, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

EXIT_OK, EXIT_ERROR, EXIT_USAGE = 0, 1, 2

# Modules that contribute subcommands, in help order. A module that is missing (a feature
# not installed in this build) is skipped rather than breaking the whole CLI.
_COMMAND_MODULES = (
    "codeqa_lsp.cli.chunks_cmd",
    "codeqa_lsp.cli.index_cmds",
    "codeqa_lsp.cli.ask_cmds",
    "codeqa_lsp.cli.chat_cmd",
    "codeqa_lsp.cli.eval_cmd",
    "codeqa_lsp.cli.mcp_cmd",
)


class UsageError(Exception):
    """Bad arguments: exit 2 with a one-line message."""


class CommandError(Exception):
    """The command could not do its job: exit 1 with a one-line message."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(message)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="codeqa", description="Ask questions about your codebase.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in _COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
            continue
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from codeqa_lsp.cli.terminal import SafeStream

    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = SafeStream(sys.stdout), SafeStream(sys.stderr)
    try:
        return _main(argv)
    finally:
        sys.stdout, sys.stderr = saved


def _main(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if not getattr(args, "func", None):
            parser.print_help(sys.stderr)
            return EXIT_USAGE
        _merge_root_spellings(args)
        if "root" in vars(args) and args.root is None:
            args.root = project_root(Path.cwd())
        return int(args.func(args) or EXIT_OK)
    except UsageError as exc:
        print(f"codeqa: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except CommandError as exc:
        print(f"codeqa: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("codeqa: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return EXIT_OK


# -- helpers shared by the subcommand modules ---------------------------------------------


# What marks the top of a project. Indexes are keyed by their root, so a command run from a
# subdirectory without --root must find the root the project was indexed from, not start a
# second index of the subdirectory.
PROJECT_MARKERS = (".git", ".hg", ".svn", ".jj")


def project_root(start: Path) -> Path:
    """The nearest directory at or above `start` holding a version-control marker; `start`
    itself when none does."""
    start = start.resolve()
    for candidate in (start, *start.parents):
        if any((candidate / marker).exists() for marker in PROJECT_MARKERS):
            return candidate
    return start


def add_root_option(p: argparse.ArgumentParser, positional: bool = False) -> None:
    """The workspace root, optional everywhere: by default the project around the current
    directory (`project_root`)."""
    text = (
        "workspace root (default: the nearest directory at or above the current one with "
        ".git, .hg, .svn or .jj; else the current directory)"
    )
    if positional:
        p.add_argument("root", type=existing_dir, metavar="ROOT", nargs="?", help=text)
        # Every other command spells it `--root`; `codeqa index --root DIR` must not be
        # a usage error for someone who just ran `codeqa search --root DIR`.
        p.add_argument(
            "--root", dest="root_flag", type=existing_dir, default=None, help="the same as ROOT"
        )
    else:
        p.add_argument("--root", type=existing_dir, default=None, help=text)


def _merge_root_spellings(args: argparse.Namespace) -> None:
    """A positional ROOT and `--root` are one setting (`add_root_option`)."""
    flag = vars(args).pop("root_flag", None)
    if flag is None:
        return
    if args.root is not None and args.root.resolve() != flag.resolve():
        raise UsageError(f"ROOT ({args.root}) and --root ({flag}) differ; give one of them")
    args.root = flag


def existing_dir(value: str) -> Path:
    path = Path(value).expanduser()
    if not path.is_dir():
        raise UsageError(f"not a directory: {value}")
    return path.resolve()


def print_json(obj: Any) -> None:
    """One JSON document per line (JSON Lines), UTF-8, no ASCII escaping."""
    sys.stdout.write(json.dumps(obj, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    raise SystemExit(main())
