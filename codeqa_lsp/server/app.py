"""The server object: typed settings, executors, background tasks and the folder manager.

This module imports no feature: every feature (lifecycle.py, documents.py, commands.py, ...)
imports `CodeQAServer` from here and registers its handlers in `register(server)`, and
setup.py is the one place that lists them. All blocking engine work runs in the server's
own executors, never on the event loop and never in pygls's thread pool (which also reads
stdin):

- `read_pool` (small): hover, search, workspace symbols, code lens chunking: latency-sensitive
  reads that must not queue behind a full index;
- `work_pool`: answer generation (ask / explain) and background explanations;
- one single-thread writer per folder (folders.py): index runs and file updates, serialised
  so saves during a full index queue up behind it instead of being lost.

Work a handler starts but does not wait for (a citation popup, a hover's background
explanation) is owned here too, so shutdown cancels and awaits it in one place.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import uuid
from collections.abc import Callable, Coroutine, Hashable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

from lsprotocol import types
from pygls.exceptions import FeatureRequestError
from pygls.lsp.server import LanguageServer

from codeqa_lsp import __version__
from codeqa_lsp.config import PROVENANCE_FIELDS, SETTINGS, USER_ONLY_FIELDS, Settings
from codeqa_lsp.server.indexing import FolderManager
from codeqa_lsp.server.protocol import PARSE_ERROR, RobustProtocol, strict_converter

logger = logging.getLogger(__name__)

T = TypeVar("T")

CONFIG_SECTION = "codeqa"
CLIENT_FEATURES_OPTION = "clientFeatures"
# Settings the launching client took from *user* scope only (README "Privacy").
USER_SETTINGS_OPTION = "userSettings"


@dataclass(frozen=True)
class ClientFeatures:
    """What our own editor plugins announce in `initializationOptions.clientFeatures`."""

    answer_notification: bool = False

    @classmethod
    def from_wire(cls, raw: Any) -> ClientFeatures:
        if not isinstance(raw, dict):
            return cls()
        return cls(answer_notification=raw.get("answerNotification") is True)


def client_capability(ls: LanguageServer, dotted: str) -> Any:
    """`client_capability(ls, "window.work_done_progress")`, None when absent or not initialized."""
    value: Any = getattr(ls.protocol, "client_capabilities", None)
    for part in dotted.split("."):
        if value is None:
            return None
        value = getattr(value, part, None)
    return value


class CodeQAServer(LanguageServer):
    """The codeqa language server: settings, executors and the folder manager."""

    def __init__(self) -> None:
        super().__init__(
            "codeqa-lsp",
            __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            protocol_cls=RobustProtocol,
            converter_factory=strict_converter,
        )
        self.init_options: dict[str, Any] = {}
        self.pulled_config: dict[str, Any] = {}
        # From the command line (`--base-url`): trusted like user settings.
        self.trusted_settings: dict[str, Any] = {}
        self.settings = Settings()
        self.client_features = ClientFeatures()
        self.client_name = ""
        self.read_pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="codeqa-read")
        self.work_pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="codeqa-work")
        self.folders = FolderManager(self)
        # Progress tokens (indexing and answers) the client may cancel.
        self.progress_cancellers: dict[types.ProgressToken, threading.Event] = {}
        self.loop: asyncio.AbstractEventLoop | None = None
        self._reported_problems: set[str] = set()
        # Handler work nobody awaits: tasks on the event loop, keyed jobs in the work pool.
        self.background: set[asyncio.Task[Any]] = set()
        self._running_once: set[Hashable] = set()
        self._running_once_lock = threading.Lock()

    @property
    def robust(self) -> RobustProtocol:
        assert isinstance(self.protocol, RobustProtocol)
        return self.protocol

    # -- running blocking work ---------------------------------------------------------------
    async def run_read(self, fn: Callable[..., T], *args: Any) -> T:
        return await asyncio.get_running_loop().run_in_executor(self.read_pool, fn, *args)

    async def run_work(self, fn: Callable[..., T], *args: Any) -> T:
        return await asyncio.get_running_loop().run_in_executor(self.work_pool, fn, *args)

    def call_soon(self, fn: Callable[..., Any], *args: Any) -> None:
        """Schedule `fn` on the event loop from any thread (notifications from workers)."""
        if self.loop is not None and not self.loop.is_closed():
            self.loop.call_soon_threadsafe(fn, *args)

    # -- background work ----------------------------------------------------------------------
    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        """Run `coro` on the event loop without awaiting it; shutdown cancels and awaits it.

        The event loop keeps only weak references to tasks, so the set also keeps a running
        task from being garbage-collected mid-way.
        """
        task = asyncio.get_running_loop().create_task(coro)
        self.background.add(task)
        task.add_done_callback(self.background.discard)
        return task

    def submit_once(self, key: Hashable, fn: Callable[[], None]) -> None:
        """Run `fn` in the work pool unless a job with the same `key` is still running.

        A hover repeated on one definition must start its explanation once, not once per hover.
        """
        with self._running_once_lock:
            if key in self._running_once:
                return
            self._running_once.add(key)

        def run() -> None:
            try:
                fn()
            finally:
                with self._running_once_lock:
                    self._running_once.discard(key)

        try:
            self.work_pool.submit(run)
        except RuntimeError:  # shutting down
            with self._running_once_lock:
                self._running_once.discard(key)

    async def stop_background(self) -> None:
        """Cancel the background tasks and wait until they have finished (`shutdown`)."""
        tasks = list(self.background)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def new_token(self, prefix: str) -> str:
        return f"codeqa-{prefix}-{uuid.uuid4().hex[:12]}"

    def supports_progress(self) -> bool:
        return client_capability(self, "window.work_done_progress") is True

    # -- messages to the user -------------------------------------------------------------------
    def warn(self, message: str) -> None:
        self.window_show_message(
            types.ShowMessageParams(type=types.MessageType.Warning, message=message)
        )

    def report_settings_problems(self, problems: list[str]) -> None:
        """Show each distinct settings problem once (configuration is re-read often)."""
        fresh = [p for p in problems if p not in self._reported_problems]
        if not fresh:
            return
        self._reported_problems.update(fresh)
        logger.warning("settings problems: %s", "; ".join(fresh))
        self.warn("codeqa: " + "; ".join(fresh))

    def report_server_error(self, error: Exception, source: Any) -> None:
        """Out-of-band errors: log them; answer undecodable messages with a parse error.

        pygls's default shows every error to the user, which turns a fuzzing client (or one
        buggy notification) into a storm of popups; the log keeps the traceback instead.
        """
        if isinstance(error, json.JSONDecodeError | UnicodeDecodeError):
            self.robust.send_error(None, PARSE_ERROR, f"Parse error: {error}"[:300])
            return
        if source is FeatureRequestError:
            return  # already answered to the client as an error response
        logger.error("server error (%s): %s", getattr(source, "__name__", source), error)

    # -- settings ---------------------------------------------------------------------------------
    def effective_settings(self) -> Settings:
        """Workspace-scoped settings, overridden by user-scoped ones and the command line.

        Top-level `initializationOptions` and `workspace/configuration` may carry a
        repository's own settings file, so endpoints and keys from there are marked
        workspace-scoped (`Settings.key_for_endpoint` keeps the user's key from them).
        """
        reserved = {CLIENT_FEATURES_OPTION, USER_SETTINGS_OPTION}
        from_workspace = {k: v for k, v in self.init_options.items() if k not in reserved}
        from_workspace.update({k: v for k, v in self.pulled_config.items() if v is not None})
        user = self.init_options.get(USER_SETTINGS_OPTION)
        if user is not None and not isinstance(user, dict):
            self.report_settings_problems([f"{USER_SETTINGS_OPTION} must be an object; ignored"])
            user = None
        trusted = {**(user or {}), **self.trusted_settings}
        settings, problems = Settings.from_wire({**from_workspace, **trusted})
        self.report_settings_problems(problems)

        def given(source: dict[str, Any], name: str) -> bool:
            return any(source.get(k) is not None for k in (SETTINGS[name].wire, name))

        scoped = frozenset(
            name
            for name in PROVENANCE_FIELDS
            if given(from_workspace, name) and not given(trusted, name)
        )
        for name in USER_ONLY_FIELDS:
            if getattr(settings, name) != SETTINGS[name].default and not given(trusted, name):
                # e.g. a shared index sees every question (query text and vector): a
                # repository's own settings file must not choose where they go (README "Privacy").
                self.report_settings_problems(
                    [
                        f"'{SETTINGS[name].wire}' is only taken from user settings or the command "
                        "line; ignored"
                    ]
                )
                settings = settings.replace(**{name: SETTINGS[name].default})
        return settings.replace(workspace_scoped=scoped)

    async def pull_configuration(self) -> None:
        """Read section `codeqa` from the client (when it supports workspace/configuration)."""
        if client_capability(self, "workspace.configuration") is not True:
            return
        try:
            result = await self.workspace_configuration_async(
                types.ConfigurationParams(items=[types.ConfigurationItem(section=CONFIG_SECTION)])
            )
        except Exception as exc:
            logger.warning("workspace/configuration failed: %s", exc)
            return
        value = result[0] if result else None
        if value is None:
            self.pulled_config = {}
        elif isinstance(value, dict):
            self.pulled_config = value
        else:
            self.report_settings_problems(
                [f"configuration section 'codeqa' must be an object, got {type(value).__name__}"]
            )

    def shutdown(self) -> None:
        """Stop the transport without waiting on pygls's stdin reader thread.

        pygls joins its thread pool here, and that pool's reader is blocked on stdin until the
        client closes it; after `exit` the process must end regardless (see `__main__`).
        """
        if self._stop_event is not None:
            self._stop_event.set()
        if self._thread_pool is not None:
            self._thread_pool.shutdown(wait=False, cancel_futures=True)
        if self._server is not None:
            self._server.close()

    def shutdown_pools(self) -> None:
        """Stop the executors without waiting: a cancelled answer may sit in a network timeout."""
        for task in list(self.background):  # `exit` without `shutdown`: nobody awaits them
            task.cancel()
        self.read_pool.shutdown(wait=False, cancel_futures=True)
        self.work_pool.shutdown(wait=False, cancel_futures=True)
