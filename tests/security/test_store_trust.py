"""A repository's settings file must not choose the shared index every question goes to.

`store` (README "Shared team index") sends each query's text and vector to a PostgreSQL
server. Top-level `initializationOptions` and `workspace/configuration` are workspace-scoped
(a checked-in `.vscode/settings.json` reaches them), so `store` counts only from
`userSettings` or the command line; from anywhere else it is ignored and reported once.
"""

from __future__ import annotations

from codeqa_lsp.server.app import CodeQAServer

URL = "postgresql://reader@db.example/codeqa"


def server_with(
    init_options: dict[str, object], pulled: dict[str, object] | None = None
) -> tuple[CodeQAServer, list[str]]:
    server = CodeQAServer()
    shown: list[str] = []
    server.warn = shown.append  # type: ignore[method-assign]
    server.init_options = init_options
    server.pulled_config = pulled or {}
    return server, shown


def test_store_from_workspace_settings_is_ignored_and_reported_once() -> None:
    server, shown = server_with({"store": URL})
    assert server.effective_settings().store is None
    server, shown = server_with({}, pulled={"store": URL})
    assert server.effective_settings().store is None
    assert server.effective_settings().store is None
    assert len(shown) == 1 and "'store'" in shown[0] and "user settings" in shown[0]


def test_store_from_user_settings_or_command_line_is_used() -> None:
    server, shown = server_with({"userSettings": {"store": URL}})
    assert server.effective_settings().store == URL
    server, shown = server_with({"store": "postgresql://evil@attacker.example/x"})
    server.trusted_settings = {"store": URL}
    assert server.effective_settings().store == URL
    assert shown == []
