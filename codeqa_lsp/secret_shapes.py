"""The one table of secret shapes: what a credential looks like in text.

Used by everything that must keep secrets in: the scanner (a file holding a high-confidence
key is not indexed), the prompt redactor and the embedding-input redactor (nothing
secret-shaped leaves the machine) and the server's log filter. Before issue 15 there were
three lists that drifted apart (the log filter missed `github_pat_`, `ASIA…` keys and
private-key blocks; JWTs, database URLs and Slack tokens went to providers verbatim).

Two confidence levels, because the costs differ:
- `skip_file` shapes are vendor formats with a distinctive prefix and length: a false
  positive drops a source file from the index, so only these keep a file out;
- the others (JWTs, credentials in URLs, `password = "…"` with a high-entropy value, Slack /
  Stripe / GCP / Azure shapes) are blanked in every outgoing payload and log line: a false
  positive there costs one `[REDACTED]` in a prompt.

`redact` replaces only the secret part (`postgres://app:[REDACTED]@db`), so the model still
sees what the code does. Matching never returns the secret to callers, only a rule name.
"""

from __future__ import annotations

import math
import os
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

REDACTED = "[REDACTED]"
LOG_REDACTED = "***"


@dataclass(frozen=True)
class SecretShape:
    name: str
    pattern: re.Pattern[str]
    prefix: str = ""  # cheap `in` test before the regex ("" = always run)
    skip_file: bool = False  # high-confidence: a file containing it is not indexed
    group: int = 0  # the part of the match that is secret
    check: Callable[[str], bool] | None = None  # extra test on the secret part
    logs_only: bool = False  # too broad for code, right for our own log lines


# Published placeholder keys (AWS documentation) that appear in ordinary code and docs.
_PLACEHOLDER = re.compile(r"EXAMPLE|XXXXXXXX|xxxxxxxx|0000000000|\.\.\.")


def _mixed(value: str, need_case: bool = True) -> bool:
    """Real tokens mix digits and letters (and cases); `sk-this-is-not-a-key` does not."""
    if _PLACEHOLDER.search(value):
        return False
    has_digit = any(c.isdigit() for c in value)
    has_alpha = any(c.isalpha() for c in value)
    cased = any(c.isupper() for c in value) and any(c.islower() for c in value)
    return has_digit and has_alpha and (cased or not need_case)


def _key_tail(value: str) -> bool:
    return _mixed(value.split("-", 2)[-1])


def entropy(value: str) -> float:
    """Shannon entropy in bits per character."""
    counts = Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())


# 3.0 bits/char: above `changeme` / `hunter22` (2.75) and below every generated password
# and token in tests/security's corpus (`Tr0ub4dor-horse-battery-9931` 3.99, AWS secrets ~5).
MIN_ASSIGNED_ENTROPY = 3.0


def _high_entropy(value: str) -> bool:
    if (
        len(value) < 8
        or _PLACEHOLDER.search(value)
        or re.fullmatch(r"[A-Za-z_][\w.]*(\(\))?", value)
    ):
        return False  # identifiers and attribute paths (`settings.password`) are code
    classes = sum(bool(re.search(p, value)) for p in (r"[a-z]", r"[A-Z]", r"\d", r"[^A-Za-z0-9]"))
    return classes >= 2 and entropy(value) >= MIN_ASSIGNED_ENTROPY


_ASSIGNED_NAME = (
    r"(?:password|passwd|pwd|passphrase|secret|client_?secret|api_?key|apikey|"
    r"access_?key|secret_?key|private_?key|auth_?token|access_?token|token)"
)

SHAPES: tuple[SecretShape, ...] = (
    SecretShape(
        "private-key",
        re.compile(
            r"-----BEGIN (?:RSA |DSA |EC |OPENSSH |PGP |ENCRYPTED )?PRIVATE KEY(?: BLOCK)?-----"
            r"[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY(?: BLOCK)?-----|\Z)"
        ),
        "-----BEGIN ",
        skip_file=True,
    ),
    SecretShape(
        "aws-access-key",
        re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b"),
        "A",
        skip_file=True,
        check=lambda v: _mixed(v[4:], need_case=False),
    ),
    SecretShape(
        "aws-secret-key",
        re.compile(r"(?i)aws_?secret_?access_?key[\"']?\s*[:=]\s*[\"']?([A-Za-z0-9/+=]{40})"),
        group=1,
    ),
    SecretShape(
        "anthropic-key",
        re.compile(r"\bsk-ant-[a-z]{2,8}\d{0,3}-[A-Za-z0-9_\-]{32,}"),
        "sk-ant-",
        skip_file=True,
        check=_key_tail,
    ),
    SecretShape(
        "openai-key",
        re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{32,}"),
        "sk-",
        skip_file=True,
        check=_key_tail,
    ),
    SecretShape(
        "github-token",
        re.compile(r"\bgh[pousr]_[A-Za-z0-9]{36,255}\b"),
        "gh",
        skip_file=True,
        check=lambda v: _mixed(v, need_case=False),
    ),
    SecretShape(
        "github-token",
        re.compile(r"\bgithub_pat_[A-Za-z0-9_]{22,255}\b"),
        "github_pat_",
        skip_file=True,
        check=lambda v: _mixed(v, need_case=False),
    ),
    SecretShape("slack-token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"), "xox"),
    SecretShape(
        "slack-webhook", re.compile(r"hooks\.slack\.com/services/[A-Za-z0-9/]{20,}"), "hooks.slack"
    ),
    SecretShape("stripe-key", re.compile(r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}"), "_"),
    SecretShape("stripe-webhook", re.compile(r"\bwhsec_[A-Za-z0-9]{24,}"), "whsec_"),
    SecretShape("gcp-api-key", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}\b"), "AIza"),
    SecretShape("gcp-oauth-token", re.compile(r"\bya29\.[0-9A-Za-z_\-]{20,}"), "ya29."),
    SecretShape(
        "azure-storage-key", re.compile(r"(?i)AccountKey=([A-Za-z0-9+/]{40,}={0,2})"), group=1
    ),
    SecretShape(
        "azure-sas-signature", re.compile(r"(?i)[?&]sig=([A-Za-z0-9%+/]{20,}={0,2})"), group=1
    ),
    SecretShape(
        "jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"), "eyJ"
    ),
    SecretShape(
        "url-credentials",
        re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^/\s:@\"'`]+:([^/\s@\"'`]+)@"),
        "://",
        group=1,
    ),
    SecretShape(
        "assigned-secret",
        re.compile(
            rf"(?i)\b\w*{_ASSIGNED_NAME}\w*[\"']?\s*(?::=|=>|[:=])\s*[\"'`]?([^\s\"'`,;(){{}}\[\]]+)(?![(\[])"
        ),
        group=1,
        check=_high_entropy,
    ),
    # Our own log lines: keyed values whatever they look like, shorter vendor-prefixed
    # tokens, bearer tokens, URL userinfo.
    SecretShape(
        "keyed-value",
        re.compile(
            r"""(?i)["']?(?:api[_-]?key|auth[_-]?token|authorization)["']?\s*[:=]\s*["']?([^"',\s})]+)"""
        ),
        group=1,
        logs_only=True,
    ),
    SecretShape(
        "vendor-key-loose",
        re.compile(
            r"\b(?:sk-(?:ant-)?[A-Za-z0-9_\-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_\w{20,}"
            r"|(?:AKIA|ASIA)[0-9A-Z]{16})"
        ),
        logs_only=True,
    ),
    SecretShape(
        "bearer", re.compile(r"(?i)\bbearer\s+([A-Za-z0-9._~+/\-]{8,}=*)"), group=1, logs_only=True
    ),
    SecretShape("url-userinfo", re.compile(r"://([^/\s@\"'`]+)@"), "://", group=1, logs_only=True),
)


def _spans(text: str, logs: bool) -> list[tuple[int, int, str]]:
    spans: list[tuple[int, int, str]] = []
    for shape in SHAPES:
        if (shape.logs_only and not logs) or (shape.prefix and shape.prefix not in text):
            continue
        for match in shape.pattern.finditer(text):
            value = match.group(shape.group)
            # In our own logs a false positive costs nothing: vendor shapes skip their checks.
            lenient = logs and shape.name != "assigned-secret"
            if value and (shape.check is None or lenient or shape.check(value)):
                spans.append((match.start(shape.group), match.end(shape.group), shape.name))
    return spans


def first_file_secret(text: str) -> str | None:
    """The name of the first high-confidence (`skip_file`) shape in `text`, else None."""
    for shape in SHAPES:
        if not shape.skip_file or (shape.prefix and shape.prefix not in text):
            continue
        for match in shape.pattern.finditer(text):
            if shape.check is None or shape.check(match.group(shape.group)):
                return shape.name
    return None


def redact(text: str, replacement: str = REDACTED, *, logs: bool = False) -> str:
    """`text` with every secret-shaped part replaced (overlapping matches merged)."""
    spans = sorted(_spans(text, logs))
    if not spans:
        return text
    out: list[str] = []
    position = 0
    for start, end, _name in spans:
        if end <= position:
            continue
        out.append(text[position : max(start, position)])
        out.append(replacement)
        position = end
    out.append(text[position:])
    return "".join(out)


def shapes_found(text: str) -> set[str]:
    """Rule names present in `text` (tests and diagnostics; never the values)."""
    return {name for _s, _e, name in _spans(text, logs=False)}


# Environment variables whose *values* must never be sent anywhere.
_SECRET_ENV_NAME = re.compile(r"(?i)(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL)")
_MIN_SECRET_LEN = 8  # shorter values ("1", "true") would redact ordinary words


class Redactor:
    """Known secret values (the user's keys, secret-named environment variables) plus SHAPES."""

    def __init__(
        self, known_secrets: Iterable[str | None] = (), environ: Mapping[str, str] | None = None
    ) -> None:
        env = os.environ if environ is None else environ
        values = {v for v in known_secrets if v and len(v) >= _MIN_SECRET_LEN}
        values.update(
            v for k, v in env.items() if _SECRET_ENV_NAME.search(k) and len(v) >= _MIN_SECRET_LEN
        )
        # Longest first, so a key containing another secret is blanked whole.
        self._values = sorted(values, key=len, reverse=True)

    def redact(self, text: str) -> str:
        for value in self._values:
            if value in text:
                text = text.replace(value, REDACTED)
        return redact(text)
