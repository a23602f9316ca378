"""What counts as a secret: file names that hold credentials, and key shapes in content.

Content shapes live in the one shared table (`codeqa_lsp.secret_shapes`); the scanner uses
only its high-confidence (`skip_file`) shapes: a false positive drops a source file from the
index. Matching never returns the secret itself, only the rule's name, so callers can log
why a file was skipped without leaking what was found.
"""

from __future__ import annotations

import fnmatch
import re

from codeqa_lsp.chunking.languages import has_grammar, language_for_path
from codeqa_lsp.secret_shapes import first_file_secret

# Lower-cased basename globs.
SECRET_NAME_GLOBS: tuple[str, ...] = (
    ".env",
    ".env.*",
    "*.env",
    "*.pem",
    "*.key",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    "*.p12",
    "*.pfx",
    "*.jks",
    "*.keystore",
    ".netrc",
    "_netrc",
    ".npmrc",
    ".pypirc",
    ".git-credentials",
    ".htpasswd",
    "credentials*",
    "*.kdbx",
)
_NAME_RE = re.compile("|".join(fnmatch.translate(glob) for glob in SECRET_NAME_GLOBS))


def secret_name_rule(rel_path: str) -> str | None:
    """The glob a path's file name matches, if it names a credentials file.

    Source code the chunker parses is judged by its content only: `credentials*` is the
    name of the AWS CLI's key file and of many a `credentials.json`, and also of
    google-auth's and botocore's `credentials.py` and every `CredentialsProvider.java`,
    which were left out of the index whole. A key pasted into such a file is still caught
    by `secret_content_rule`."""
    name = rel_path.rsplit("/", 1)[-1].lower()
    if not _NAME_RE.match(name) or has_grammar(language_for_path(name) or ""):
        return None
    return next(glob for glob in SECRET_NAME_GLOBS if fnmatch.fnmatchcase(name, glob))


def secret_content_rule(text: str) -> str | None:
    """The name of the first high-confidence secret shape the text holds, else None."""
    return first_file_secret(text)
