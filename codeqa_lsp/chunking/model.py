"""The chunk: the unit that is indexed, retrieved and cited."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Literal

from codeqa_lsp.chunking.overloads import implementation_text

# Languages whose functions may open with bodiless overload signatures (`overloads.py`).
OVERLOADING_LANGUAGES = frozenset({"typescript", "tsx"})

ChunkKind = Literal["function", "method", "class", "module", "section"]
# The kinds that run code when called (a definition with a body of statements).
FUNCTION_KINDS: frozenset[str] = frozenset({"function", "method"})


def chunk_id(path: str, symbol: str, text: str) -> str:
    """Deterministic id: the same definition with the same text keeps its id across runs,
    so re-indexing unchanged code re-embeds nothing."""
    digest = hashlib.sha256()
    for part in (path, symbol, text):
        digest.update(part.encode("utf-8", "surrogatepass"))
        digest.update(b"\x00")
    return digest.hexdigest()[:24]


def estimate_tokens(text: str) -> int:
    """Cheap, deterministic token estimate: ~4 characters per token for code and prose.

    Used for every budget (chunk size, prompt context) so all parts of the pipeline agree.
    """
    return (len(text) + 3) // 4


@dataclass(frozen=True, slots=True)
class Chunk:
    """One function, method, class skeleton, module block or doc section.

    Lines are 1-based and inclusive; bytes are offsets into the UTF-8 file (end exclusive).
    `path` is workspace-relative with `/` separators. `text` is exactly the file's bytes
    start_byte..end_byte, except for a class skeleton (method bodies elided, their signatures
    kept) and a module chunk packing several top-level runs (joined with blank lines).
    Parts of a split definition share `symbol`; `part`/`parts` number them.
    `declaration` and `refs` are derived from the code, so they do not enter the id.
    """

    path: str
    symbol: str
    kind: ChunkKind
    language: str
    start_line: int
    end_line: int
    start_byte: int
    end_byte: int
    text: str
    signature: str = ""
    doc: str = ""
    part: int = 0  # index of this piece when a large definition is split
    parts: int = 1
    # Only declares what another chunk implements (stub, overload, abstract): ranked lower.
    declaration: bool = False
    # Calls and imports inside this chunk (`chunking/references.py`): the call graph's edges.
    refs: tuple[str, ...] = ()
    # Derived from the fields above once, at construction (also by `dataclasses.replace`):
    # a search reads each candidate's id several times, and hashing the text each time was
    # a measurable share of a query.
    _id: str = field(init=False, repr=False, compare=False, default="")

    def __post_init__(self) -> None:
        suffix = f"#{self.part}" if self.parts > 1 else ""
        object.__setattr__(self, "_id", chunk_id(self.path, self.symbol + suffix, self.text))

    @property
    def id(self) -> str:
        return self._id

    @property
    def name(self) -> str:
        """The last component of the symbol (`Class.method` → `method`)."""
        return self.symbol.rsplit(".", 1)[-1]

    def embed_text(self) -> str:
        """What the embedder sees: a header anchoring file and name, then the code.

        A later part of a split definition does not start with the signature, so the header
        carries it: every part is anchored to what it belongs to. Measured against variants
        (bench/results/ablation-embed-header.json, 2026-11-25): without the path, without
        the kind, with the symbol spelled as words, or with a method's class summary, the
        100 questions lose 0.01-0.07 hybrid hit@5 and CoSQA gains nothing.

        The code goes in with its punctuation. Without it (2026-11-25, ffn-int8, same
        session) click/src embeds 41% fewer tokens (679 texts instead of 813), but CoSQA
        dense nDCG@10 falls 0.598 -> 0.555 and the 100 questions' hybrid MRR@10 0.748 ->
        0.701 (hit@5 0.86 -> 0.87); dropping only brackets, colons and commas (-16% tokens):
        CoSQA 0.581, hybrid 0.84 / 0.697.
        """
        header = f"{self.path} · {self.symbol} · {self.kind}"
        if self.part > 0 and self.signature:
            header += f"\n{self.signature}"
        text = self.text
        if self.language in OVERLOADING_LANGUAGES and self.kind in FUNCTION_KINDS:
            # Overload signatures first would fill the embedder's window (`overloads.py`).
            text = implementation_text(text)
        return f"{header}\n{text}"
