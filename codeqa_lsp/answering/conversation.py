"""Conversation threads: follow-up questions that remember what was asked before.

A thread is a list of turns (question, answer, the citations of that answer). Two things
make a follow-up work:

- **Retrieval** sees the earlier subject. "and where is it called from?" has no content word
  the index can match; when a question reads as a follow-up (a pronoun, a leading "and/so/
  what about", or only a couple of content words) the previous question and the symbols its
  answer cited are added to the search query. A question that names its own subject is
  searched as is, so changing the topic inside a thread does not drag the old one along.
- **The prompt** carries the recent turns (question and a trimmed answer), newest first
  until a token budget is spent, so the model can resolve "it" as well.

Threads live in one JSON file per workspace (next to its index), bounded in threads, turns
and answer length, written atomically; they stay on this machine, and the history enters a
prompt only when a model provider is configured (extractive answers use none of it).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from codeqa_lsp.answering.model import Answer
from codeqa_lsp.chunking.model import estimate_tokens
from codeqa_lsp.index.tokens import query_terms

log = logging.getLogger(__name__)

FILE_NAME = "conversations.json"
# Bounds: a long-lived workspace must not grow the file (or a slow load) without limit.
# 50 threads x 40 turns x 4 kB answers is at most ~8 MB, loaded in well under a second.
MAX_THREADS = 50
MAX_TURNS = 40
MAX_ANSWER_CHARS = 4000
# History in the prompt: a quarter of the default 6k context keeps the code the main evidence.
HISTORY_TOKENS = 1500
# A question with at most this many content words is taken as a follow-up (e.g. "and the
# tests?", "where is it called?" -> ["called"]).
FOLLOW_UP_MAX_TERMS = 2
# Symbols of the previous answer's citations added to a follow-up's search query.
FOLLOW_UP_SYMBOLS = 3

_FOLLOW_UP_START = re.compile(
    r"^\s*(and|but|so|also|then|what about|how about|why|same)\b", re.IGNORECASE
)
_PRONOUN = re.compile(
    r"\b(it|its|it's|this|that|these|those|they|them|their|there|he|she|one)\b", re.IGNORECASE
)


@dataclass
class Turn:
    question: str
    answer: str
    citations: list[dict[str, Any]]  # {number, path, startLine, endLine, symbol}
    provider: str = ""
    created: float = field(default_factory=time.time)


@dataclass
class Thread:
    id: str
    title: str
    client: str = ""
    created: float = field(default_factory=time.time)
    updated: float = field(default_factory=time.time)
    turns: list[Turn] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "client": self.client,
            "created": self.created,
            "updated": self.updated,
            "turns": len(self.turns),
        }

    def to_json(self) -> dict[str, Any]:
        return {**self.summary(), "turns": [asdict(t) for t in self.turns]}


def is_follow_up(question: str) -> bool:
    """Does `question` lean on the previous turn for its subject?"""
    return bool(
        _FOLLOW_UP_START.search(question)
        or _PRONOUN.search(question)
        or len(set(query_terms(question))) <= FOLLOW_UP_MAX_TERMS
    )


def retrieval_query(thread: Thread | None, question: str) -> str:
    """The text to search with: the question, plus the previous subject for a follow-up."""
    if thread is None or not thread.turns or not is_follow_up(question):
        return question
    last = thread.turns[-1]
    symbols: list[str] = []
    for citation in last.citations:
        symbol = citation.get("symbol")
        if isinstance(symbol, str) and symbol and symbol not in symbols:
            symbols.append(symbol)
        if len(symbols) >= FOLLOW_UP_SYMBOLS:
            break
    return " ".join([question, last.question, *symbols])


def prompt_history(thread: Thread | None, budget: int = HISTORY_TOKENS) -> str:
    """Recent turns as text for the prompt, newest kept first within `budget` tokens."""
    if thread is None:
        return ""
    parts: list[str] = []
    spent = 0
    for turn in reversed(thread.turns):
        answer = turn.answer.strip()
        if len(answer) > 1200:
            answer = answer[:1200].rsplit(" ", 1)[0] + " …"
        text = f"Q: {turn.question.strip()}\nA: {answer}"
        cost = estimate_tokens(text)
        if spent + cost > budget:
            break
        parts.append(text)
        spent += cost
    return "\n\n".join(reversed(parts))


_STORES: dict[Path, ConversationStore] = {}
_STORES_LOCK = threading.Lock()


class ConversationStore:
    """The threads of one workspace, in `<index dir>/conversations.json`. Thread-safe."""

    @classmethod
    def for_directory(cls, directory: Path) -> ConversationStore:
        """One store per file in a process: a workspace re-opened with new settings (a new
        engine `CodeBase`) must not keep a second, diverging copy of the threads."""
        key = Path(directory).resolve()
        with _STORES_LOCK:
            store = _STORES.get(key)
            if store is None:
                store = _STORES[key] = cls(key)
            return store

    def __init__(self, directory: Path) -> None:
        self.path = Path(directory) / FILE_NAME
        self._lock = threading.Lock()
        self._threads: dict[str, Thread] | None = None
        self._stamp: tuple[int, int] | None = None  # (mtime_ns, size) of the file we hold

    # -- reading ---------------------------------------------------------------------------
    def list(self, client: str | None = None) -> list[Thread]:
        """Threads, most recently updated first (only `client`'s when given)."""
        with self._lock:
            threads = list(self._load().values())
        if client:
            threads = [t for t in threads if t.client == client]
        return sorted(threads, key=lambda t: t.updated, reverse=True)

    def get(self, thread_id: str) -> Thread | None:
        with self._lock:
            return self._load().get(thread_id)

    def latest(self, client: str | None = None) -> Thread | None:
        threads = self.list(client)
        return threads[0] if threads else None

    # -- writing ---------------------------------------------------------------------------
    def new(self, title: str = "", client: str = "") -> Thread:
        thread = Thread(id=uuid.uuid4().hex[:12], title=_title(title), client=client)
        with self._lock:
            threads = self._load()
            threads[thread.id] = thread
            self._save(threads)
        return thread

    def add_turn(self, thread_id: str, turn: Turn) -> Thread | None:
        turn.answer = turn.answer[:MAX_ANSWER_CHARS]
        with self._lock:
            threads = self._load()
            thread = threads.get(thread_id)
            if thread is None:
                return None
            thread.turns = [*thread.turns, turn][-MAX_TURNS:]
            thread.updated = time.time()
            if not thread.title:
                thread.title = _title(turn.question)
            self._save(threads)
            return thread

    def clear(self, thread_id: str | None = None) -> int:
        """Delete one thread, or all of them; returns how many went."""
        with self._lock:
            threads = self._load()
            if thread_id is None:
                gone = len(threads)
                threads.clear()
            else:
                gone = 1 if threads.pop(thread_id, None) is not None else 0
            self._save(threads)
            return gone

    # -- disk ------------------------------------------------------------------------------
    def _file_stamp(self) -> tuple[int, int] | None:
        try:
            stat = self.path.stat()
        except OSError:
            return None
        return stat.st_mtime_ns, stat.st_size

    def _load(self) -> dict[str, Thread]:
        """The threads, re-read when another process (the CLI beside the editor's server)
        wrote the file since we last did, so neither overwrites the other's turns."""
        stamp = self._file_stamp()
        if self._threads is not None and stamp == self._stamp:
            return self._threads
        self._stamp = stamp
        threads: dict[str, Thread] = {}
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
            for item in raw.get("threads", []):
                turns = [Turn(**t) for t in item.pop("turns", [])]
                thread = Thread(**item, turns=turns)
                threads[thread.id] = thread
        except FileNotFoundError:
            pass
        except (OSError, ValueError, TypeError, AttributeError) as exc:
            # A damaged file must not stop questions being answered: start afresh, keep it.
            log.warning(
                "conversation history %s is unreadable (%s); starting a new one", self.path, exc
            )
            with contextlib.suppress(OSError):
                self.path.replace(self.path.with_suffix(".json.damaged"))
        self._threads = threads
        return threads

    def _save(self, threads: dict[str, Thread]) -> None:
        keep = sorted(threads.values(), key=lambda t: t.updated, reverse=True)[:MAX_THREADS]
        threads.clear()
        threads.update({t.id: t for t in keep})
        payload = json.dumps({"version": 1, "threads": [t.to_json() for t in keep]})
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(
                dir=self.path.parent, prefix=".conversations.", suffix=".tmp"
            )
        except OSError as exc:
            self._unsaved(exc)
            return
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(payload)
            os.replace(tmp, self.path)
            self._stamp = self._file_stamp()
        except OSError as exc:
            Path(tmp).unlink(missing_ok=True)
            self._unsaved(exc)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def _unsaved(self, exc: OSError) -> None:
        """A full or read-only disk must not fail the question being answered: the thread
        goes on in memory (the file on disk keeps its last good version) and we say so."""
        log.warning(
            "conversation history %s not saved (%s); kept in memory", self.path, exc.strerror or exc
        )


def _title(question: str) -> str:
    flat = " ".join(question.split())
    return flat if len(flat) <= 80 else flat[:77] + "..."


def record_turns(
    stream: Iterator[str | Answer],
    store: ConversationStore,
    thread_id: str,
    question: str,
) -> Iterator[str | Answer]:
    """Pass an answer stream through and record the finished turn in the thread (a cancelled
    answer is not a turn)."""
    for item in stream:
        if isinstance(item, Answer) and item.error != "cancelled":
            citations = [
                {
                    "number": c.number,
                    "path": c.path,
                    "startLine": c.start_line,
                    "endLine": c.end_line,
                    "symbol": c.symbol,
                }
                for c in item.citations
            ]
            store.add_turn(
                thread_id,
                Turn(
                    question=question.strip(),
                    answer=item.text,
                    citations=citations,
                    provider=item.provider,
                ),
            )
        yield item
