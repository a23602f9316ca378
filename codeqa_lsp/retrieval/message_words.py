"""The words of a quoted or pasted message, as literal evidence reads them: one definition for
the word runs of `literals.py` and the format strings of `formats.py`."""

from __future__ import annotations

import re

# A quoted string of one or two words is usually a name (a setting such as 'trust proxy',
# a header such as 'content-type') that many chunks use, and one without a space is a flag
# or a path ('--shout/--no-shout'); three or more words with spaces between them are a
# message that one place in the code writes. A format string needs as many fixed words
# (`"%s: %s"` points at no writer).
MIN_MESSAGE_WORDS = 3
# A number runs into its unit in output (`Task timed out after 5000ms`, written
# `${options.timeout}ms` in p-queue; user pass, not an evaluation set): the number is a
# runtime value (`literals._written`), the unit is written by the code. Letters then digits
# stay one word (`utf8`, `sha256`).
WORD = re.compile(r"[a-z]+[0-9]*|[0-9]+")
