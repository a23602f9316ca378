"""What counts as a secret: file names that hold credentials, and key shapes in content.

Only high-confidence rules: a false positive drops a source file from the index, so every
content pattern is a vendor's documented key format with a distinctive prefix and length,
not an entropy guess. Matching never returns the secret itself, only the rule's name, so
callers can log why a file was skipped without leaking what was found.
"""

from __future__ import annotations

import fnmatch
import re

# Lower-cased basename globs.
SECRET_NAME_GLOBS: tuple[str, ...] = (
    ".env", ".env.*", "*.env", "*.pem", "*.key", "id_rsa*", "id_dsa*", "id_ecdsa*",
    "id_ed25519*", "*.p12", "*.pfx", "*.jks", "*.keystore", ".netrc", "_netrc", ".npmrc",
    ".pypirc", ".git-credentials", ".htpasswd", "credentials*", "*.kdbx",
)
_NAME_RE = re.compile("|".join(fnmatch.translate(glob) for glob in SECRET_NAME_GLOBS))

# (rule name, pattern). Prefixes are checked with `in` first: cheap on every file.
_CONTENT_RULES: tuple[tuple[str, str, re.Pattern[str]], ...] = (
    ("private-key", "-----BEGIN ",
     re.compile(r"-----BEGIN (?:RSA |DSA |EC |OPENSSH |PGP |ENCRYPTED )?PRIVATE KEY(?: BLOCK)?-----")),
    ("aws-access-key", "A",
     re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b")),
    ("anthropic-key", "sk-ant-",
     re.compile(r"\bsk-ant-[a-z]{2,8}\d{0,3}-[A-Za-z0-9_\-]{32,}")),
    ("openai-key", "sk-",
     re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{32,}")),
    ("github-token", "gh",
     re.compile(r"\bgh[pousr]_[A-Za-z0-9]{36,255}\b")),
    ("github-token", "github_pat_",
     re.compile(r"\bgithub_pat_[A-Za-z0-9_]{22,255}\b")),
)
# Published placeholder keys (AWS documentation) that appear in ordinary code and docs.
_PLACEHOLDER = re.compile(r"EXAMPLE|XXXXXXXX|xxxxxxxx|0000000000|\.\.\.")


def secret_name_rule(rel_path: str) -> str | None:
    """The glob a path's file name matches, if it names a credentials file."""
    name = rel_path.rsplit("/", 1)[-1].lower()
    if not _NAME_RE.match(name):
        return None
    return next(glob for glob in SECRET_NAME_GLOBS if fnmatch.fnmatchcase(name, glob))


def secret_content_rule(text: str) -> str | None:
    """The name of the first secret rule the text matches, else None."""
    for rule, prefix, pattern in _CONTENT_RULES:
        if prefix not in text:
            continue
        for match in pattern.finditer(text):
            value = match.group(0)
            if rule == "private-key":
                return rule
            if _PLACEHOLDER.search(value) or not _looks_random(value, rule):
                continue
            return rule
    return None


def _looks_random(value: str, rule: str) -> bool:
    """Real tokens mix digits and letters; `sk-this-is-not-a-key-...` or `sk-` followed by a
    CSS class name does not."""
    tail = value.split("-", 2)[-1] if rule != "aws-access-key" else value[4:]
    has_digit = any(c.isdigit() for c in tail)
    has_alpha = any(c.isalpha() for c in tail)
    if rule == "aws-access-key":
        return has_digit and has_alpha
    has_upper = any(c.isupper() for c in tail)
    has_lower = any(c.islower() for c in tail)
    return has_digit and has_alpha and ((has_upper and has_lower) or rule == "github-token")
