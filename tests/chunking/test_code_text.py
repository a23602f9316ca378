"""`code_only`: comments and strings blanked, everything else where it was."""

from __future__ import annotations

from codeqa_lsp.chunking.code_text import code_only

SOURCE = '''def fetch(url):
    """Fetch a URL.

    Calls retry() on failure."""
    # retry() is not called here
    return retry(get, url, "retry()")
'''


def test_comments_and_strings_are_blanked_and_lines_stay_where_they_were() -> None:
    code = code_only(SOURCE, "python")
    assert len(code.encode()) == len(SOURCE.encode())
    assert code.splitlines()[5] == "    return retry(get, url, " + " " * len('"retry()"') + ")"
    # Line numbers read off the result are the source's (a multi-line docstring keeps its
    # line breaks): a use of `retry` is on line 6.
    assert [n for n, line in enumerate(code.splitlines(), 1) if "retry" in line] == [6]
    assert code_only(SOURCE, "no-such-language") == SOURCE
