"""The chunk: the unit that is indexed, retrieved and cited."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Literal

ChunkKind = Literal["function", "method", "class", "module", "section"]


def chunk_id(path: str, symbol: str, text: str) -> str:
    """Deterministic id: the same definition with the same text keeps its id across runs,
    so re-indexing unchanged code re-embeds nothing."""
    digest = hashlib.sha256()
    for part in (path, symbol, text):
        digest.update(part.encode("utf-8", "surrogatepass"))
        digest.update(b"\x00")
    return digest.hexdigest()[:24]


@dataclass(frozen=True, slots=True)
class Chunk:
    """One function, method, class skeleton, module block or doc section.

    Lines are 1-based and inclusive; bytes are offsets into the UTF-8 file (end exclusive).
    `path` is workspace-relative with `/` separators.
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

    @property
    def id(self) -> str:
        return chunk_id(self.path, self.symbol + (f"#{self.part}" if self.parts > 1 else ""), self.text)

    @property
    def name(self) -> str:
        """The last component of the symbol (`Class.method` → `method`)."""
        return self.symbol.rsplit(".", 1)[-1]

    def embed_text(self) -> str:
        """What the embedder sees: a header anchoring file and name, then the code."""
        return f"{self.path} · {self.symbol} · {self.kind}\n{self.text}"
