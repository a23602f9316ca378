"""The real codeqa server with two broken features added, for test_feature_isolation.

Run as `python -m tests.server.broken_server` from the repository root: one feature whose
`register` raises, one whose command handler raises. Everything else is the production
`setup.FEATURES` over the production stdio transport.
"""

from __future__ import annotations

import logging
import os
import sys
from types import ModuleType

from codeqa_lsp.server import transport
from codeqa_lsp.server.app import CodeQAServer
from codeqa_lsp.server.setup import FEATURES, build_server

BOOM = "codeqa.test.boom"


def _cannot_register(server: CodeQAServer) -> None:
    raise RuntimeError("this feature cannot register")


async def _boom(ls: CodeQAServer, *args: object) -> None:
    raise RuntimeError("this handler always fails")


def _register_boom(server: CodeQAServer) -> None:
    server.command(BOOM)(_boom)


def _feature(name: str, register: object) -> ModuleType:
    module = ModuleType(name)
    module.register = register  # type: ignore[attr-defined]
    return module


def main() -> None:
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    broken = _feature("tests.broken_register", _cannot_register)
    failing = _feature("tests.failing_handler", _register_boom)
    server = build_server((broken, *FEATURES, failing))
    transport.serve_stdio(server)
    os._exit(0 if getattr(server.protocol, "_shutdown", False) else 1)


if __name__ == "__main__":
    main()
