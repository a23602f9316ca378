"""The trust tier declared on each setting (`config.Spec.trust`) is what the server enforces.

`store` is user-only today and the endpoints and the key are provenance-tracked; these tests
read the tiers from the fields, so a setting moved to a stricter tier without the server
honouring it fails here.
"""

from __future__ import annotations

import pytest

from codeqa_lsp.config import PROVENANCE_FIELDS, SETTINGS, USER_ONLY_FIELDS
from codeqa_lsp.server.app import CodeQAServer

VALUES = {
    "store": "postgresql://reader@db.example/codeqa",
    "base_url": "https://api.example/v1",
    "embedding_base_url": "https://emb.example/v1",
    "api_key": "sk-test-123",
}


def server_with(init_options: dict[str, object]) -> CodeQAServer:
    server = CodeQAServer()
    server.warn = lambda message: None  # type: ignore[method-assign]
    server.init_options = init_options
    server.pulled_config = {}
    return server


@pytest.mark.parametrize("name", USER_ONLY_FIELDS)
def test_user_only_settings_are_ignored_from_workspace_settings(name: str) -> None:
    wire = SETTINGS[name].wire
    assert getattr(server_with({wire: VALUES[name]}).effective_settings(), name) is None
    user = server_with({"userSettings": {wire: VALUES[name]}}).effective_settings()
    assert getattr(user, name) == VALUES[name]


@pytest.mark.parametrize("name", PROVENANCE_FIELDS)
def test_endpoint_and_key_settings_remember_they_came_from_the_workspace(name: str) -> None:
    wire = SETTINGS[name].wire
    scoped = server_with({wire: VALUES[name]}).effective_settings()
    assert getattr(scoped, name) == VALUES[name] and name in scoped.workspace_scoped
    user = server_with({"userSettings": {wire: VALUES[name]}}).effective_settings()
    assert getattr(user, name) == VALUES[name] and name not in user.workspace_scoped


def test_the_tiers_cover_what_the_server_guards() -> None:
    assert set(USER_ONLY_FIELDS) == {"store"}
    assert set(PROVENANCE_FIELDS) == {"base_url", "embedding_base_url", "api_key"}
