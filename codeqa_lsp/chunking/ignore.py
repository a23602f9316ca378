"""Which workspace paths are indexed: ignore files, globs, default excludes, secret names.

`WorkspaceFilter.skip_reason(rel_path)` answers for one file and is cheap enough to call on
every save: parsed ignore files are cached per directory, and directory verdicts are cached
so a file deep in the tree costs one lookup per ancestor. Rules, first match wins:

1. default excludes (`default-excluded`): VCS and tool directories, dependency and build
   output (`node_modules`, virtualenvs, `dist`, `build`, `target`, `vendor`...; a `build`,
   `dist`, `coverage` or `target` that is a Python or Go package is source), minified
   bundles, lock files, generated-code file names;
2. secret file names (`secret-name`): `.env*`, `*.pem`, `*.key`, `id_rsa*`, ... (see
   `secret_rules`), checked before any user rule so an include glob cannot pull them in;
3. `settings.exclude` globs, then `settings.include` globs when any are set (`excluded`);
4. `.gitignore` and `.codeqaignore` in every directory from the root down, with
   `.git/info/exclude` under the root's (`ignored`); deeper files and later lines win,
   `!negations` work as in git, and nothing inside an ignored directory comes back;
5. not a language we index (`unsupported`).

Call `invalidate()` after an ignore file changes.
"""

from __future__ import annotations

import fnmatch
import logging
import os
import re
import threading
from pathlib import Path

import pathspec

from codeqa_lsp.chunking.languages import language_for_path
from codeqa_lsp.chunking.secret_rules import secret_name_rule
from codeqa_lsp.config import Settings

logger = logging.getLogger(__name__)

IGNORE_FILES = (".gitignore", ".codeqaignore")
DEFAULT_EXCLUDED_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".bzr",
        "node_modules",
        "bower_components",
        "jspm_packages",
        "__pycache__",
        ".venv",
        "venv",
        ".virtualenv",
        "virtualenv",
        ".tox",
        ".nox",
        ".eggs",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".hypothesis",
        ".ipynb_checkpoints",
        "site-packages",
        "dist",
        "build",
        "target",
        ".next",
        ".nuxt",
        ".svelte-kit",
        ".gradle",
        ".idea",
        ".vscode-test",
        ".cache",
        "coverage",
        "htmlcov",
        ".terraform",
        "vendor",
        "third_party_vendored",
        ".codeqa",
        ".yarn",
        ".pnpm-store",
        # Generated sites and docs: Jekyll's `_site` (immer's held its rendered README, which
        # led "how are changes recorded as patches"; user pass), Sphinx's and Elixir's
        # `_build`, Docusaurus's cache, Nuxt's and Turborepo's output.
        "_site",
        "_build",
        ".docusaurus",
        ".output",
        ".turbo",
    }
)
# Output directories by convention that are also the names of real packages: kept when the
# directory is a Python or Go package (`WorkspaceFilter._source_package`).
SOURCE_PACKAGE_NAMES = frozenset({"build", "dist", "coverage", "target"})
DEFAULT_EXCLUDED_FILES: tuple[str, ...] = (
    "*.min.js",
    "*.min.css",
    "*.min.mjs",
    "*.bundle.js",
    "*-bundle.js",
    "*.map",
    "package-lock.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "poetry.lock",
    "pipfile.lock",
    "cargo.lock",
    "gemfile.lock",
    "composer.lock",
    "go.sum",
    "uv.lock",
    "pdm.lock",
    "*.lock",
    "*_pb2.py",
    "*_pb2_grpc.py",
    "*.pb.go",
    "*.pb.cc",
    "*.pb.h",
    "*.g.dart",
    "*.generated.*",
    "*.designer.cs",
    "*.d.ts.map",
)
_DEFAULT_FILE_RE = re.compile("|".join(fnmatch.translate(g) for g in DEFAULT_EXCLUDED_FILES))


def _globs(patterns: tuple[str, ...]) -> pathspec.PathSpec | None:
    if not patterns:
        return None
    return pathspec.GitIgnoreSpec.from_lines(patterns)


class WorkspaceFilter:
    """Decides, per workspace-relative `/` path, whether it is indexed and if not, why."""

    def __init__(self, root: Path, settings: Settings):
        self.root = Path(root)
        self.settings = settings
        self._exclude = _globs(settings.exclude)
        self._include = _globs(settings.include)
        self._specs: dict[str, list[pathspec.GitIgnoreSpec]] = {}
        self._dir_verdicts: dict[str, str | None] = {}
        self._lock = threading.Lock()

    def invalidate(self) -> None:
        """Forget cached ignore files and verdicts (an ignore file changed)."""
        with self._lock:
            self._specs.clear()
            self._dir_verdicts.clear()

    def skip_reason(self, rel_path: str) -> str | None:
        """Why this file is not indexed, or None if it is."""
        rel = normalize_rel(rel_path)
        parent, _, name = rel.rpartition("/")
        reason = self.dir_skip_reason(parent) if parent else None
        if reason is None:
            reason = self._file_reason(rel, name)
        return reason

    def dir_skip_reason(self, rel_dir: str) -> str | None:
        """Why a directory (and so everything under it) is not walked, or None."""
        rel = normalize_rel(rel_dir)
        if not rel:
            return None
        cached = self._dir_verdicts.get(rel, False)
        if cached is not False:
            return cached  # type: ignore[return-value]
        # Iterative from the top: deep trees must not recurse, and an ignored ancestor
        # decides for everything below it.
        parts = rel.split("/")
        reason: str | None = None
        for depth in range(1, len(parts) + 1):
            prefix = "/".join(parts[:depth])
            known = self._dir_verdicts.get(prefix, False)
            if known is False:
                known = (
                    reason if reason is not None else self._own_dir_reason(prefix, parts[depth - 1])
                )
                with self._lock:
                    self._dir_verdicts[prefix] = known
            reason = known  # type: ignore[assignment]
        return reason

    def _own_dir_reason(self, rel: str, name: str) -> str | None:
        excluded = name in DEFAULT_EXCLUDED_DIRS and not self._source_package(rel, name)
        if excluded or name.endswith(".egg-info"):
            return self._log(rel, "default-excluded", f"directory {name}")
        if os.path.isfile(self.root / rel / "pyvenv.cfg"):  # never raises, unlike Path.is_file
            return self._log(rel, "default-excluded", "virtualenv (pyvenv.cfg)")
        if self._exclude is not None and self._exclude.match_file(rel + "/"):
            return self._log(rel, "excluded", "settings.exclude")
        if self._ignored(rel + "/"):
            return self._log(rel, "ignored", "ignore file")
        return None

    def _source_package(self, rel: str, name: str) -> bool:
        """An output directory's name on a package of the project's own source: coverage.py's
        `coverage/`, pypa/build's `src/build/`, a Go package `internal/build/` (their whole
        source was left out). Build output is not a Python package and holds no Go source."""
        if name not in SOURCE_PACKAGE_NAMES:
            return False
        directory = self.root / rel
        if os.path.isfile(directory / "__init__.py"):
            return True
        try:
            with os.scandir(directory) as entries:
                return any(e.name.endswith(".go") and e.is_file() for e in entries)
        except OSError:
            return False

    def _file_reason(self, rel: str, name: str) -> str | None:
        lower = name.lower()
        if _DEFAULT_FILE_RE.match(lower):
            return self._log(rel, "default-excluded", "built-in file pattern")
        rule = secret_name_rule(rel)
        if rule is not None:
            return self._log(rel, "secret-name", f"secret file name {rule}", level=logging.INFO)
        if self._exclude is not None and self._exclude.match_file(rel):
            return self._log(rel, "excluded", "settings.exclude")
        if self._include is not None and not self._include.match_file(rel):
            return self._log(rel, "excluded", "not in settings.include")
        if self._ignored(rel):
            return self._log(rel, "ignored", "ignore file")
        if language_for_path(rel) is None:
            return "unsupported"  # the common case for assets: not worth a log line
        return None

    def _ignored(self, rel: str) -> bool:
        """Git semantics: the deepest ignore file with a matching line decides."""
        parts = rel.rstrip("/").split("/")
        for depth in range(len(parts) - 1, -1, -1):
            base = "/".join(parts[:depth])
            specs = self._specs_for(base)
            if not specs:
                continue
            sub = rel[len(base) + 1 :] if base else rel
            for spec in reversed(specs):
                result = spec.check_file(sub)
                if result.include is not None:
                    return bool(result.include)
        return False

    def _specs_for(self, base: str) -> list[pathspec.GitIgnoreSpec]:
        cached = self._specs.get(base)
        if cached is not None:
            return cached
        directory = self.root / base if base else self.root
        sources = [directory / name for name in IGNORE_FILES]
        if not base:
            sources.insert(0, self.root / ".git" / "info" / "exclude")
        specs = []
        for source in sources:
            try:
                text = source.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            specs.append(pathspec.GitIgnoreSpec.from_lines(text.splitlines()))
        with self._lock:
            self._specs[base] = specs
        return specs

    def _log(self, rel: str, reason: str, rule: str, level: int = logging.DEBUG) -> str:
        logger.log(level, "skip %s: %s (%s)", rel, reason, rule)
        return reason


def normalize_rel(rel_path: str) -> str:
    """`/`-separated relative path. A backslash is a separator only on Windows: elsewhere it
    is an ordinary file-name character (`a\\b.py` is one file, not `a/b.py`; it used to be
    counted as "vanished")."""
    rel = rel_path.replace("\\", "/") if os.sep == "\\" else rel_path
    return rel.strip("/")


def is_within(root: Path, target: str | os.PathLike[str]) -> bool:
    """Whether a resolved path lies inside the resolved root."""
    try:
        Path(target).resolve().relative_to(Path(root).resolve())
    except (ValueError, OSError, RuntimeError):
        return False
    return True
