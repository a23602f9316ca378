"""What git says about a workspace: repository identity, commits, and what differs.

The shared index is keyed by repository identity and commit. The identity must be the same
on the CI machine that publishes and on every laptop that reads, whatever the clone URL
scheme, so it is the origin remote normalised to `host/owner/name`, or, for a repository
without a remote, its first commit (the same in every clone).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

# How far back from HEAD to look for a published commit (newest first). A feature branch
# older than this many commits past its base simply gets no shared snapshot.
MAX_ANCESTORS = 2000
GIT_TIMEOUT_SECONDS = 20


class GitError(RuntimeError):
    """git is missing or the directory is not a usable repository."""


def _git(root: Path, *args: str) -> str:
    try:
        done = subprocess.run(
            ["git", "-C", str(root), *args],
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_SECONDS,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise GitError(f"git {args[0]} failed: {exc}") from None
    if done.returncode != 0:
        raise GitError(f"git {' '.join(args[:2])}: {done.stderr.strip() or 'failed'}")
    return done.stdout


def normalise_remote(url: str) -> str:
    """`git@github.com:Org/Repo.git`, `https://user@github.com/org/repo` → `github.com/org/repo`."""
    url = url.strip()
    url = re.sub(r"^[a-z+]+://", "", url, flags=re.IGNORECASE)
    url = re.sub(r"^[^@/]*@", "", url)  # user (and any token) before the host
    url = re.sub(r"^([^/:]+):(?!\d+/)", r"\1/", url)  # scp-like host:path
    url = re.sub(r"^([^/:]+):\d+/", r"\1/", url)  # a port
    url = re.sub(r"\.git/?$", "", url).rstrip("/")
    return url.lower()


def repo_identity(root: Path) -> str:
    try:
        remote = _git(root, "config", "--get", "remote.origin.url").strip()
    except GitError:
        remote = ""
    if remote:
        return normalise_remote(remote)
    first = _git(root, "rev-list", "--max-parents=0", "HEAD").split()
    if not first:
        raise GitError("repository has no commits")
    return f"root:{sorted(first)[0]}"


def toplevel(root: Path) -> Path:
    return Path(_git(root, "rev-parse", "--show-toplevel").strip())


def resolve(root: Path, ref: str) -> str:
    return _git(root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}").strip()


def ancestors(root: Path, limit: int = MAX_ANCESTORS) -> list[str]:
    """HEAD and its ancestors, nearest first: the first one published is the nearest
    shared snapshot (for a branch, the merge-base with the published branch or older)."""
    return _git(root, "rev-list", f"--max-count={int(limit)}", "HEAD").split()


def dirty_tracked(root: Path) -> list[str]:
    out = _git(root, "status", "--porcelain", "-z", "--untracked-files=no")
    return [entry[3:] for entry in out.split("\0") if entry]


def changed_since(root: Path, commit: str) -> set[str]:
    """Paths (relative to the repository top) that differ between `commit` and the working
    tree: modified, added, deleted, and untracked files git does not ignore."""
    diff = _git(root, "diff", "--name-only", "--no-renames", "-z", commit, "--")
    untracked = _git(root, "ls-files", "--others", "--exclude-standard", "-z")
    return {p for p in (diff + untracked).split("\0") if p}
