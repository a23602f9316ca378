"""`IndexingHost`: what the folder manager needs from the server, and nothing more.

The server object (app.py) owns the folder manager (indexing.py), so the folder manager and
its index runs must not name the server class back: they see it through this protocol, and
`server/` keeps an import graph without loops (tests/test_layers.py).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Protocol

from lsprotocol import types

from codeqa_lsp.config import Settings


class IndexingHost(Protocol):
    settings: Settings
    # Cancel flags of the running index runs, by `$/progress` token
    # (window/workDoneProgress/cancel).
    progress_cancellers: dict[types.ProgressToken, threading.Event]

    @property
    def work_done_progress(self) -> Any:
        """pygls's `$/progress` sender (begin / report / end / create_async)."""
        ...

    def warn(self, message: str) -> None:
        """Show the user one warning (window/showMessage) and log it."""
        ...

    def call_soon(self, fn: Callable[..., Any], *args: Any) -> None:
        """Run `fn(*args)` on the event loop from a worker thread."""
        ...

    def new_token(self, prefix: str) -> str:
        """A fresh `$/progress` token."""
        ...

    def supports_progress(self) -> bool:
        """The client accepts server-initiated `$/progress`."""
        ...
