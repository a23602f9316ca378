"""Answer cache (diskcache, size-bounded) and the optional local question log.

Keys cover everything an answer depends on: what was asked, exactly which chunks (by id,
which hashes path, symbol and text) were in the prompt, the provider and model, and the
prompt version. A cached entry holds the model's raw text; citations are re-verified on
every hit, so a cached answer still reports a file that changed since as stale.

A cache that cannot be opened or written (read-only disk, corruption) is logged and then
ignored: caching is an optimisation, never a reason to fail an answer.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import diskcache

from codeqa_lsp.chunking.model import Chunk

log = logging.getLogger("codeqa_lsp.answering")

# Bump when prompts change in a way that should invalidate cached answers.
PROMPT_VERSION = 1
QUESTION_LOG = "questions.jsonl"


def cache_key(kind: str, subject: str, chunks: Sequence[Chunk], provider: str, model: str) -> str:
    payload = json.dumps(
        [PROMPT_VERSION, kind, " ".join(subject.split()), [c.id for c in chunks], provider, model],
        ensure_ascii=False,
    )
    return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()


class AnswerStore:
    """Lazily opened answer cache under `<index_dir>/answers`, plus `questions.jsonl`."""

    def __init__(self, index_dir: Path, size_limit: int, log_questions: bool) -> None:
        self.index_dir = index_dir
        self.size_limit = size_limit
        self.log_questions = log_questions
        self._cache: diskcache.Cache | None = None
        self._broken = False
        self._lock = threading.Lock()

    def _open(self) -> diskcache.Cache | None:
        with self._lock:
            if self._cache is None and not self._broken:
                try:
                    self._cache = diskcache.Cache(
                        str(self.index_dir / "answers"),
                        size_limit=self.size_limit,
                        eviction_policy="least-recently-used",
                    )
                except Exception as exc:
                    self._broken = True
                    log.warning("answer cache disabled: %s", exc)
            return self._cache

    def get(self, key: str) -> dict[str, Any] | None:
        cache = self._open()
        if cache is None:
            return None
        try:
            value = cache.get(key)
        except Exception as exc:
            log.warning("answer cache read failed: %s", exc)
            return None
        return value if isinstance(value, dict) else None

    def put(self, key: str, value: dict[str, Any]) -> None:
        cache = self._open()
        if cache is None:
            return
        try:
            cache.set(key, value)
        except Exception as exc:
            log.warning("answer cache write failed: %s", exc)

    def log_question(self, record: dict[str, Any]) -> None:
        """Append one JSON line for the user's own evaluation (only if `logQuestions`)."""
        if not self.log_questions:
            return
        record = {"time": time.time(), **record}
        try:
            with self._lock, (self.index_dir / QUESTION_LOG).open("a", encoding="utf-8") as out:
                out.write(json.dumps(record, ensure_ascii=False) + "\n")
        except OSError as exc:
            log.warning("question log write failed: %s", exc)

    def close(self) -> None:
        with self._lock:
            if self._cache is not None:
                self._cache.close()
                self._cache = None
