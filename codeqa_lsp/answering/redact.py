"""Last line of defence before text leaves the machine: blank out anything secret-shaped.

The scanner keeps secret *files* (`.env`, keys, certificates) out of the index, but a key
pasted into ordinary source, or the user's own API key / environment values appearing in
code or in the question, must not be sent to a provider either. Everything that goes into a
prompt passes through `Redactor.redact`; the shapes are the shared table in
`codeqa_lsp.secret_shapes` (also used by the scanner, the remote embedder and the log filter).
"""

from __future__ import annotations

from codeqa_lsp.secret_shapes import REDACTED, Redactor

__all__ = ["REDACTED", "Redactor"]
