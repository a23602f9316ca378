"""Cutting a run of lines into budget-sized, overlapping parts at the best boundaries.

Everything that gets split (oversized definitions, module code, class skeletons, docs) is a
sequence of *elements* (usually lines) with a size in estimated tokens and a *break cost*:
how bad it is to start a new part at that element. Statement starts found by tree-sitter
cost 0-5, headings 0-6, other lines are scored by indentation (outer lines are better cut
points) with a penalty for closers and continuations (`}`, `)`, `else`, `.then(`).

The planner is greedy and linear: each part takes as much as fits the budget, then cuts at
the cheapest boundary in its second half (latest on ties); the next part starts a little
earlier, at the cheapest boundary within the overlap allowance (~15% of the budget), so
consecutive parts share context.

Token estimate: bytes / 4. Code and prose average 3.5-4.5 bytes per BPE token; the budget is
a soft size target, so a cheap, deterministic, monotone estimate beats an exact tokenizer.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from codeqa_lsp.chunking.model import estimate_tokens

OVERLAP_RATIO = 0.15
BYTES_PER_TOKEN = 4
_CLOSER_CHARS = frozenset(b"})].?:")
_WORD_CLOSER_STARTS = frozenset(b"ecf")
_WORD_CLOSER = re.compile(rb"(?:else|elif|except|catch|finally|end)\b")


@dataclass(frozen=True, slots=True)
class Lines:
    """Byte offsets of every line start in a file, for row ↔ byte conversion."""

    data: bytes
    starts: list[int]

    @classmethod
    def of(cls, data: bytes) -> Lines:
        # numpy finds the newlines in C: a per-line Python loop was a tenth of chunking time.
        newlines = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 10) + 1
        return cls(data, [0, *newlines.tolist()])

    @property
    def count(self) -> int:
        """Lines in the file, a final line without newline included (empty file: 1)."""
        if len(self.starts) > 1 and self.starts[-1] == len(self.data):
            return len(self.starts) - 1
        return len(self.starts)

    def row_of(self, byte: int) -> int:
        return bisect_right(self.starts, byte) - 1

    def row_start(self, row: int) -> int:
        return self.starts[row] if row < len(self.starts) else len(self.data)

    def row_end(self, row: int) -> int:
        """End of `row` including its newline."""
        return self.starts[row + 1] if row + 1 < len(self.starts) else len(self.data)


class Element(NamedTuple):
    """A cuttable unit: bytes [start, end) on rows start_row..end_row. (A tuple: there is one
    per line of everything that gets split, and tuples are the cheapest records.)"""

    start: int
    end: int
    start_row: int
    end_row: int
    cost: int


def byte_tokens(size: int) -> int:
    """`estimate_tokens` for a byte span: rounded up, so parts planned from byte sizes never
    exceed the budget once decoded (a character is at least one byte)."""
    return (size + BYTES_PER_TOKEN - 1) // BYTES_PER_TOKEN


MINIFIED_MIN_BYTES = 20_000
MINIFIED_AVG_LINE = 500


def looks_minified(data: bytes, line_count: int | None = None) -> bool:
    """Minified or bundled code: at least 20 kB with lines averaging over 500 bytes."""
    if len(data) < MINIFIED_MIN_BYTES:
        return False
    count = line_count if line_count is not None else data.count(b"\n") + 1
    return len(data) / max(1, count) > MINIFIED_AVG_LINE


def line_cost(line: bytes, previous_blank: bool) -> int:
    """Break cost of starting a part at this line, from its shape alone."""
    stripped = line.lstrip(b" \t")
    if not stripped.strip():
        return 45
    cost = 10 + min(len(line) - len(stripped), 30)
    first = stripped[0]
    if (
        first in _CLOSER_CHARS
        or stripped.startswith((b"&&", b"||"))
        or (first in _WORD_CLOSER_STARTS and _WORD_CLOSER.match(stripped))
    ):
        cost += 30  # a closer or a continuation: the statement started above
    if previous_blank:
        cost -= 6
    return cost


def line_elements(
    lines: Lines, start: int, end: int, budget: int, structural: dict[int, int] | None = None
) -> list[Element]:
    """Elements for bytes [start, end): one per line, lines over the budget cut into windows.

    `structural` maps rows where a statement starts to a cost that overrides the shape cost.
    """
    data, starts = lines.data, lines.starts
    elements: list[Element] = []
    first_row, last_row = lines.row_of(start), lines.row_of(max(start, end - 1))
    window = max(64, budget * BYTES_PER_TOKEN)
    previous_blank = True
    row_count, size = len(starts), len(data)
    for row in range(first_row, last_row + 1):  # hot loop: plain indexing, no method calls
        line_start = starts[row]
        line_end = starts[row + 1] if row + 1 < row_count else size
        line_start = max(line_start, start)
        line_end = min(line_end, end)
        if line_end <= line_start:
            continue
        line = data[line_start:line_end]
        cost = structural.get(row) if structural else None
        if cost is None:
            cost = line_cost(line, previous_blank)
        previous_blank = not line.strip()
        if line_end - line_start <= window:
            elements.append(Element(line_start, line_end, row, row, cost))
            continue
        # A line longer than the whole budget (minified code): cut inside it, preferring a
        # space or punctuation, never inside a UTF-8 sequence.
        pos = line_start
        while pos < line_end:
            cut = min(line_end, pos + window)
            if cut < line_end:
                cut = _soft_cut(data, pos, cut)
            elements.append(Element(pos, cut, row, row, cost if pos == line_start else 90))
            pos = cut
    return elements


def _soft_cut(data: bytes, lo: int, hi: int) -> int:
    floor = lo + (hi - lo) * 3 // 4
    for sep in (b"\n", b" ", b";", b",", b"}"):
        found = data.rfind(sep, floor, hi)
        if found != -1:
            return found + 1
    cut = hi
    while cut > lo + 1 and (data[cut] & 0xC0) == 0x80:
        cut -= 1
    return cut


def plan(sizes: list[int], costs: list[int], budget: int, overlap: int) -> list[tuple[int, int]]:
    """Split elements into parts [i, j) of at most `budget` (unless one element is larger).

    Costs index the element a part would start at. Deterministic and O(n) amortised.
    """
    n = len(sizes)
    cum = [0] * (n + 1)
    for index, size in enumerate(sizes):
        cum[index + 1] = cum[index] + size
    parts: list[tuple[int, int]] = []
    i = 0
    while i < n:
        k_max = max(bisect_right(cum, cum[i] + budget) - 1, i + 1)
        if k_max >= n:
            parts.append((i, n))
            break
        lo = min(max(bisect_left(cum, cum[i] + budget // 2), i + 1), k_max)
        cut = min(range(lo, k_max + 1), key=lambda k: (costs[k], -k))
        parts.append((i, cut))
        next_start = cut
        s_lo = max(bisect_left(cum, cum[cut] - overlap), i + 1)
        if overlap > 0 and s_lo < cut:
            next_start = min(range(s_lo, cut), key=lambda k: (costs[k], k))
        i = next_start
    return parts


def split_elements(
    elements: list[Element], budget: int, sizes: list[int] | None = None
) -> list[tuple[int, int]]:
    """Plan parts over elements; returns (first, last_exclusive) element index pairs.

    `sizes` (tokens) overrides the byte-span size, for elements whose text is rewritten
    (a skeleton's member signature stands for the member's whole span)."""
    if sizes is None:
        sizes = [byte_tokens(e.end - e.start) for e in elements]
    costs = [e.cost for e in elements]
    return plan(sizes, costs, budget, int(budget * OVERLAP_RATIO))


__all__ = ["Element", "Lines", "estimate_tokens", "line_elements", "plan", "split_elements"]
