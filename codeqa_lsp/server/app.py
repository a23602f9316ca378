"""Server construction, typed settings, lifecycle and workspace folders.

Handlers stay thin: this module turns LSP lifecycle messages into calls on the
`FolderManager` (indexing.py), and every feature lives in its own module with a
`register(server)` function. All blocking engine work runs in the server's own executors,
never on the event loop and never in pygls's thread pool (which also reads stdin):

- `read_pool` (small): hover, search, workspace symbols, code lens chunking: latency-sensitive
  reads that must not queue behind a full index;
- `work_pool`: answer generation (ask / explain) and background explanations;
- one single-thread writer per folder (indexing.py): index runs and file updates, serialised
  so saves during a full index queue up behind it instead of being lost.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

from lsprotocol import types
from pygls.exceptions import FeatureRequestError
from pygls.lsp.server import LanguageServer

from codeqa_lsp import __version__
from codeqa_lsp.config import Settings
from codeqa_lsp.server.protocol import PARSE_ERROR, RobustProtocol, strict_converter

logger = logging.getLogger(__name__)

T = TypeVar("T")

CONFIG_SECTION = "codeqa"
_RESERVED_OPTION = "clientFeatures"
# Settings the launching client took from *user* scope only (README "Privacy").
USER_SETTINGS_OPTION = "userSettings"
_PROVENANCE = (("baseUrl", "base_url"), ("embeddingBaseUrl", "embedding_base_url"), ("apiKey", "api_key"))


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
        from codeqa_lsp.server.indexing import FolderManager

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

    def new_token(self, prefix: str) -> str:
        return f"codeqa-{prefix}-{uuid.uuid4().hex[:12]}"

    def supports_progress(self) -> bool:
        return client_capability(self, "window.work_done_progress") is True

    # -- messages to the user -------------------------------------------------------------------
    def warn(self, message: str) -> None:
        self.window_show_message(types.ShowMessageParams(type=types.MessageType.Warning, message=message))

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
        reserved = {_RESERVED_OPTION, USER_SETTINGS_OPTION}
        workspace = {k: v for k, v in self.init_options.items() if k not in reserved}
        workspace.update({k: v for k, v in self.pulled_config.items() if v is not None})
        user = self.init_options.get(USER_SETTINGS_OPTION)
        if user is not None and not isinstance(user, dict):
            self.report_settings_problems([f"{USER_SETTINGS_OPTION} must be an object; ignored"])
            user = None
        trusted = {**(user or {}), **self.trusted_settings}
        settings, problems = Settings.from_wire({**workspace, **trusted})
        self.report_settings_problems(problems)
        scoped = frozenset(
            name for camel, name in _PROVENANCE
            if any(workspace.get(k) is not None for k in (camel, name))
            and not any(trusted.get(k) is not None for k in (camel, name))
        )
        if settings.store and trusted.get("store") is None:
            # A shared index sees every question (query text and vector): a repository's own
            # settings file must not choose where they go (README "Privacy").
            self.report_settings_problems(
                ["'store' is only taken from user settings or the command line; ignored"]
            )
            settings = settings.replace(store=None)
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
        self.read_pool.shutdown(wait=False, cancel_futures=True)
        self.work_pool.shutdown(wait=False, cancel_futures=True)


# -- lifecycle handlers ---------------------------------------------------------------------------

async def on_initialize(ls: CodeQAServer, params: types.InitializeParams) -> None:
    """Read settings and folders; answer at once (indexing starts after `initialized`)."""
    ls.loop = asyncio.get_running_loop()
    options = params.initialization_options
    if options is not None and not isinstance(options, dict):
        ls.report_settings_problems(
            [f"initializationOptions must be an object, got {type(options).__name__}; using defaults"]
        )
        options = {}
    ls.init_options = dict(options or {})
    ls.client_features = ClientFeatures.from_wire(ls.init_options.get(_RESERVED_OPTION))
    ls.client_name = params.client_info.name if params.client_info else ""
    ls.settings = ls.effective_settings()
    for folder in _initial_folders(params):
        ls.folders.add_folder(folder.uri, folder.name)


def _initial_folders(params: types.InitializeParams) -> list[types.WorkspaceFolder]:
    if params.workspace_folders:
        return list(params.workspace_folders)
    root_uri = params.root_uri
    if root_uri is None and params.root_path:
        from pathlib import Path

        from codeqa_lsp.server.convert import file_uri

        root_uri = file_uri(Path(params.root_path))
    if root_uri:
        return [types.WorkspaceFolder(uri=root_uri, name=root_uri.rstrip("/").rsplit("/", 1)[-1])]
    return []


async def on_initialized(ls: CodeQAServer, params: types.InitializedParams) -> None:
    await ls.pull_configuration()
    ls.settings = ls.effective_settings()
    await _register_dynamic_capabilities(ls)
    ls.folders.start_all()


async def _register_dynamic_capabilities(ls: CodeQAServer) -> None:
    registrations: list[types.Registration] = []
    if client_capability(ls, "workspace.did_change_configuration.dynamic_registration") is True:
        registrations.append(
            types.Registration(
                id="codeqa-configuration",
                method=types.WORKSPACE_DID_CHANGE_CONFIGURATION,
                register_options=types.DidChangeConfigurationRegistrationOptions(section=CONFIG_SECTION),
            )
        )
    if client_capability(ls, "workspace.did_change_watched_files.dynamic_registration") is True:
        registrations.append(
            types.Registration(
                id="codeqa-watched-files",
                method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                register_options=types.DidChangeWatchedFilesRegistrationOptions(
                    watchers=[types.FileSystemWatcher(glob_pattern="**/*")]
                ),
            )
        )
    if not registrations:
        return
    try:
        await ls.client_register_capability_async(types.RegistrationParams(registrations=registrations))
    except Exception as exc:
        logger.warning("client/registerCapability failed: %s", exc)


async def on_did_change_configuration(
    ls: CodeQAServer, params: types.DidChangeConfigurationParams
) -> None:
    """Re-read settings; restart (and re-index) folders only when something changed."""
    settings = params.settings
    if isinstance(settings, dict) and isinstance(settings.get(CONFIG_SECTION), dict):
        ls.pulled_config = settings[CONFIG_SECTION]
    else:
        await ls.pull_configuration()
    new = ls.effective_settings()
    if new != ls.settings:
        ls.settings = new
        ls.folders.apply_settings(new)


async def on_did_change_workspace_folders(
    ls: CodeQAServer, params: types.DidChangeWorkspaceFoldersParams
) -> None:
    for removed in params.event.removed or []:
        await ls.folders.remove_folder(removed.uri)
    for added in params.event.added or []:
        folder = ls.folders.add_folder(added.uri, added.name)
        if folder is not None:
            ls.folders.start_index(folder)


async def on_progress_cancel(ls: CodeQAServer, params: types.WorkDoneProgressCancelParams) -> None:
    event = ls.progress_cancellers.get(params.token)
    if event is not None:
        event.set()


async def on_shutdown(ls: CodeQAServer, params: None) -> None:
    """Stop indexing, apply queued saves, persist and close every index."""
    await ls.folders.close_all()
    ls.shutdown_pools()


def on_exit(ls: CodeQAServer, params: None) -> None:
    """`exit` without `shutdown` (client crashed): stop workers without waiting for them."""
    ls.folders.abort_all()
    ls.shutdown_pools()


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


def build_server() -> CodeQAServer:
    from codeqa_lsp.server import codelens, commands, conversations, documents, hover, symbols

    server = CodeQAServer()
    server.feature(types.INITIALIZE)(on_initialize)
    server.feature(types.INITIALIZED)(on_initialized)
    server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)(on_did_change_configuration)
    server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)(on_did_change_workspace_folders)
    server.feature(types.WINDOW_WORK_DONE_PROGRESS_CANCEL)(on_progress_cancel)
    server.feature(types.SHUTDOWN)(on_shutdown)
    server.feature(types.EXIT)(on_exit)
    for module in (documents, commands, conversations, hover, codelens, symbols):
        module.register(server)
    return server
