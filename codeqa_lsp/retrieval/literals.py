"""Literal evidence: a message the question quotes, or an error it says is raised.

Users paste what they saw: "where does 'No default engine was specified' come from?",
"when does a Subject throw ObjectUnsubscribedError?". The code that answers holds that
message verbatim, or a `raise X` / `throw new X` statement, while BM25 and the embedder see
only a bag of common words (and the exception's own class definition, which names X best,
is not where it is raised). So:

* a quoted message of at least `MIN_MESSAGE_WORDS` words counts for a chunk by the runs of
  its words (two or more) the chunk's text holds in order, as a share of the message (0..1;
  `...` in the quote splits it into fragments, the way users elide runtime values; a value
  formatted into the middle of a message splits the user's copy the same way, `_covered`),
  or by a format string of the chunk's that matches it, placeholders and all (`formats.py`);
* a question that asks where or when a named, capitalised identifier is raised or thrown
  counts for each chunk that raises or throws it, and the identifier's own definition is not
  boosted as a named symbol for that question (`search.py`).

Pure functions over text; the searcher lifts chunks that hold the literal's words into the
candidates and the second stage (`rerank.py`) weighs the score. A pasted error line counts as
a quoted message.

Questions only, not pasted issues (long queries): SWE-bench Lite dev with the hash embedder
(2026-11-25, same session), literals on for issues too: Acc@5 0.812 = 0.812, Acc@1 0.583 vs
0.562, Acc@3 0.750 vs 0.771, MRR 0.692 vs 0.687; one issue up (rank 2 → 1), one down
(2 → 4). Not a gain, so issue texts, which quote code and output everywhere, go without.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from itertools import pairwise

from codeqa_lsp.retrieval.formats import format_share
from codeqa_lsp.retrieval.message_words import MIN_MESSAGE_WORDS
from codeqa_lsp.retrieval.message_words import WORD as _WORD

# The share of a message's words a chunk must hold in one run to count: a message's last
# word is often pluralised or formatted ('argument(s)' against `argument ({args})`).
MIN_RUN_SHARE = 0.75
# A runtime value at either end of what the user saw (a class, a path, a key) is not in the
# code and can be most of a short message: moshi writes `"$messagePrefix requires explicit
# JsonAdapter to be registered"`, the user saw `Platform class java.util.Date requires
# explicit JsonAdapter to be registered` and the throw site held 6 of its 11 words. So a
# share of MIN_LONG_RUN_SHARE counts too when one run is this many words long.
LONG_RUN_WORDS = 5
MIN_LONG_RUN_SHARE = 0.5

# How close (in words) a raise/throw verb must be to the identifier it is about: "where is
# TooManyRedirects raised", "does a Subject throw ObjectUnsubscribedError", but not "...
# thrown, and how does it switch to a fallback instead of erroring with TimeoutError".
RAISE_WINDOW = 3
# How many raise sites of one error a question can mean: each raiser counts fully up to this
# many among the candidates, then by (COMMON_RAISERS / raisers)². Found in a user's pass over
# marshmallow (not an evaluation set): "where is ValidationError raised for an unknown
# field" put five validators' `raise ValidationError` (of 31 in the package) above the code
# handling unknown fields. Squared because the credit is added to fused scores about a
# rank's gap apart: at 12 raisers a linear quarter still lifted every raise site above the
# code the rest of the question names (tests/retrieval/test_literals.py). The evaluation
# sets' raise questions name errors raised in one or two places.
COMMON_RAISERS = 3

_QUOTED = re.compile(
    r"(?<![\w'])'([^'\n]{3,200})'(?![\w'])|\"([^\"\n]{3,200})\"|[‘“]([^’”\n]{3,200})[’”]"
)
# A pasted error line, `TypeError: Router.use() requires a middleware function but got a
# Object`, the last line of a traceback, a JVM's `Exception in thread "main" a.b.C$DError: ...`
# or `Caused by: ...`, PHP's `Symfony\Component\Yaml\Exception\ParseException: ...`: its
# message is what the raising code writes, and its type was raised. A longer line gives its
# first 300 characters: attrs's `ValueError: No mandatory attributes allowed after ...` ends in
# a 400-character repr of the attribute, and was no message at all (user pass, not an
# evaluation set; `_transform_attrs`, which raises it, ranked 15th).
_ERROR_LINE = re.compile(
    r"^[ \t]*(?:Exception in thread \"[^\"\n]*\"[ \t]+|Caused by:[ \t]+)?"
    r"(?:\w+[.$\\])*(?P<type>[A-Z]\w*(?:Error|Exception|Warning))"
    r"(?:[ \t]*\[[A-Z][A-Z0-9_]*\])?\s*:\s*(?P<message>\S[^\n]{8,300})[^\n]*$",
    re.MULTILINE,
)
# A qualified type's line, whatever its name ends in: Ruby's `HTTParty::RedirectionTooDeep:
# HTTP redirects too deep` (user pass, not an evaluation set), Python's `requests.exceptions.
# InvalidURL: ...` outside a traceback. The qualifier says the name is a type's; a `::` is
# the qualifier's, not the line's colon (`Rack::QueryParser::ParamsTooDeepError` names a constant).
_QUALIFIED_ERROR_LINE = re.compile(
    r"^[ \t]*(?:[A-Za-z_]\w*(?:::|\\|\.))+(?P<type>[A-Z]\w*)\s*:(?!:)\s*"
    r"(?P<message>\S[^\n]{8,300})[^\n]*$",
    re.MULTILINE,
)
# A runtime's report of an uncaught error, its message on the line after the header:
# libstdc++'s `terminate called after throwing an instance of 'YAML::ParserException'` then
# `  what():  yaml-cpp: error at line 7, column 12: the referenced anchor is not defined: x`
# (the type was raised), and Rust's since 1.73, `thread 'main' panicked at src/style.rs:168:9:`
# then the panic's message. Neither line reads as a message alone, so neither was one: a user
# pass over yaml-cpp (not an evaluation set) ranked the `ParserException` class and its
# constructor above `SingleDocParser::LookupAnchor`, which throws the message.
_CPP_TERMINATE = re.compile(
    r"terminate called after throwing an instance of '(?:[\w:]*::)?(?P<type>[A-Za-z_]\w*)'"
    r"[ \t]*\r?\n[ \t]*what\(\):[ \t]*(?P<message>\S[^\n]{8,300})"
)
_RUST_PANIC = re.compile(
    r"thread '[^'\n]*' panicked at [^\n]*:\d+:\d+:[ \t]*\r?\n[ \t]*(?P<message>\S[^\n]{8,300})"
)
# A Python traceback's exception line, whatever its name ends in (`requests.exceptions.
# InvalidURL: Invalid URL 'x': No host supplied`): the unindented line right after a frame's
# indented lines; prose after the traceback ("Note: ...") follows no frame.
_TRACEBACK = "Traceback (most recent call last):"
_EXCEPTION_LINE = re.compile(r"(?:[\w$]+\.)*(?P<type>[A-Z]\w*)\s*:\s*(?P<message>\S.{8,300}).*")
# A CLI's or runtime's own error line, `error: unknown option '--fooo'` (commander, git,
# cargo's `error[E0382]: ...`), `Error: No default engine was specified` (a JavaScript
# `new Error(...)`), `fatal: ...`, `panic: ...`: the prefix is part of what the code writes
# (`error: unknown option '${flag}'`), so it stays in the message. Runtime values in it
# (`--fooo`) are not in the code; the prefix keeps the run long enough to count.
_PREFIXED_LINE = re.compile(
    r"^[ \t]*((?:error|fatal|panic|warning)(?:\[\w+\])?\s*:\s*\S[^\n]{8,300})[^\n]*$",
    re.MULTILINE | re.IGNORECASE,
)
# A line pasted on its own, unquoted and with no known prefix, is what the program printed:
# retrofit's `Unable to create converter for class` (written as `methodError(method, e,
# "Unable to create converter for %s", ...)`), nvm's `N/A: version "v99" is not yet
# installed.`, monolog's `The stream or file "..." could not be opened in append mode: ...`
# (user pass, not an evaluation set). It reads as output, not a question: one line that
# starts with a capital, has at least BARE_MESSAGE_WORDS words, does not end with `?` and
# does not start with a question or request word. Every question of the evaluation sets
# ends with `?` or starts in lower case (CoSQA's queries all do). Go and Rust write their
# messages in lower case (`flag needs an argument: 'n' in -n`, pflag; `mux: duplicated route
# variable "id"`): a lower-case line counts too when a word ends in a colon inside it and the
# line prints a value (quoted, a number, a path or a flag), which no question of the sets (nor
# CoSQA's keyword queries) has; prose ("the error: handling of retries is odd") has no value.
BARE_MESSAGE_WORDS = 4
_INNER_COLON = re.compile(r"\w: \S")
_PRINTED_VALUE = re.compile(r"['\"`]|\d|\w[./\\]\w|(?<!\w)--?\w")
# Or opens the way an error does, the colon joining the context to the cause: chrono's
# `failed to parse timestamp: input is not enough for unique date and time` (user pass, not
# an evaluation set; `ParseError.fmt` writes the cause; 6th, under a class's members). No
# question of the sets, the tryout or CoSQA starts so and has an inner colon.
_ERROR_OPENER = re.compile(
    r"(?:failed|cannot|can't|could not|couldn't|unable|error|invalid|unexpected|missing"
    r"|unknown|no such|bad|expected)\b",
    re.IGNORECASE,
)
_QUESTION_START = re.compile(
    r"how|what|where|why|when|which|who|whom|whose|does|do|did|is|are|was|were|can|could"
    r"|should|would|will|may|might|must|shall|has|have|had|explain|show|find|list|describe"
    r"|tell|give|please"
)
# Output of several sentences is often written by several places: phpdotenv's `Failed to
# parse dotenv file. Encountered unexpected whitespace at [foo bar].` is `Parser::parse`'s
# "Failed to parse dotenv file. %s" around the entry parser's cause; no chunk held half of
# the whole, and the parser ranked third behind two loaders (user pass, not an evaluation
# set). So each sentence of a quoted or pasted message is a message too.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")
# Go wraps an error in its callers' context, each adding a prefix and ": " (BurntSushi/toml's
# `toml: line 4 (last key "port"): Invalid integer "08080": cannot have leading zeroes`, whose
# last two segments `parser.valueInteger` writes; Python and Rust chain causes the same way).
# The context held two thirds of the words, under MIN_RUN_SHARE, and the writer ranked 7th
# (user pass, not an evaluation set). So the text after each such colon is a message too.
_CHAIN_COLON = re.compile(r"(?<=[\w'\")\]]): (?=\S)")
# What output quotes inside a message is most often a runtime value: packaging's
# `InvalidVersion: Invalid version: 'foo'` is written `f"Invalid version: {version!r}"`, and
# the value took a third of the words (two of three held, under MIN_RUN_SHARE; user pass).
_RUNTIME_VALUE = re.compile(
    r"'[^'\n]{1,80}'|\"[^\"\n]{1,80}\"|`[^`\n]{1,80}`"
    # Unquoted values of the same kind: a Ruby symbol (`:multipart`) and a qualified name
    # (`Faraday::Request`, `java.util.Date`): faraday's `Faraday::Error: :multipart is not
    # registered on Faraday::Request` is written `"#{key.inspect} is not registered on
    # #{self}"`, whose code held four of seven words (user pass, not an evaluation set).
    r"|(?<![\w:]):[a-z_]\w*|\b[A-Za-z_]\w*(?:(?:::|\.)[A-Za-z_]\w*)+"
)
# An object's repr in output is a runtime value, however many words it has: attrs's `... Attribute
# in question: Attribute(name='y', default=NOTHING, ...)` is 45 words with it and 13 without,
# and the class whose `__repr__` names those fields held more of it than `_transform_attrs`,
# which raises it (user pass, not an evaluation set). A capitalised name, `(`, `key=`.
_REPR_START = re.compile(r"\b[A-Z]\w*\(\w+=")
_RAISE_INTENT = re.compile(r"\b(?:rais(?:e|es|ed|ing)|throw(?:s|n|ing)?)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Literals:
    messages: tuple[tuple[tuple[str, ...], ...], ...]  # per message, its fragments' words
    raised: tuple[str, ...]  # said to be raised (last component), or a pasted line's type
    # The query holds a line of program output (an error line, or is one on its own): the
    # dotted words in it are values the program printed, not names the user wrote.
    pasted: bool = False
    # Per message, its words that the output quotes (`Invalid version: 'foo'`): runtime
    # values when the code does not hold them (`message_share`).
    values: tuple[frozenset[str], ...] = ()
    # The messages as the user wrote them, for the format strings that write them
    # (`formats.py`).
    texts: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.messages or self.raised)

    def prints(self, name: str) -> bool:
        """Whether pasted output printed `name` as a value (`Faraday::Request` in faraday's
        `:multipart is not registered on Faraday::Request`): a definition so named is not
        what the user asks about; the code writing the line is."""
        written = words(name)
        return self.pasted and bool(written) and any(set(written) <= v for v in self.values)

    def search_terms(self) -> list[str]:
        """Words that find chunks holding a literal (for lifting candidates)."""
        words = [w for m in self.messages for f in m for w in f]
        return list(dict.fromkeys([*words, *self.raised]))


NO_LITERALS = Literals(messages=(), raised=())


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _written(text: str) -> list[str]:
    """The words of a message that its code writes: a number in what the user saw is a
    runtime value (a status, a count, a line, a port) the code formats in. jsoup's
    `HttpStatusException: HTTP error fetching URL. Status=404` holds four of the five other
    words of `throw new HttpStatusException("HTTP error fetching URL", ...)` in a run; with
    the 404 it held four of six, under `MIN_RUN_SHARE`, and the throw site ranked 25th."""
    return [w for w in words(text) if not w.isdigit()]


def find_literals(
    query: str, identifiers: Iterable[str], defined: Callable[[str], bool] = lambda _: False
) -> Literals:
    """The quoted or pasted error messages and the raised identifiers of a query: those it
    says are raised, and the type of a pasted error line when the workspace `defined` it (a
    project's own error; `ValueError` is raised in too many places to point at one)."""
    messages: list[tuple[tuple[str, ...], ...]] = []
    values: list[frozenset[str]] = []
    written: list[str] = []
    quoted_texts = [next(g for g in m.groups() if g is not None) for m in _QUOTED.finditer(query)]
    error_lines = [(m["type"], m["message"]) for m in _ERROR_LINE.finditer(query)]
    error_lines += [
        (m["type"], m["message"])
        for m in _QUALIFIED_ERROR_LINE.finditer(query)
        if (m["type"], m["message"]) not in error_lines
    ]
    error_lines += [line for line in _traceback_error_lines(query) if line not in error_lines]
    error_lines += [(m["type"], m["message"]) for m in _CPP_TERMINATE.finditer(query)]
    pasted = [
        *(message for _, message in error_lines),
        *_PREFIXED_LINE.findall(query),
        *(m["message"] for m in _RUST_PANIC.finditer(query)),
    ]
    if not pasted and (bare := _bare_message(query)):
        pasted.append(bare)
    texts = [_without_reprs(text) for text in [*quoted_texts, *pasted]]
    texts += [cause for text in texts for cause in _wrapped_causes(text)]
    texts += [s for t in texts if len(sentences := _SENTENCE_END.split(t)) > 1 for s in sentences]
    for quoted in texts:
        pieces = [tuple(_written(piece)) for piece in re.split(r"\.\.\.|…", quoted)]
        fragments = tuple(piece for piece in pieces if piece)
        is_message = len(quoted.split()) > 1 and sum(map(len, fragments)) >= MIN_MESSAGE_WORDS
        if is_message and fragments not in messages:
            messages.append(fragments)
            written.append(quoted)
            values.append(
                frozenset(w for m in _RUNTIME_VALUE.finditer(quoted) for w in words(m[0]))
            )
    types = [error_type for error_type, _ in error_lines]
    raised = [*_raised(query, identifiers), *(t for t in types if defined(t))]
    return Literals(
        messages=tuple(messages),
        raised=tuple(dict.fromkeys(raised)),
        pasted=bool(pasted),
        values=tuple(values),
        texts=tuple(written),
    )


def _wrapped_causes(text: str) -> list[str]:
    """The text after each wrapping colon (`_CHAIN_COLON`) that still says MIN_MESSAGE_WORDS
    words without its quoted values (pflag's `flag needs an argument: 'n' in -n` ends in none)."""
    causes = [text[match.end() :] for match in _CHAIN_COLON.finditer(text)]
    return [c for c in causes if len(_written(_RUNTIME_VALUE.sub(" ", c))) >= MIN_MESSAGE_WORDS]


def _without_reprs(text: str) -> str:
    """`text` without the objects' reprs it prints (`_REPR_START` to its closing parenthesis,
    or to the end when the paste cut it off)."""
    kept: list[str] = []
    at = 0
    for match in _REPR_START.finditer(text):
        if match.start() < at:
            continue  # inside the repr just removed
        kept.append(text[at : match.start()])
        depth, end = 0, len(text)
        for i in range(text.index("(", match.start()), len(text)):
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            if depth == 0:
                end = i + 1
                break
        at = end
    return "".join(kept) + text[at:]


def _bare_message(query: str) -> str | None:
    """The query itself when it reads as a line of program output (BARE_MESSAGE_WORDS)."""
    text = query.strip()
    if "\n" in text or text.endswith("?") or len(text) > 300:
        return None
    lower_output = _INNER_COLON.search(text) and (
        _PRINTED_VALUE.search(text) or _ERROR_OPENER.match(text)
    )
    if not text[:1].isupper() and not lower_output:
        return None
    first = words(text)[:1]
    if not first or _QUESTION_START.fullmatch(first[0]) or len(text.split()) < BARE_MESSAGE_WORDS:
        return None
    return text


def _traceback_error_lines(query: str) -> list[tuple[str, str]]:
    """(type, message) of each exception line of a pasted Python traceback."""
    if _TRACEBACK not in query:
        return []
    found = []
    lines = query[query.index(_TRACEBACK) :].splitlines()
    for before, line in pairwise(lines):
        match = _EXCEPTION_LINE.fullmatch(line.rstrip())
        if match and before[:1] in (" ", "\t"):
            found.append((match["type"], match["message"]))
    return found


def _raised(query: str, identifiers: Iterable[str]) -> tuple[str, ...]:
    """Capitalised identifiers within `RAISE_WINDOW` words of a raise/throw verb."""
    pieces = query.split()
    verbs = [i for i, piece in enumerate(pieces) if _RAISE_INTENT.search(piece)]
    if not verbs:
        return ()
    raised: list[str] = []
    for ident in identifiers:
        last = ident.rsplit(".", 1)[-1]
        if not last[:1].isupper() or last in raised:
            continue
        near = (
            i
            for i, piece in enumerate(pieces)
            if re.search(rf"(?<![\w$]){re.escape(ident)}(?![\w$])", piece)
        )
        if any(abs(i - v) <= RAISE_WINDOW for i in near for v in verbs):
            raised.append(last)
    return tuple(raised)


def _covered(needle: tuple[str, ...], hay: list[str], lo: int = 0, hi: int | None = None) -> int:
    """How many of `needle`'s words `hay[lo:hi]` holds in runs, in the needle's order: the
    longest run, then the same on each side of it (the needle's words before it in the hay
    before it, those after it after it), while runs are two words or longer (or the needle
    is one word). A runtime value the code formats into the middle of its message splits the
    user's copy into runs: httpx writes `f"Invalid non-printable ASCII character in URL {key}
    component, {char!r} at position {idx}."`; the user saw `... URL path component, '\\n' at
    position 4.`. (In any order, pairs of common words anywhere in a chunk counted: CoSQA dev
    hybrid nDCG@10 0.5997 → 0.5994.)"""
    return _coverage(needle, hay, lo, hi)[0]


def _coverage(
    needle: tuple[str, ...], hay: list[str], lo: int = 0, hi: int | None = None
) -> tuple[int, int]:
    """(`_covered`'s count, the length of its longest run): one search gives both."""
    hi = len(hay) if hi is None else hi
    if not needle or lo >= hi:
        return 0, 0
    start, at, length = _longest_run_at(needle, hay, lo, hi)
    if length == 0 or (length < 2 and len(needle) > 1):
        return 0, length
    before = _covered(needle[:start], hay, lo, at)
    after = _covered(needle[start + length :], hay, at + length, hi)
    return length + before + after, length


def _longest_run_at(
    needle: tuple[str, ...], hay: list[str], lo: int, hi: int
) -> tuple[int, int, int]:
    """(start in `needle`, start in `hay`, length) of the longest run of `needle`'s words
    found consecutively in `hay[lo:hi]`."""
    best = (0, 0, 0)
    positions: dict[str, list[int]] = {}
    for i in range(lo, hi):
        positions.setdefault(hay[i], []).append(i)
    for start in range(len(needle)):
        if len(needle) - start <= best[2]:
            break
        for pos in positions.get(needle[start], ()):
            length = 1
            while (
                start + length < len(needle)
                and pos + length < hi
                and hay[pos + length] == needle[start + length]
            ):
                length += 1
            if length > best[2]:
                best = (start, pos, length)
    return best


def _raises(text: str, name: str) -> bool:
    pattern = rf"\b(?:raise|throw)\s+(?:new\s+)?(?:[\w$]+(?:\.|::|\\))*{re.escape(name)}\b"
    return re.search(pattern, text) is not None


def literal_scores(texts: Mapping[str, str], literals: Literals) -> dict[str, float]:
    """0..1 for each candidate (id → text) that holds one of the query's literals: the best
    share of a quoted or pasted message it holds (in runs of its words, or by a format string
    matching it, `formats.py`), or 1 when it raises an error the query names, except that an
    error raised by more than `COMMON_RAISERS` candidates credits each raiser with only
    `(COMMON_RAISERS / raisers)²`: being one of many raise sites says little about which one
    the question means, so the rest of its words decide."""
    raisers = {doc for doc, text in texts.items() if _raises_any(text, literals)}
    raise_credit = min(1.0, COMMON_RAISERS / len(raisers)) ** 2 if raisers else 0.0
    scores = {}
    for doc, text in texts.items():
        share = max(message_share(text, literals), format_share(text, literals.texts))
        score = max(share, raise_credit if doc in raisers else 0.0)
        if score > 0:
            scores[doc] = score
    return scores


def message_share(text: str, literals: Literals) -> float:
    """The largest share of one quoted or pasted message the text holds in runs, when it
    reaches MIN_RUN_SHARE, or MIN_LONG_RUN_SHARE with one run of LONG_RUN_WORDS; else 0."""
    best = 0.0
    if literals.messages:
        hay = words(text)
        held = set(hay)
        for index, fragments in enumerate(literals.messages):
            values = literals.values[index] if index < len(literals.values) else frozenset()
            # A quoted word the text does not hold is a value the program formatted in: out of
            # the message, as a formatted value splits it (`_covered`).
            written = [tuple(w for w in f if w not in values or w in held) for f in fragments]
            if sum(len(f) for f in written) < MIN_MESSAGE_WORDS:
                # Two words left are no message: `Unknown tag 'foo'` would be held by every
                # chunk naming `unknown_tag` (liquid, user pass), so the value stays in.
                written = list(fragments)
            total = sum(len(f) for f in written)
            coverage = [_coverage(f, hay) for f in written]
            share = sum(found for found, _ in coverage) / total
            long_run = any(longest >= LONG_RUN_WORDS for _, longest in coverage)
            if share >= MIN_RUN_SHARE or (share >= MIN_LONG_RUN_SHARE and long_run):
                best = max(best, share)
    return best


def _raises_any(text: str, literals: Literals) -> bool:
    return any(_raises(text, name) for name in literals.raised)
