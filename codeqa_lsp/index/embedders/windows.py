"""Windows: what the embedder reads of a chunk longer than its window.

MiniLM reads 256 tokens; a definition may run to 1,500 (`chunk_tokens`), so the dense arm
saw only the first sixth of a long method. A chunk longer than the window gets extra
vectors for its later windows (the chunk's header line, then the text from token
`w × WINDOW_STRIDE` on), and the dense arm scores the chunk by its best window
(`vectors.py`). Chunks that fit have one vector, as before.

Measured on the 100 questions (local, 2026-11-25, same session, one run per variant; extra
tokens embedded for the four sets' 3,388 chunks, which take 472k tokens in one window each;
estimated from token counts, the chosen row counted exactly: 1,443 windows, 308k tokens):

| windows per chunk, stride | dense hit@5 / MRR@10 | hybrid hit@5 / MRR@10 | extra tokens |
|---|---|---|---|
| 1 (before) | 0.53 / 0.367 | 0.84 / 0.682 | 0 |
| 2, stride 200 | 0.60 / 0.401 | 0.84 / 0.695 | 150k |
| 3, stride 200 | 0.68 / 0.461 | 0.85 / 0.705 | 243k |
| 4, stride 200 (chosen) | 0.68 / 0.485 | 0.85 / 0.717 | 308k |
| 8, stride 200 | 0.68 / 0.482 | 0.85 / 0.708 | 414k |
| 3, stride 240 | 0.63 / 0.436 | 0.85 / 0.697 | 214k |
| 4, stride 240 | 0.62 / 0.441 | 0.86 / 0.703 | 262k |

A chunk's vectors averaged into one instead (4 windows, stride 200): dense 0.65 / 0.444,
hybrid 0.83 / 0.721; the best window is the better score. Windows overlap by 56 tokens so a
statement cut at one window's end is whole in the next.

Tried, not landed (2026-11-26, ffn-int8): no later windows for class and module chunks,
whose later windows mostly repeat signatures their members' own chunks carry. click/src
embeds 99 long chunks' windows instead of 133 and indexes 9.5% faster (10.5-10.9 s against
11.7-12.2 s, three alternating clean runs); the 100 questions move from 0.86 / 0.748 to
0.87 / 0.738 hybrid (dense 0.68 / 0.475). MRR lost as much as hit@5 gained, and SWE-bench,
where a class's whole file is the answer, was not re-measured; the windows stay per chunk.
"""

from __future__ import annotations

from collections.abc import Sequence

WINDOWS = 4  # vectors per chunk at most: its own and three later windows
WINDOW_STRIDE = 200  # tokens between window starts
# A later window with fewer tokens left than this adds nothing the previous one lacks.
MIN_WINDOW_TOKENS = 22


def window_starts(tokens: int, window: int) -> list[int]:
    """Token positions where the later windows of a text of `tokens` tokens start."""
    if tokens <= window:
        return []
    starts = []
    for w in range(1, WINDOWS):
        start = w * WINDOW_STRIDE
        if start + MIN_WINDOW_TOKENS >= tokens:
            break
        starts.append(start)
    return starts


def window_texts(text: str, offsets: Sequence[tuple[int, int]], window: int) -> list[str]:
    """`text` and the texts of its later windows: the first line (the chunk's header:
    path, symbol, kind) followed by the text from each window's first token on. `offsets`
    are the (start, end) characters of each token of `text`, special tokens included."""
    header = text.split("\n", 1)[0]
    starts = window_starts(len(offsets), window)
    return [text, *(f"{header}\n{text[offsets[start][0] :]}" for start in starts)]
