"""Typed settings shared by the CLI and the language server.

Settings arrive camelCase on the wire (LSP `initializationOptions`, `workspace/configuration`)
and snake_case in Python. They are validated once, in `Settings.from_wire`: a bad value is
reported as a human-readable problem and its default is used, so a typo in an editor config
never stops the server.

Every fact about a setting sits on its field: type and default as usual, and a `Spec` (doc,
bounds, choices, trust tier, whether VS Code contributes it). Validation reads the Specs
(`SETTINGS`), and so does `config_schema`, which generates the editors' copies.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args, get_origin, get_type_hints

EmbedderName = Literal["auto", "local", "openai", "hash"]
ProviderName = Literal["extractive", "anthropic", "openai"]

EMBEDDERS: tuple[str, ...] = get_args(EmbedderName)
PROVIDERS: tuple[str, ...] = get_args(ProviderName)


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def store_url_ok(value: str) -> bool:
    """A postgresql:// URL without a password (credentials come from PG* variables or
    ~/.pgpass, never from settings a workspace can carry)."""
    return bool(re.match(r"postgres(ql)?://", value, re.IGNORECASE)) and not re.search(
        r"://[^/@]*:[^/@]*@|password\s*=", value, re.IGNORECASE
    )


Trust = Literal["workspace", "restricted", "endpoint", "key", "user"]
"""Where a setting may come from (README "Privacy"; PROTOCOL.md "Trust").

- `workspace`: anywhere, a repository's own settings file included.
- `restricted`: decides what runs or where code goes; VS Code's Restricted Mode takes it from
  user settings only (`restrictedConfigurations`).
- `endpoint`: restricted, and from workspace-scoped settings it must be a loopback address
  and never gets the user's key (`Settings.refused_endpoint`, `Settings.key_for_endpoint`).
- `key`: the API key; from workspace-scoped settings it only goes to a workspace endpoint.
- `user`: only from user settings or the command line; from anywhere else it is ignored
  (VS Code scope `machine`).
"""


@dataclass(frozen=True)
class Spec:
    """The facts about one setting beside its type and default (both on the field itself).

    Validation (`Settings.from_wire`) and the editors' schemas (`codeqa_lsp.config_schema`:
    VS Code's `contributes.configuration`, PROTOCOL.md's table) are all read from here, so a
    bound or a description is written once.
    """

    doc: str  # one line; markdown (backticks) makes VS Code use markdownDescription
    unset: str | None = None  # what None means, for an optional setting
    choices: tuple[tuple[str, str], ...] = ()  # the Literal's values, each with one line of doc
    minimum: float | None = None
    maximum: float | None = None
    positive: bool = False  # > 0 (ints: >= 1)
    trust: Trust = "workspace"
    editor: bool = True  # contributed as a VS Code setting (the extension reads it)
    secret: bool = False  # never shown: not in repr, not in problems, "***" in to_wire
    check: Callable[[str], bool] | None = None  # a further check of a string value
    invalid: str | None = None  # shown instead of a rejected value (it may hold a secret)


SPEC = "codeqa_spec"


def setting(default: Any, doc: str, **facts: Any) -> Any:
    """A `Settings` field: its default and its `Spec` (typed `Any` like `dataclasses.field`)."""
    spec = Spec(doc=doc, **facts)
    return field(default=default, repr=not spec.secret, metadata={SPEC: spec})


@dataclass(frozen=True)
class Settings:
    """Everything a user can configure. Every field has a safe, offline default."""

    # Embeddings. `openai` is only ever used when chosen explicitly: code leaves the machine
    # on request only.
    embedder: EmbedderName = setting(  # noqa: RUF009 (a dataclasses.field)
        "auto",
        "Embedding model used for semantic search.",
        trust="restricted",
        choices=(
            ("auto", "MiniLM embeddings when installed, else the hashing embedder."),
            ("local", "Local MiniLM embeddings (no network)."),
            ("openai", "OpenAI-compatible embeddings endpoint: code leaves the machine."),
            ("hash", "Fast hashing embedder (no model; lower quality)."),
        ),
    )
    embedding_model: str | None = setting(
        None,
        "Embedding model name (e.g. `text-embedding-3-small` for `openai`).",
        unset="the embedder's default",
        trust="restricted",
    )
    embedding_dimensions: int | None = setting(
        None,
        "Vector size asked of an `openai` embedder that can shorten its vectors.",
        unset="the model's own",
        positive=True,
        editor=False,
    )
    embedding_base_url: str | None = setting(
        None,
        "OpenAI-compatible embeddings endpoint.",
        unset="the SDK default or `OPENAI_BASE_URL`",
        trust="endpoint",
    )
    # Answer generation. `extractive` needs no model and no network.
    provider: ProviderName = setting(  # noqa: RUF009 (a dataclasses.field)
        "extractive",
        "Answer generator.",
        trust="restricted",
        choices=(
            ("extractive", "No model: answers quote the most relevant code (offline)."),
            ("anthropic", "Anthropic Claude (needs an API key)."),
            (
                "openai",
                "OpenAI or any OpenAI-compatible server such as Ollama or vLLM (see Base URL).",
            ),
        ),
    )
    model: str | None = setting(
        None, "Model name for the provider.", unset="the provider's default", trust="restricted"
    )
    base_url: str | None = setting(
        None,
        "Base URL of an OpenAI-compatible server (Ollama, vLLM, ...).",
        unset="the SDK default or `*_BASE_URL` from the environment",
        trust="endpoint",
    )
    api_key: str | None = setting(
        None,
        "API key of the provider; never logged (VS Code passes it from its secret storage).",
        unset="`ANTHROPIC_API_KEY` / `OPENAI_API_KEY`",
        trust="key",
        secret=True,
        editor=False,
    )
    allow_remote: bool = setting(
        True,
        "Allow remote providers and embedders. When false, nothing ever leaves the machine.",
        trust="restricted",
    )
    request_timeout: float = setting(
        60.0, "Timeout of one model request, in seconds.", positive=True
    )
    max_retries: int = setting(
        3,
        "Retries of a failed model request, within one `requestTimeout`.",
        minimum=0,
        maximum=10,
        editor=False,
    )
    # Retrieval.
    top_k: int = setting(8, "How many code chunks are retrieved for an answer.", positive=True)
    min_score: float | None = setting(
        None,
        "Confidence floor (dense cosine in [-1, 1]).",
        unset="the floor calibrated for the embedder",
        minimum=-1,
        maximum=1,
    )
    context_tokens: int = setting(
        6000, "Token budget of the code quoted in a model's prompt.", positive=True, editor=False
    )
    # Workspace scanning.
    include: tuple[str, ...] = setting(
        (), "Glob patterns of files to index, on top of the defaults."
    )
    exclude: tuple[str, ...] = setting(
        (), "Glob patterns of files never to index, on top of .gitignore and the built-in excludes."
    )
    max_file_bytes: int = setting(
        1_000_000, "Files larger than this many bytes are not indexed.", positive=True, editor=False
    )
    chunk_tokens: int = setting(
        1500, "Largest chunk, in tokens; longer definitions are split.", positive=True, editor=False
    )
    # Storage and caches.
    index_dir: str | None = setting(
        None,
        "Directory of the index, the same whatever the project (a relative path is taken "
        "from the working directory); each extra workspace folder gets a subdirectory.",
        unset="`$XDG_CACHE_HOME/codeqa-lsp/<hash of the project root>`",
        editor=False,
    )
    # The shared team index (README "Shared team index"), never with a password.
    store: str | None = setting(
        None,
        "Shared team index: `postgresql://user@host/db` (no password: use `PGPASSWORD` or "
        "`~/.pgpass`). The local index holds what differs in your working tree.",
        unset="the local index alone",
        trust="user",
        check=store_url_ok,
        invalid="not a postgresql:// URL without a password",
    )
    embedding_cache_bytes: int = setting(
        512 * 1024 * 1024,
        "Size limit of the on-disk embedding cache, in bytes.",
        positive=True,
        editor=False,
    )
    answer_cache_bytes: int = setting(
        64 * 1024 * 1024,
        "Size limit of the on-disk answer cache, in bytes.",
        positive=True,
        editor=False,
    )
    # Editor behaviour.
    hover_explanations: bool = setting(
        False, "Start a background explanation when hovering a symbol (shown on the next hover)."
    )
    log_questions: bool = setting(False, "Keep a local JSONL log of questions and answers.")
    # Provenance, set by the server, never read from the wire (no Spec: not a setting): which
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
        values: dict[str, Any] = {}
        for key, value in raw.items():
            facts = SETTINGS.get(_snake(str(key)))
            if facts is None:
                problems.append(f"unknown setting '{key}' ignored")
                continue
            if value is None:
                continue
            ok, coerced = facts.coerce(value)
            if ok:
                values[facts.name] = coerced
            else:
                problems.append(
                    f"invalid value for '{facts.wire}': {facts.show(value)}; "
                    f"using default {facts.default!r}"
                )
        return cls(**values), problems

    def to_wire(self) -> dict[str, Any]:
        """camelCase view without secrets, for status reports and logs."""
        out: dict[str, Any] = {}
        for facts in SETTINGS.values():
            value = getattr(self, facts.name)
            if facts.spec.secret:
                value = "***" if value else None
            out[facts.wire] = list(value) if isinstance(value, tuple) else value
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
        return (
            f"{_camel(endpoint_field)} {redact_url(url)} comes from workspace settings; code is "
            "only sent to a remote endpoint set in user settings or on the command line"
        )

    @property
    def configured_index_dir(self) -> Path | None:
        """`indexDir` with `~` expanded, or None when unset (then each project root gets
        `index.indexer.default_index_dir(root)`).

        It names one directory whatever the project: it is not resolved against a root (a
        relative path is relative to the process's working directory, as on the command line),
        and the server gives every workspace folder after the first its own subdirectory of it.
        """
        return Path(self.index_dir).expanduser() if self.index_dir else None


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


def _describe(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


@dataclass(frozen=True)
class SettingFacts:
    """One setting as validation and the schema generator see it: the field's name, wire
    name, default and type (from the annotation), and its `Spec`."""

    name: str
    wire: str  # camelCase, as editors send it
    default: Any
    kind: Literal["bool", "int", "float", "str", "globs", "choice"]
    optional: bool  # None is allowed (and means `spec.unset`)
    spec: Spec

    @property
    def lower_bound(self) -> tuple[float, bool] | None:
        """(bound, inclusive) or None: `positive` is `>= 1` for ints and `> 0` for floats."""
        if self.spec.positive:
            return (1, True) if self.kind == "int" else (0, False)
        return None if self.spec.minimum is None else (self.spec.minimum, True)

    def coerce(self, value: Any) -> tuple[bool, Any]:
        """(valid, value as stored). A single string is accepted as a list of globs."""
        if self.kind == "choice":
            return any(value == choice for choice, _ in self.spec.choices), value
        if self.kind == "bool":
            return isinstance(value, bool), value
        if self.kind == "globs":
            if isinstance(value, str):
                value = [value]
            ok = isinstance(value, list | tuple) and all(isinstance(v, str) for v in value)
            return ok, tuple(value) if ok else ()
        if self.kind in ("int", "float"):
            ok = (
                isinstance(value, int) and not isinstance(value, bool)
                if self.kind == "int"
                else _number(value)
            )
            return ok and self._in_bounds(value), (
                float(value) if self.kind == "float" and ok else value
            )
        ok = isinstance(value, str) and value != ""
        return ok and (self.spec.check is None or self.spec.check(value)), value

    def _in_bounds(self, value: float) -> bool:
        low = self.lower_bound
        if low is not None and not (value >= low[0] if low[1] else value > low[0]):
            return False
        return self.spec.maximum is None or value <= self.spec.maximum

    def show(self, value: Any) -> str:
        """A rejected value as a problem message shows it: never a secret."""
        if self.spec.secret:
            return f"a {type(value).__name__}"
        return self.spec.invalid or _describe(value)


def _facts(cls: type) -> dict[str, SettingFacts]:
    """Every field with a `Spec`, in declaration order, its kind read from the annotation."""
    hints = get_type_hints(cls)
    out: dict[str, SettingFacts] = {}
    for f in dataclasses.fields(cls):
        spec = f.metadata.get(SPEC)
        if spec is None:
            continue  # internal state such as `workspace_scoped`
        hint = hints[f.name]
        args = get_args(hint)
        optional = type(None) in args
        base = next(a for a in args if a is not type(None)) if optional else hint
        kind: Any
        if get_origin(base) is Literal:
            kind = "choice"
            if tuple(c for c, _ in spec.choices) != get_args(base):
                raise TypeError(f"{f.name}: the choices' docs must list {get_args(base)} in order")
        elif get_origin(base) is tuple:
            kind = "globs"
        else:
            kind = {bool: "bool", int: "int", float: "float", str: "str"}[base]
        if f.default is None and not optional:
            raise TypeError(f"{f.name}: a None default needs an optional type")
        out[f.name] = SettingFacts(f.name, _camel(f.name), f.default, kind, optional, spec)
    return out


SETTINGS: dict[str, SettingFacts] = _facts(Settings)  # every setting, in field order
# The trust tiers as field names, for the code that merges settings from several sources.
ENDPOINT_FIELDS = tuple(n for n, f in SETTINGS.items() if f.spec.trust == "endpoint")
PROVENANCE_FIELDS = tuple(n for n, f in SETTINGS.items() if f.spec.trust in ("endpoint", "key"))
USER_ONLY_FIELDS = tuple(n for n, f in SETTINGS.items() if f.spec.trust == "user")
