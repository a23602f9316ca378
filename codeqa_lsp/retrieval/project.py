"""The project's own name, a word a question uses for the whole workspace.

"how does cobra suggest a command when the user mistypes it" asks about the project as a
whole, and the embedder reads `cobra` as the snake: `Command.SuggestionsFor`'s cosine to that
question was 0.32, outside the dense arm's top 50, where the docs generator's `hasSeeAlso`
(`*cobra.Command`) came second; the search ranked the answer 12th. Without the word the cosine
is 0.54, first in the dense arm and first in the search (user pass over spf13/cobra,
2026-11-26; the tryout's "how does cobra find which subcommand to run" 3rd → 1st). So a
question's dense arm embeds it without the project's name. BM25 keeps the word: leaving it out
there too moved the answer's BM25 rank 14 → 6 but no final rank of any set or probe.

The name is the one the project declares in a manifest at the workspace root (go.mod,
package.json, pyproject.toml, setup.cfg, Cargo.toml, a .gemspec, composer.json,
settings.gradle, pom.xml, a .sln or .slnx, CMakeLists.txt's `project()`; a multi-module
build's `-parent`/`-root` suffix dropped), never the folder's name: checkouts
are named anything (`app`, `server`, `work`), and dropping such a word would cost real
questions. Manifests are read once per searcher, at most `MAX_MANIFEST_BYTES` each, and
anything unreadable is skipped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

from codeqa_lsp.index.tokens import tokenize

MAX_MANIFEST_BYTES = 256 * 1024
# A name shorter than this (`qs`, `is`) is left in: too likely to be a word of the question.
MIN_NAME_LENGTH = 3

_GO_MODULE = re.compile(r"^module\s+(\S+)", re.MULTILINE)
_GO_MAJOR = re.compile(r"v\d+")
_SETUP_CFG_NAME = re.compile(
    r"^\[metadata\][^\[]*?^name[ \t]*=[ \t]*(\S+)", re.MULTILINE | re.DOTALL
)
_GRADLE_NAME = re.compile(r"rootProject\.name\s*=\s*['\"]([^'\"]+)['\"]")
_POM_ARTIFACT = re.compile(r"<artifactId>\s*([^<\s]+)\s*</artifactId>")
# A multi-module build names its root after the project with a conventional suffix:
# retrofit's `rootProject.name = 'retrofit-root'`, okio's `okio-parent`, gson's `gson-parent`
# (user pass: the name read as `retrofitroot`, a word no question says).
_AGGREGATOR_SUFFIX = re.compile(r"[-_.](?:parent|root|project|aggregator|build|all)$", re.I)
_CMAKE_PROJECT = re.compile(
    r"^[ \t]*project[ \t]*\([ \t]*([A-Za-z][\w-]*)", re.MULTILINE | re.IGNORECASE
)


def _text(path: Path) -> str:
    try:
        with path.open("rb") as handle:
            return handle.read(MAX_MANIFEST_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return ""


def _go_mod(text: str) -> list[str]:
    match = _GO_MODULE.search(text)
    if not match:
        return []
    parts = [p for p in match.group(1).split("/") if p]
    while parts and _GO_MAJOR.fullmatch(parts[-1]):  # github.com/x/y/v2 is y
        parts.pop()
    return parts[-1:]


def _package_json(text: str) -> list[str]:
    try:
        name = json.loads(text).get("name")
    except (ValueError, AttributeError):
        return []
    return [name.rsplit("/", 1)[-1]] if isinstance(name, str) else []  # @scope/name


def _toml_name(*sections: str) -> Callable[[str], list[str]]:
    """`name = "..."` of the first of `sections` that has one (no TOML parser: the standard
    library has one only from Python 3.11, and one key is all that is read)."""
    patterns = [
        re.compile(
            rf"^\[{re.escape(section)}\][ \t]*$(?:(?!^\[).)*?"  # within the section
            r"^name[ \t]*=[ \t]*[\"']([^\"'\n]+)[\"']",
            re.MULTILINE | re.DOTALL,
        )
        for section in sections
    ]

    def read(text: str) -> list[str]:
        for pattern in patterns:
            match = pattern.search(text)
            if match:
                return [match.group(1)]
        return []

    return read


def _pom(text: str) -> list[str]:
    """A Maven project's own `<artifactId>`: the first one outside its `<parent>` block."""
    start = text.find("<parent>")
    end = text.find("</parent>", start) if start >= 0 else -1
    own = text[:start] + text[end:] if end >= 0 else text
    match = _POM_ARTIFACT.search(own)
    return [match.group(1)] if match else []


def _regex(pattern: re.Pattern[str]) -> Callable[[str], list[str]]:
    return lambda text: [match.group(1)] if (match := pattern.search(text)) else []


_MANIFESTS: dict[str, Callable[[str], list[str]]] = {
    "go.mod": _go_mod,
    "package.json": _package_json,
    "pyproject.toml": _toml_name("project", "tool.poetry"),
    "setup.cfg": _regex(_SETUP_CFG_NAME),
    "Cargo.toml": _toml_name("package"),
    "composer.json": _package_json,  # "vendor/name", the same shape
    "settings.gradle": _regex(_GRADLE_NAME),
    "settings.gradle.kts": _regex(_GRADLE_NAME),
    "CMakeLists.txt": _regex(_CMAKE_PROJECT),
    "pom.xml": _pom,
}
# Manifests named after the project itself.
_NAMED_BY_FILE = (".gemspec", ".sln", ".slnx")


def declared_names(root: Path) -> list[str]:
    """The project names the manifests at `root` declare, as written."""
    names: list[str] = []
    for filename, read in _MANIFESTS.items():
        path = root / filename
        if path.is_file():
            names.extend(read(_text(path)))
    try:
        entries = sorted(root.iterdir())
    except OSError:
        entries = []
    names += [p.stem for p in entries if p.suffix in _NAMED_BY_FILE and p.is_file()]
    return [_AGGREGATOR_SUFFIX.sub("", name) or name for name in names]


def name_terms(root: Path) -> frozenset[str]:
    """The tokens that spell the project's name: each declared name's whole token
    (`serde_json` → `serdejson`, never its parts `serde` and `json`)."""
    terms = set()
    for name in declared_names(root):
        tokens = tokenize(name)
        if tokens and len(tokens[0]) >= MIN_NAME_LENGTH:
            terms.add(tokens[0])
    return frozenset(terms)


def text_without_name(text: str, names: frozenset[str]) -> str:
    """The question as the dense arm embeds it: without the words that spell the project's
    name, unless nothing else is left. The embedder reads `cobra` as the snake: with it,
    `Command.SuggestionsFor`'s cosine to the question above was 0.32 (not in the dense top
    50), without it 0.54 (first)."""
    if not names:
        return text
    kept = _WORD.sub(lambda m: "" if spells_name(m.group(), names) else m.group(), text)
    kept = " ".join(kept.split())
    return kept if _WORD.search(kept) else text


def spells_name(word: str, names: frozenset[str]) -> bool:
    """Whether `word` is the project's name (`cJSON`, `FastAPI`), however it is cased."""
    return bool(names) and _first_token(word) in names


_WORD = re.compile(r"[\w$]+(?:[.-][\w$]+)*")


def _first_token(word: str) -> str:
    tokens = tokenize(word)
    return tokens[0] if tokens else ""
