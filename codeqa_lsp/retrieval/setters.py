"""A setter gives way to the code that reads what it sets.

An option's setter carries the option's documentation (walkdir's `WalkDir::contents_first`:
"Yield a directory's contents before the directory itself"; commons-cli's
`setAllowPartialMatching`; jsoup's `OutputSettings.prettyPrint`), so a question about the
behaviour the option controls ranks the setter first, while the code that behaves
(`IntoIter::get_deferred_dir`, which reads `opts.contents_first`) shares few of the
question's words and sits far below: in five user passes (600 blind probes over 50
repositories, not an evaluation set), 21 of the 277 probes not answered first had a setter of
the answer's field above the answer.

So the best candidate that reads the field a setter among the first `WITHIN` results sets
moves just above that setter; when the question asks how to do something ("how do I ...",
"how to ..."), the setter is the answer and the reader goes just below it instead. A setter
is a short function or method named after the one field of its own object it assigns
(`self.x`, `this.x`, `@x`, a Go receiver's or functional option's `v.x`; named `set_x`,
`SetX`, `withX`, `x`); a reader is a function or method of more than `MIN_READER_LINES`
lines of code that names the field other than to assign or initialise it, is not named after
it (a getter, another setter) and is library code: a test calling the setter by the field's
name is no reader (the tryout's gson question about NaN had lost its first place to one).

Measured (2026-11-27, local, same session; every user pass, 1,400 blind probes over 133
repositories, first / top 5): 685 / 1,125 -> 702 / 1,132 (the reader always below its
setter: 685 / 1,132); 40 probes move, 15 of them down, each by one place, under a reader
moved above them. The 100 questions (local and hash, every arm) and CoSQA rank identically;
the tryout's two linenoise completion questions 2 -> 1 (`completeLine` reads the callback
`linenoiseSetCompletionCallback` sets); `WITHIN` 3 gives the same. Before a setter had to set
its own object's field, CoSQA's `disable_stdout_buffering` (`sys.stdout = ...`) counted as one
and "python disable output buffer" lost its first place (0.5997 -> 0.5990).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from codeqa_lsp.chunking.code_text import code_lines
from codeqa_lsp.chunking.model import FUNCTION_KINDS, Chunk
from codeqa_lsp.retrieval.priors import chunk_kind
from codeqa_lsp.retrieval.query import asks_how_to

# Setters looked for among the first results; readers among the first CANDIDATES.
WITHIN = 5
CANDIDATES = 50
# A setter's body: at most this many lines of code (the assignment, a `return this`).
MAX_SETTER_LINES = 4
# A reader does something with the field: more than a getter's one line.
MIN_READER_LINES = 3
# Field names shorter than this (`x`, `on`) are too common to follow.
MIN_FIELD = 4

# `self.opts.field =`, `this.field =`, `v.field =` (the receiver's), `@field =`, and a bare
# `field = value;` (a Java or C# field). The first group is the path's root: the object's own
# (`self`, `this`, a Go receiver), not a module's (`sys.stdout = ...` sets no option).
_ASSIGNMENT = re.compile(
    r"(?:\b([A-Za-z_$][\w$]*)(?:\.[A-Za-z_$][\w$]*)*\.|(@))([A-Za-z_$][\w$]*)\s*=(?![=>])"
    r"|^\s*([A-Za-z_$][\w$]*)\s*=(?![=>])[^;\n]*;\s*$",
    re.MULTILINE,
)
_OWN = frozenset({"self", "this", "cls", "@"})
# Go's receiver (`func (v *Viper) SetEnvPrefix(...)`) or a functional option's one parameter
# (`return func(v *Validate) { v.privateFieldValidation = true }`).
_GO_RECEIVER = re.compile(r"\bfunc\s*\(\s*(\w+)\s+\*?[\w.]+\s*\)")
_SETTER_PREFIX = re.compile(r"^(?:set|with)(?=[A-Z_])|^(?:set|with)_", re.IGNORECASE)


def _normal(name: str) -> str:
    """`m_allowPartialMatching`, `_allow_partial_matching` -> `allowpartialmatching`."""
    return re.sub(r"^(?:m_|_+)", "", name).replace("_", "").lower()


def set_field(chunk: Chunk) -> str | None:
    """The field a short setter named after it assigns, or None."""
    if chunk.kind not in FUNCTION_KINDS or chunk.declaration or "=" not in chunk.text:
        return None
    lines = code_lines(chunk.text, chunk.language)
    body = lines[1:]
    if not body or len(body) > MAX_SETTER_LINES:
        return None
    own = _OWN | {m.group(1) for line in lines for m in _GO_RECEIVER.finditer(line)}
    fields = set()
    for m in _ASSIGNMENT.finditer("\n".join(body)):
        root, at, member, bare = m.groups()
        if bare or (root or at) in own:
            fields.add(member or bare)
        else:
            return None  # it sets something else's state
    if len(fields) != 1:
        return None
    field = fields.pop()
    name = _normal(_SETTER_PREFIX.sub("", chunk.symbol.rsplit(".", 1)[-1]))
    wanted = _normal(field)
    if len(field) < MIN_FIELD or len(name) < MIN_FIELD:
        return None
    return field if name in wanted or wanted in name else None


def _reads(chunk: Chunk, field: str, pattern: re.Pattern[str]) -> bool:
    if chunk.kind not in FUNCTION_KINDS or chunk.declaration or field not in chunk.text:
        return False  # the text is read before it is parsed
    if chunk_kind(chunk) != "source":  # a test using the option is no code behaving by it
        return False  # (gson's NaN test calling `serializeSpecialFloatingPointValues()`)
    name = _normal(chunk.symbol.rsplit(".", 1)[-1])
    if _normal(field) in name:  # the getter, or another setter of it
        return False
    lines = code_lines(chunk.text, chunk.language)
    return len(lines) > MIN_READER_LINES and any(pattern.search(line) for line in lines[1:])


def readers_lead_setters(
    ranked: Sequence[tuple[Chunk, float]], query: str
) -> list[tuple[Chunk, float]]:
    """`ranked` with the best reader of each top setter's field moved just above it, or just
    below it when the question asks how to do something."""
    out = list(ranked)
    how_to = asks_how_to(query)
    for chunk, score in list(out[:WITHIN]):
        field = set_field(chunk)
        if field is None:
            continue
        # Named, not assigned or initialised (`field = x`, `field: x` in a struct literal). A
        # call reads it too (jsoup's `settings.prettyPrint()`, linenoise's `completionCallback()`).
        pattern = re.compile(rf"(?<![\w$]){re.escape(field)}(?![\w$])(?!\s*(?:=(?!=)|:(?!:)))")
        place = next(i for i, (c, _) in enumerate(out) if c.id == chunk.id)
        reader = next(
            (
                i
                for i, (c, _) in enumerate(out[:CANDIDATES])
                if c.id != chunk.id and _reads(c, field, pattern)
            ),
            None,
        )
        if reader is None or reader < place:  # none, or one already leads
            continue
        moved, step = out.pop(reader)[0], 1e-6 * max(abs(score), 1e-9)
        if how_to:
            out.insert(place + 1, (moved, score - step))
        else:
            out.insert(place, (moved, score + step))
    return out
