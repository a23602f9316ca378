"""Confining an agent's paths to the workspace root, and keeping secret files out of reach.

An agent's arguments are untrusted input: a tool call may name `../../etc/passwd`, an
absolute path elsewhere, a symlink leading out of the tree, or `.env`. Every path a tool
receives goes through `resolve_file` (or `normalize_glob` for a filter) before anything
is read, and the answer is a clear, one-line refusal rather than a partial result.

The secret rules are the scanner's own (`chunking.secret_rules`, via `WorkspaceFilter` and
`read_source`): one table of secret shapes for the whole product.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from codeqa_lsp.chunking.ignore import WorkspaceFilter
from codeqa_lsp.chunking.scanner import Skip, SourceFile, read_source
from codeqa_lsp.chunking.secret_rules import secret_content_rule, secret_name_rule
from codeqa_lsp.config import Settings


class ToolInputError(ValueError):
    """A tool argument the server refuses (outside the root, a secret, no such file...).

    The message is shown to the agent as is: one line, naming the argument, never content."""


# Reasons a file is not indexed that mean "you may not see it", not just "not indexed".
_SECRET_REASONS = frozenset({"secret-name", "secret-content"})


@dataclass(frozen=True)
class ResolvedFile:
    rel_path: str  # workspace-relative, '/' separators
    source: SourceFile  # the file's text, cleared by the scanner's content rules


def relative_to_root(root: Path, raw: str) -> str:
    """`raw` (absolute, or relative to the root) as a workspace-relative path.

    Raises ToolInputError when it points outside the root, after resolving `..` and
    symlinks, so `src/../../x` and a link to `/etc` are refused alike."""
    text = raw.strip()
    if not text:
        raise ToolInputError("path is empty")
    if "\x00" in text:
        raise ToolInputError("path contains a NUL character")
    candidate = Path(text).expanduser()
    absolute = candidate if candidate.is_absolute() else root / candidate
    try:
        resolved = absolute.resolve()
    except (OSError, RuntimeError) as exc:  # a symlink loop
        raise ToolInputError(f"cannot resolve path {text!r}: {type(exc).__name__}") from None
    if not resolved.is_relative_to(root):
        raise ToolInputError(f"path {text!r} is outside the workspace root {root}; refused")
    rel = resolved.relative_to(root).as_posix()
    return "" if rel == "." else rel


def resolve_file(
    root: Path, raw: str, settings: Settings, workspace_filter: WorkspaceFilter
) -> ResolvedFile:
    """A workspace file an agent may read: inside the root, not a secret, readable text.

    Ignored and unsupported files are refused too, with the scanner's reason: the tools
    answer about the indexed code, and an ignored file is one the user chose to keep out."""
    rel = relative_to_root(root, raw)
    if not rel:
        raise ToolInputError(f"{raw!r} is the workspace root, not a file")
    if not (root / rel).is_file():
        raise ToolInputError(f"no such file in the workspace: {rel}")
    if secret_name_rule(rel) is not None:
        raise ToolInputError(f"{rel} is a secrets file (name rule); it is never read or returned")
    reason = workspace_filter.skip_reason(rel)
    if reason is not None:
        raise ToolInputError(f"{rel} is not indexed ({reason}); refused")
    source = read_source(root, rel, settings)
    if isinstance(source, Skip):
        if source.reason in _SECRET_REASONS:
            raise ToolInputError(f"{rel} holds secret-shaped content; it is never read or returned")
        raise ToolInputError(f"{rel} is not indexed ({source.reason}); refused")
    return ResolvedFile(rel, source)


def normalize_glob(root: Path, raw: str | None) -> str | None:
    """A path filter (a directory, file or gitignore-style glob) as a root-relative glob.

    Globs never touch the disk, but `../x` or an absolute path outside the root is still
    refused: silently returning nothing would read as "no such code"."""
    if raw is None or not raw.strip():
        return None
    text = raw.strip().replace("\\", "/")
    if text.startswith(("/", "~")):
        # The literal directory part must be inside the root; the glob part is kept as is.
        cut = min((text.find(c) for c in "*?[" if c in text), default=len(text))
        prefix = text if cut == len(text) else text[:cut].rsplit("/", 1)[0]
        rest = text[len(prefix) :]
        rel = relative_to_root(root, prefix or "/")
        text = ((rel + rest) if rel else rest.lstrip("/")) or "*"
    if ".." in PurePosixPath(text).parts:
        raise ToolInputError(f"path filter {raw!r} leaves the workspace root; refused")
    return text


def is_secret(rel_path: str, text: str) -> bool:
    """Defence in depth for results: a secret file name or key-shaped content."""
    return secret_name_rule(rel_path) is not None or secret_content_rule(text) is not None
