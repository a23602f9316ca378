"""What in a pasted bug report is evidence, and what is boilerplate.

Issue texts carry parts that name many rare words and say nothing about where the bug is:
the template's HTML comments, a `pip list` / `pip freeze` / `conda list` of the reporter's
environment, a "plugins: a-1.0, b-2.3" line. Their package names are rare in any repository,
so a term picker that ranks by IDF takes them first: on SWE-bench Lite pytest-7490 (an xfail
regression), a 300-line `pip list` put `doc/en/conf.py`, `requirements.txt` and the docs'
Makefile in the top 5. They are removed before terms are picked.

The first line of a multi-line pasted text is its title: the reporter's one-sentence summary
("`--recursive=y` ignores `ignore-paths`"), so its words weigh more (`query.py`).
"""

from __future__ import annotations

import re

from codeqa_lsp.index.tokens import tokenize

_HTML_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
# One package per line: `name 1.2.3 [location]` (pip list, conda list, `tool --version`
# output) or `name==1.2.3` (pip freeze, requirements). A version has at least one dot, so a
# code line such as `return 2` is never taken for one.
_PACKAGE_ROW = re.compile(
    r"^\s*[A-Za-z0-9][\w.\-\[\]]*"
    r"(?:\s+\(?v?\d+\.\d+[\w.+\-!]*\)?(?:\s.*)?|\s*(?:==|===|~=|>=|@)\s*\S+\s*)$"
)
# A versioned name inside a line: `xdist-1.29.0`, `pluggy-0.13.1`.
_VERSIONED_NAME = re.compile(r"\b[A-Za-z][\w.]*-v?\d+\.\d+[\w.+]*")
# Package rows count as an environment listing only in a run of at least this many lines:
# one `pytest 6.0.1` line in prose is a fact about the report, a table of them is not.
MIN_LISTING_ROWS = 3
# A line naming at least this many versioned packages is a plugin or dependency list.
MIN_VERSIONED_NAMES = 3


def strip_boilerplate(text: str) -> str:
    """`text` without HTML comments, package listings and versioned-name lists (lines are
    removed whole; everything else is kept verbatim, in order)."""
    text = _HTML_COMMENT.sub("", text)
    lines = text.splitlines()
    drop = [len(_VERSIONED_NAME.findall(line)) >= MIN_VERSIONED_NAMES for line in lines]
    run_start = None
    for i, line in enumerate([*lines, ""]):
        if i < len(lines) and _PACKAGE_ROW.match(line):
            if run_start is None:
                run_start = i
            continue
        if run_start is not None and i - run_start >= MIN_LISTING_ROWS:
            for j in range(run_start, i):
                drop[j] = True
        run_start = None
    return "\n".join(line for line, gone in zip(lines, drop, strict=True) if not gone)


def title_terms(text: str) -> set[str]:
    """The tokens of the first non-empty line, when the text has more than one line."""
    lines = [line for line in text.strip().splitlines() if line.strip()]
    if len(lines) < 2:
        return set()
    return set(tokenize(lines[0]))
