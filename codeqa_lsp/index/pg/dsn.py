"""The store URL: where the shared index lives, never how to log in.

A URL in settings or on a command line ends up in shell history, editor settings synced
to other machines and log lines, so a URL that carries a password is refused outright;
libpq takes the password from `PGPASSWORD` or `~/.pgpass` (its standard places). Every
message that mentions a URL goes through `redact`, which also hides a password that
slipped into free text (an exception message quoting a connection string).
"""

from __future__ import annotations

import re
from typing import Any

# A slow database must not hold up the editor: connecting and each read statement give up
# after this long, and the caller falls back to the local index. A hybrid query at 1M
# chunks takes well under this (see BENCHMARKS.md, "Shared team index"); publishers run
# without a statement limit.
CONNECT_TIMEOUT_SECONDS = 3
STATEMENT_TIMEOUT_MS = 2000

_SCHEMES = ("postgresql://", "postgres://")
_URL_PASSWORD = re.compile(r"(postgres(?:ql)?://[^:/@\s]*):[^@\s]*@", re.IGNORECASE)
_KV_PASSWORD = re.compile(r"(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)", re.IGNORECASE)


class StoreUrlError(ValueError):
    """The store URL is unusable; the message is safe to show and log."""


def redact(text: str) -> str:
    """`text` with any password in a URL or `password=` pair replaced by `***`."""
    text = _URL_PASSWORD.sub(r"\1:***@", text)
    return _KV_PASSWORD.sub(r"\1***", text)


def is_store_url(value: str) -> bool:
    return value.lower().startswith(_SCHEMES)


def validate(url: str) -> str:
    """The URL unchanged if usable; raises `StoreUrlError` (with a redacted message)."""
    from psycopg.conninfo import conninfo_to_dict

    if not is_store_url(url):
        raise StoreUrlError(f"store must be a postgresql:// URL, got {redact(url)!r}")
    try:
        params = conninfo_to_dict(url)
    except Exception as exc:  # psycopg.ProgrammingError: unparsable
        raise StoreUrlError(f"invalid store URL {redact(url)!r}: {redact(str(exc))}") from None
    if params.get("password"):
        raise StoreUrlError(
            f"store URL {redact(url)!r} contains a password; put it in PGPASSWORD or ~/.pgpass "
            "instead"
        )
    return url


def connect(url: str, read_only: bool = True, **kwargs: Any) -> Any:
    """A psycopg connection with short timeouts, in autocommit mode: writers group their
    statements with `conn.transaction()`. Errors are re-raised as `ConnectionError` with a
    redacted message."""
    import psycopg

    validate(url)
    options = f"-c statement_timeout={STATEMENT_TIMEOUT_MS if read_only else 0}"
    if read_only:
        options += " -c default_transaction_read_only=on"
    try:
        return psycopg.connect(
            url,
            connect_timeout=CONNECT_TIMEOUT_SECONDS,
            options=options,
            autocommit=True,
            application_name="codeqa-lsp",
            **kwargs,
        )
    except psycopg.Error as exc:
        raise ConnectionError(
            f"shared index {redact(url)} unreachable: {redact(str(exc)).strip()}"
        ) from None
