"""Building the server: the one place that lists every feature module.

Each feature module exposes `register(server)` and imports only the server core (app.py)
and neutral helpers (arguments.py, buffers.py, queries.py, convert.py, folders.py), never another
feature. Features are isolated from each other's failures twice over:

- at start-up, a feature whose `register` raises is logged and left out; the others are
  registered and the server still starts (esbonio loads its modules the same way);
- at run time, a handler that raises answers its own request with a -32603 error
  (pygls, through `RobustProtocol`) or, for a notification, is logged
  (`CodeQAServer.report_server_error`); nothing else is affected.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from types import ModuleType

from codeqa_lsp.server import (
    codelens,
    commands,
    conversations,
    documents,
    hover,
    lifecycle,
    symbols,
)
from codeqa_lsp.server.app import CodeQAServer

logger = logging.getLogger(__name__)

# Every feature, registered in this order (lifecycle first: it answers `initialize`).
FEATURES: tuple[ModuleType, ...] = (
    lifecycle,
    documents,
    commands,
    conversations,
    hover,
    codelens,
    symbols,
)


def build_server(features: Sequence[ModuleType] = FEATURES) -> CodeQAServer:
    server = CodeQAServer()
    for module in features:
        register: Callable[[CodeQAServer], None] = module.register
        try:
            register(server)
        except Exception:
            logger.exception(
                "feature %s failed to register; the server runs without it", module.__name__
            )
    return server


_ENGINE_MODULES = (
    "codeqa_lsp.engine",
    "codeqa_lsp.index.indexer",
    "codeqa_lsp.retrieval.search",
    "codeqa_lsp.answering.ask",
    "codeqa_lsp.chunking.chunker",
    "codeqa_lsp.chunking.scanner",
)


def prewarm_engine() -> threading.Thread:
    """Import the engine in the background while the client and server shake hands.

    Opening the first workspace otherwise starts with a second or more of imports (numpy,
    tree-sitter grammars, hnswlib, SQLite FTS); overlapping them with the server's own start
    shortens the time to the first answer.
    """
    import importlib

    def run() -> None:
        for name in _ENGINE_MODULES:
            try:
                importlib.import_module(name)
            except Exception as exc:  # the folder that needs it reports the failure
                logger.warning("pre-importing %s failed: %s", name, exc)

    thread = threading.Thread(target=run, name="codeqa-prewarm", daemon=True)
    thread.start()
    return thread
