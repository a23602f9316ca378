"""LSP lifecycle: initialize, settings, workspace folders, progress cancel, shutdown, exit.

A feature like the others (registered by setup.py): each handler turns one lifecycle
message into calls on the server's settings and its `FolderManager`; indexing starts after
`initialized`, so `initialize` is answered at once.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from lsprotocol import types

from codeqa_lsp.server.app import (
    CLIENT_FEATURES_OPTION,
    CONFIG_SECTION,
    ClientFeatures,
    CodeQAServer,
    client_capability,
)
from codeqa_lsp.server.convert import file_uri

logger = logging.getLogger(__name__)


async def on_initialize(ls: CodeQAServer, params: types.InitializeParams) -> None:
    """Read settings and folders; answer at once (indexing starts after `initialized`)."""
    ls.loop = asyncio.get_running_loop()
    options = params.initialization_options
    if options is not None and not isinstance(options, dict):
        ls.report_settings_problems(
            [
                f"initializationOptions must be an object, got {type(options).__name__}; using "
                "defaults"
            ]
        )
        options = {}
    ls.init_options = dict(options or {})
    ls.client_features = ClientFeatures.from_wire(ls.init_options.get(CLIENT_FEATURES_OPTION))
    ls.client_name = params.client_info.name if params.client_info else ""
    ls.settings = ls.effective_settings()
    for folder in _initial_folders(params):
        ls.folders.add_folder(folder.uri, folder.name)


def _initial_folders(params: types.InitializeParams) -> list[types.WorkspaceFolder]:
    if params.workspace_folders:
        return list(params.workspace_folders)
    root_uri = params.root_uri
    if root_uri is None and params.root_path:
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
                register_options=types.DidChangeConfigurationRegistrationOptions(
                    section=CONFIG_SECTION
                ),
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
        await ls.client_register_capability_async(
            types.RegistrationParams(registrations=registrations)
        )
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
    """Stop background work and indexing, apply queued saves, persist and close every index."""
    await ls.stop_background()
    await ls.folders.close_all()
    ls.shutdown_pools()


def on_exit(ls: CodeQAServer, params: None) -> None:
    """`exit` without `shutdown` (client crashed): stop workers without waiting for them."""
    ls.folders.abort_all()
    ls.shutdown_pools()


def register(server: CodeQAServer) -> None:
    server.feature(types.INITIALIZE)(on_initialize)
    server.feature(types.INITIALIZED)(on_initialized)
    server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)(on_did_change_configuration)
    server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)(on_did_change_workspace_folders)
    server.feature(types.WINDOW_WORK_DONE_PROGRESS_CANCEL)(on_progress_cancel)
    server.feature(types.SHUTDOWN)(on_shutdown)
    server.feature(types.EXIT)(on_exit)
