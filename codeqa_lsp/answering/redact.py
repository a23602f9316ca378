"""Last line of defence before text leaves the machine: blank out anything secret-shaped.

The scanner keeps secret *files* (`.env`, keys, certificates) out of the index, but a key
pasted into ordinary source, or the user's own API key / environment values appearing in
code or in the question, must not be sent to a provider either. Everything that goes into a
prompt passes through `Redactor.redact`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping

REDACTED = "[REDACTED]"

# Well-known credential shapes. Deliberately specific (prefix + length) so ordinary code
# such as hex digests or UUIDs is left alone.
SECRET_PATTERNS: tuple[re.Pattern[str], ...] = tuple(re.compile(p) for p in (
    r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\Z)",
    r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",  # AWS access key id
    r"(?i)aws_?secret_?access_?key\s*[:=]\s*['\"]?[A-Za-z0-9/+=]{40}",
    r"\bsk-ant-[A-Za-z0-9_\-]{20,}",  # Anthropic
    r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}",  # OpenAI
    r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,}\b",  # GitHub tokens
    r"\bgithub_pat_[A-Za-z0-9_]{40,}\b",
    r"\bxox[baprs]-[A-Za-z0-9\-]{10,}",  # Slack
    r"\bAIza[0-9A-Za-z_\-]{35}\b",  # Google API key
))

# Environment variables whose *values* must never be sent anywhere.
_SECRET_ENV_NAME = re.compile(r"(?i)(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL)")
_MIN_SECRET_LEN = 8  # shorter values ("1", "true") would redact ordinary words


class Redactor:
    """Replaces credential-shaped strings and known secret values with `[REDACTED]`."""

    def __init__(self, known_secrets: Iterable[str | None] = (), environ: Mapping[str, str] | None = None) -> None:
        env = os.environ if environ is None else environ
        values = {v for v in known_secrets if v and len(v) >= _MIN_SECRET_LEN}
        values.update(v for k, v in env.items() if _SECRET_ENV_NAME.search(k) and len(v) >= _MIN_SECRET_LEN)
        # Longest first, so a key containing another secret is blanked whole.
        self._values = sorted(values, key=len, reverse=True)

    def redact(self, text: str) -> str:
        for value in self._values:
            if value in text:
                text = text.replace(value, REDACTED)
        for pattern in SECRET_PATTERNS:
            text = pattern.sub(REDACTED, text)
        return text
