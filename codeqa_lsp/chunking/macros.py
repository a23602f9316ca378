"""C/C++ macros that tree-sitter cannot expand, blanked for the parser.

tree-sitter parses C and C++ without a preprocessor, so a macro where the grammar expects a
keyword or a type (an export marker between `class` and the name, an inline marker before a
function's return type, a `noexcept` marker after its parameters) makes it misparse the
definition, and the chunker then names it after the macro or loses it. The parser gets the
file with those macros replaced by spaces, byte for byte (`parsed_bytes`); names and chunk
texts are still read from the real bytes at the same positions.
"""

from __future__ import annotations

import re

# `class SPDLOG_API logger {`: an export macro between the keyword and the name makes
# tree-sitter read a function `logger` whose body is statements, so the class's methods are
# lost (`bool f() const {...}` does not parse as a statement). The parser gets the macro
# blanked out, byte for byte, so every position (and every chunk's text, cut from the real
# bytes) is unchanged. Libraries mark their public classes this way: `Q_CORE_EXPORT`,
# `DLL_API`, spdlog's `SPDLOG_API`.
_EXPORT_MACRO = re.compile(
    rb"\b(?:class|struct|union)\s+([A-Z_][A-Z0-9_]*)\s+(?=[A-Za-z_]\w*\s*(?:final\s*)?[:{])"
)
# The same in a function's declaration specifiers: `SPDLOG_INLINE spdlog::logger
# *default_logger_raw() {`, `void SPDLOG_INLINE base_sink<Mutex>::flush() {`, `FMT_CONSTEXPR
# void do_check_arg_id(...)`. Read as a type, the macro made tree-sitter misparse the
# signature, and 26 of spdlog's 2,256 definitions were named like
# `SPDLOG_INLINEspdlog.sinks.base_sink.flush` (so "where is default_logger_raw defined" found
# nothing). A macro here is an ALL_CAPS word with an underscore, among the words that start
# a line and lead (across line breaks: `void SPDLOG_INLINE\nbase_sink<M>::set_formatter(`)
# to a name and its `(`; a macro called with arguments is left alone.
# Read a line at a time, with no pattern that can backtrack over the file: a hostile file of
# 80 KB of `A_B ` took 14 s with a single regex (`^...(?=[...\s]*[\w>]\s*\()`).
_LEADING_MACRO = re.compile(
    rb"[ \t]*(?:[\w:<>*&]+[ \t]+){0,6}?([A-Z][A-Z0-9]*_[A-Z0-9_]*[A-Z0-9])(?=[ \t]|$)"
)
_SIGNATURE_HEAD = re.compile(rb"[\w:<>~*&, \t]*")
MAX_SIGNATURE_LINE = 300
# And after the parameters: `bool empty() const SPDLOG_NOEXCEPT {`, `size_t size() const
# FMT_NOEXCEPT;` (spdlog's `source_loc.empty` was named `SPDLOG_NOEXCEPT`).
_TRAILING_MACRO = re.compile(
    rb"\)[ \t]*(?:(?:const|volatile|noexcept|override|final)[ \t]+)*"
    rb"([A-Z][A-Z0-9]*_[A-Z0-9_]*[A-Z0-9])(?=\s*(?:[{;:=]|->|override\b|final\b))"
)
# A macro alone on its line: `FMT_BEGIN_NAMESPACE` / `FMT_END_EXPORT` (which open and close
# namespaces and export blocks), Qt's `Q_OBJECT`. The parser read `FMT_END_EXPORT\n\nnamespace
# detail {` as a function named `namespace` whose body swallowed 160 lines: fmt's base.h had
# nine chunks named `namespace`, and `named_arg` was `namespace.named_arg` (user pass over
# fmtlib/fmt). An ALL_CAPS name with an underscore, not a call: a call alone on its line
# often stands for a statement the code needs parsed around it (spdlog's
# `SPDLOG_LOGGER_CATCH(msg.source)` closes a `try`; blanking it lost `async_logger.sink_it_`).
_LONE_MACRO = re.compile(rb"[ \t]*([A-Z][A-Z0-9]*_[A-Z0-9_]*[A-Z0-9])[ \t]*(?://[^\n]*)?\r?")
_MACRO_LANGUAGES = frozenset({"c", "cpp"})


def parsed_bytes(data: bytes, language: str) -> bytes:
    """`data` as the parser should read it: for C and C++, the macros above as spaces, so
    every byte keeps its position and every chunk's text is still cut from the real bytes."""
    if language not in _MACRO_LANGUAGES:
        return data
    for macro in (_EXPORT_MACRO, _TRAILING_MACRO):
        if macro.search(data):
            data = macro.sub(_blank_group, data)
    spans = _declaration_macros(data)
    if spans:
        blanked = bytearray(data)
        for start, end in spans:
            blanked[start:end] = b" " * (end - start)
        data = bytes(blanked)
    return data


def _declaration_macros(data: bytes) -> list[tuple[int, int]]:
    """Byte spans of the macros among a signature's leading words: a line (at most
    `MAX_SIGNATURE_LINE` bytes) whose first words end in an ALL_CAPS macro, followed on the
    same line, or alone on it and then on the next, by a name and its `(`; and of a macro
    alone on its line (`_LONE_MACRO`)."""
    spans = []
    lines = data.split(b"\n")
    offset = 0
    for row, line in enumerate(lines):
        short = len(line) <= MAX_SIGNATURE_LINE
        alone = _LONE_MACRO.fullmatch(line) if short else None
        match = None if alone is not None or not short else _LEADING_MACRO.match(line)
        if alone is not None:
            spans.append((offset + alone.start(1), offset + alone.end(1)))
        elif match is not None:
            rest = line[match.end() :]
            if not rest.strip() and row + 1 < len(lines):
                rest = lines[row + 1][:MAX_SIGNATURE_LINE]
            paren = rest.find(b"(")
            head = rest[:paren].rstrip() if paren > 0 else b""
            if head and _SIGNATURE_HEAD.fullmatch(head) and head[-1:] not in b" \t,:<*&~":
                spans.append((offset + match.start(1), offset + match.end(1)))
        offset += len(line) + 1
    return spans


def _blank_group(match: re.Match[bytes]) -> bytes:
    """The match with its group 1 (the macro) as spaces: every byte keeps its position."""
    start, end = match.start(1) - match.start(), match.end(1) - match.start()
    return match.group(0)[:start] + b" " * (end - start) + match.group(0)[end:]
