"""Delegates: top-level functions that only forward to the method of the same name.

Go packages expose a default instance through package functions that forward to it
(viper's `func AutomaticEnv() { v.AutomaticEnv() }`, pflag's `func Int64P(...) { return
CommandLine.Int64P(...) }`, go-retryablehttp's `Post`, zap's globals), and Python and
JavaScript modules do the same. Such a function repeats its target's name, parameters and
often its doc comment, so it matches a question as well as the method that does the work, and
the pair takes two of the top five. Like a declaration (`graph._declarations_below_
implementations`), a delegate whose target is also a candidate goes just below it, and at
most to half its own score: the places after the target are for other code
(`graph.delegates_below_targets`, applied to the second stage's ranking by
`graph.delegates_placed`, after the priors: a thin target weighs less than its delegate).

The target must be a method. A function of the same name elsewhere is not reliably the
target: CoSQA's snippets forward to library functions (`def dumps(obj): return
json.dumps(obj)`) and share names with unrelated snippets; with functions as targets CoSQA
dev hybrid nDCG@10 fell 0.5997 -> 0.5968, with methods only it is unchanged. A delegate
whose target is no candidate keeps its place (validator's `containsAny` forwards to the
standard library's `strings.ContainsAny`: it is the implementation there).

Measured 2026-11-27 (local, same session): in a user pass over viper (not an evaluation
set) `Viper.Sub` 2 -> 1, `Viper.getEnv` 4 -> 2, `getConfigManager` 5 -> 3, `Viper.writeConfig`
9 -> 7, `Viper.find` from outside the first 20 to 20th (the package functions `AutomaticEnv`
and `SetEnvPrefix` had held 2 of the top 4 beside their methods); the 100 questions (local
and hash), the tryout, CoSQA, SWE-bench and five more user passes rank identically.
"""

from __future__ import annotations

import re

from codeqa_lsp.chunking.model import Chunk
from codeqa_lsp.retrieval.priors import DECLARATION_PRIOR

# A delegate's score at most this share of its own once its target is a candidate: the
# prior a declaration gets.
DELEGATE_SHARE = DECLARATION_PRIOR
# Lines that say nothing: comments, and a Python docstring's lines.
_COMMENT_LINE = re.compile(r"^\s*(?://|#|/\*|\*)")
_DOCSTRING = re.compile(r'("""|\'\'\')[\s\S]*?\1')
# One call statement, its value returned or not: `receiver.name(args)` (also `::`, `->`).
_FORWARD = re.compile(
    r"^\s*(?:return\s+)?(?:await\s+)?[\w$]+(?:(?:\.|::|->)[\w$]+)*(?:\.|::|->)([\w$]+)\s*\(.*\)"
    r"\s*;?\s*$"
)
_CLOSERS = frozenset({"}", "end", "};"})
# A delegate is a few lines (doc comments aside); anything longer is read no further, which
# also bounds the regular expressions' work on a hostile chunk.
_MAX_LINES = 12
_MAX_CHARS = 4000


def forwards_to(chunk: Chunk) -> str | None:
    """The name a top-level function only forwards to, when it is its own name; else None."""
    if chunk.kind != "function" or "." in chunk.symbol or chunk.declaration:
        return None
    # Cheap tests first (a search reads every candidate): short, and its name said twice.
    if len(chunk.text) > _MAX_CHARS or chunk.text.count(chunk.name) < 2:
        return None
    text = _DOCSTRING.sub("", chunk.text) if chunk.language == "python" else chunk.text
    lines = [line for line in text.split("\n") if line.strip() and not _COMMENT_LINE.match(line)]
    if len(lines) == 1 and "{" in lines[0] and lines[0].rstrip().endswith("}"):  # one line
        head, _, rest = lines[0].partition("{")
        lines = [head, rest.rstrip()[:-1], "}"]
    if len(lines) > _MAX_LINES or len(lines) < 2 or chunk.name not in lines[0]:
        return None
    body = lines[1:-1] if lines[-1].strip() in _CLOSERS else lines[1:]
    if len(body) != 1:
        return None
    match = _FORWARD.match(body[0])
    return chunk.name if match and match.group(1) == chunk.name else None
