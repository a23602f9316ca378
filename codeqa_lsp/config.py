"""Typed settings shared by the CLI and the language server.

Settings arrive camelCase on the wire (LSP `initializationOptions`, `workspace/configuration`)
and snake_case in Python. They are validated once, in `Settings.from_wire`: a bad value is
reported as a human-readable problem and its default is used, so a typo in an editor config
never stops the server.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

EmbedderName = Literal["auto", "local", "openai", "hash"]
ProviderName = Literal["extractive", "anthropic", "openai"]

EMBEDDERS: tuple[str, ...] = get_args(EmbedderName)
PROVIDERS: tuple[str, ...] = get_args(ProviderName)


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


@dataclass(frozen=True)
class Settings:
    """Everything a user can configure. Every field has a safe, offline default."""

    # Embeddings. `auto` = MiniLM when installed, else the numpy hashing embedder.
    # `openai` is only ever used when chosen explicitly: code leaves the machine on request only.
    embedder: EmbedderName = "auto"
    embedding_model: str | None = None
    embedding_dimensions: int | None = None
    embedding_base_url: str | None = None
    # Answer generation. `extractive` needs no model and no network.
    provider: ProviderName = "extractive"
    model: str | None = None
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    allow_remote: bool = True
    request_timeout: float = 60.0
    max_retries: int = 3
    # Retrieval.
    top_k: int = 8
    min_score: float | None = None  # None: the calibrated per-embedder floor
    context_tokens: int = 6000
    # Workspace scanning.
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    max_file_bytes: int = 1_000_000
    chunk_tokens: int = 1500
    # Storage and caches.
    index_dir: str | None = None
    # The shared team index (README "Shared team index"): postgresql://user@host/db, never
    # with a password (PGPASSWORD / ~/.pgpass). None: the local index alone.
    store: str | None = None
    embedding_cache_bytes: int = 512 * 1024 * 1024
    answer_cache_bytes: int = 64 * 1024 * 1024
    # Editor behaviour.
    hover_explanations: bool = False
    log_questions: bool = False
    # Provenance, set by the server, never read from the wire (README "Privacy"): which
    # endpoint fields ("base_url", "embedding_base_url") and whether `api_key` came from
    # workspace-scoped settings. See `key_for_endpoint`.
    workspace_scoped: frozenset[str] = field(default=frozenset(), repr=False)

    @classmethod
    def from_wire(cls, raw: Mapping[str, Any] | None) -> tuple[Settings, list[str]]:
        """Build settings from a camelCase (or snake_case) mapping.

        Returns the settings and a list of problems; each problem names the key, the bad
        value's type and the default that was used instead. Unknown keys are reported too,
        because a misspelt key silently doing nothing is the worst kind of config bug.
        """
        problems: list[str] = []
        if raw is None:
            return cls(), problems
        if not isinstance(raw, Mapping):
            return cls(), [f"settings must be an object, got {type(raw).__name__}; using defaults"]
        fields = {f.name: f for f in dataclasses.fields(cls) if f.name not in _INTERNAL}
        values: dict[str, Any] = {}
        for key, value in raw.items():
            name = _snake(str(key))
            if name not in fields:
                problems.append(f"unknown setting '{key}' ignored")
                continue
            if value is None:
                continue
            ok, coerced = _coerce(name, fields[name].default, value)
            if ok:
                values[name] = coerced
            else:
                default = fields[name].default
                if name == "api_key":
                    shown = f"a {type(value).__name__}"  # never the key
                elif name == "store":
                    shown = "not a postgresql:// URL without a password"  # never the password
                else:
                    shown = _describe(value)
                problems.append(
                    f"invalid value for '{_camel(name)}': {shown}; "
                    f"using default {default!r}"
                )
        return cls(**values), problems

    def to_wire(self) -> dict[str, Any]:
        """camelCase view without secrets, for status reports and logs."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            if f.name in _INTERNAL:
                continue
            if f.name == "api_key":
                out["apiKey"] = "***" if self.api_key else None
                continue
            value = getattr(self, f.name)
            out[_camel(f.name)] = list(value) if isinstance(value, tuple) else value
        return out

    def replace(self, **changes: Any) -> Settings:
        return dataclasses.replace(self, **changes)

    def resolved_api_key(self) -> str | None:
        """The configured key, else the provider SDK's own environment variable."""
        if self.api_key:
            return self.api_key
        env = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}.get(self.provider)
        return os.environ.get(env) if env else None

    def key_for_endpoint(self, endpoint_field: str, env_key: str | None) -> str | None:
        """The API key that may be sent to the endpoint in `endpoint_field`, or None.

        The key-redirection rule (issue 15): a key the user owns (the environment, the
        command line, user settings) only goes to the provider's default endpoint or to an
        endpoint from a trusted source; an endpoint from workspace-scoped settings only ever
        gets a key from the same workspace-scoped settings.
        """
        if endpoint_field in self.workspace_scoped and getattr(self, endpoint_field):
            return self.api_key if "api_key" in self.workspace_scoped else None
        return self.api_key or env_key

    def refused_endpoint(self, endpoint_field: str) -> str | None:
        """Why code may not go to the endpoint in `endpoint_field` (None: it may).

        Code leaves the machine only for an endpoint the user chose: a workspace-scoped
        endpoint (a repository's `.vscode/settings.json`) must be on this machine.
        """
        url = getattr(self, endpoint_field)
        if endpoint_field not in self.workspace_scoped or not url or is_loopback_url(url):
            return None
        return (f"{_camel(endpoint_field)} {redact_url(url)} comes from workspace settings; code is only "
                "sent to a remote endpoint set in user settings or on the command line")

    def index_dir_for(self, root: Path) -> Path | None:
        return Path(self.index_dir).expanduser() if self.index_dir else None


_INTERNAL = {"workspace_scoped"}
ENDPOINT_FIELDS = ("base_url", "embedding_base_url")


def is_loopback_url(url: str | None) -> bool:
    from urllib.parse import urlparse

    try:
        host = urlparse(url).hostname if url else None
    except ValueError:
        return False
    return host in {"localhost", "127.0.0.1", "::1"}


def redact_url(url: str) -> str:
    """The URL without userinfo (`https://user:key@host` must never reach a log)."""
    return re.sub(r"(?<=//)[^/@\s]*@", "***@", url)


_CHOICES: dict[str, tuple[str, ...]] = {"embedder": EMBEDDERS, "provider": PROVIDERS}
_POSITIVE = {
    "top_k", "context_tokens", "max_file_bytes", "chunk_tokens", "embedding_cache_bytes",
    "answer_cache_bytes", "request_timeout", "embedding_dimensions",
}


def _describe(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _coerce(name: str, default: Any, value: Any) -> tuple[bool, Any]:
    if name in _CHOICES:
        return (value in _CHOICES[name], value)
    if name == "min_score":
        ok = isinstance(value, int | float) and not isinstance(value, bool) and -1 <= value <= 1
        return ok, float(value) if ok else None
    if isinstance(default, bool):
        return isinstance(value, bool), value
    if isinstance(default, tuple):
        if isinstance(value, str):
            value = [value]
        ok = isinstance(value, list | tuple) and all(isinstance(v, str) for v in value)
        return ok, tuple(value) if ok else ()
    if isinstance(default, int) or name == "embedding_dimensions":
        ok = isinstance(value, int) and not isinstance(value, bool)
        if ok and name in _POSITIVE:
            ok = value > 0
        if name == "max_retries":
            ok = ok and 0 <= value <= 10
        return ok, value
    if isinstance(default, float):
        ok = isinstance(value, int | float) and not isinstance(value, bool) and value > 0
        return ok, float(value) if ok else None
    if name == "store":
        return isinstance(value, str) and store_url_ok(value), value
    # Optional strings.
    return isinstance(value, str) and value != "", value


def store_url_ok(value: str) -> bool:
    """A postgresql:// URL without a password (credentials come from PG* variables or
    ~/.pgpass, never from settings a workspace can carry)."""
    return bool(re.match(r"postgres(ql)?://", value, re.IGNORECASE)) and not re.search(
        r"://[^/@]*:[^/@]*@|password\s*=", value, re.IGNORECASE
    )
