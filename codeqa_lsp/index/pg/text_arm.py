"""The shared snapshot's text arm: chunks and files ranked from one scan of the matches.

A search asks Postgres for the best chunks (`bm25_terms`) and, a little later, for the best
files (`file_bm25`) of the same terms. Each used to be a statement of its own, and each
scored every matching row and joined every match against the snapshot's file list; at
1.1M chunks the two took ~220 ms of a 242 ms median search. Now one statement scores the
matches once (~68 ms; the search's median 83 ms, p95 89; BENCHMARKS.md, "Shared team
index", `pgstore_scale.py`, baseline in the same run) and returns the best
`candidates` of them with their snapshot membership; both rankings are read from that list,
kept per term list (`MEMO_SIZE`; a snapshot never changes, so a kept list never goes stale).

Membership is checked on the candidates only. Rows of versions this snapshot does not hold
(older or newer commits, kept until garbage collection) are dropped afterwards, so the
first `n` members of the score-ordered list are exactly the snapshot's top `n`; only when
fewer than `n` members are among the candidates (many stored versions of the matching
files) is the statement repeated with membership inside the scan (`exact`), which is the
old plan. Scores are BM25's IDF times each term's own ts_rank (`_score_sql`); files are summed
from the same scores as chunks.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from codeqa_lsp.chunking.model import Chunk
from codeqa_lsp.index.filters import SearchFilters
from codeqa_lsp.index.pg.rows import (
    GLOB_OVERFETCH,
    SELECT_COLUMNS,
    chunk_from_row,
    filter_sql,
    in_snapshot,
    keep_matching,
    path_filter,
)
from codeqa_lsp.index.pg.schema import SCHEMA

# ts_rank weights for {D, C, B, A}: A (symbol + signature) counts 5x the body, as
# `text_search.BM25_WEIGHTS` (1, 5, 1, 1) does for FTS5 (measured there on the 100 questions).
TS_WEIGHTS = "{0.2, 0.2, 0.2, 1.0}"
# Chunks summed per file: a file scores the sum of its chunks among the best
# `limit * FILE_FANOUT` of the snapshot.
FILE_FANOUT = 5
# Files every chunk ranking also prepares, so the searcher's file ranking of the same terms
# (`retrieval.search.FILE_CANDIDATES`, 50) needs no statement of its own.
FILE_PREFETCH = 50
# Candidates scored per member wanted before membership is checked. Twice as many: a
# search is repeated with the check inside the scan only when more than half of the best
# rows belong to versions the snapshot does not hold.
CANDIDATE_MARGIN = 2
# Term lists whose candidates are kept per snapshot (a search uses one or two).
MEMO_SIZE = 16

Rows = Callable[[str, Sequence[Any]], list[Any]]


@dataclass(frozen=True)
class _Candidates:
    """The snapshot's best matches for one term list, as far as they were scored."""

    members: list[tuple[str, float, Chunk | None]]  # (path, score, chunk) best first; the
    # chunk is read for the head of the list only (what a chunk ranking can return)
    complete: bool  # every match was scored: `members` is the snapshot's whole ranking

    def serves(self, chunks: int, files: int) -> bool:
        """Whether the best `chunks` members are here with their chunk, and `files` members."""
        head = self.members[:chunks]
        whole = self.complete or len(head) == chunks
        return (
            whole
            and all(c is not None for _, _, c in head)
            and (self.complete or len(self.members) >= files)
        )


def query_words(terms: Sequence[str]) -> tuple[str, ...]:
    """The distinct plain words of `terms`, lower-cased: what `to_tsquery('simple', ...)` is
    given OR-ed (no operators), and the key of a kept candidate list."""
    return tuple(dict.fromkeys(t.lower() for t in terms if t.isalnum()))


class TextArm:
    """Full-text ranking of one snapshot; thread-safe (the search runs arms in threads)."""

    def __init__(self, rows: Rows, *, repo_id: int, space_id: int, snapshot_id: int) -> None:
        self._rows = rows
        self.repo_id, self.space_id, self.snapshot_id = repo_id, space_id, snapshot_id
        self._lock = threading.Lock()
        self._memo: OrderedDict[tuple[Any, ...], _Candidates] = OrderedDict()
        self._has_stats: bool | None = None
        self.exact_scans = 0  # statements repeated with membership inside the scan

    # -- the two rankings ---------------------------------------------------------------
    def chunks(
        self, terms: Sequence[str], limit: int, filters: SearchFilters | None = None
    ) -> list[tuple[Chunk, float]]:
        """The best `limit` chunks of the snapshot for `terms` (BM25 IDF x ts_rank)."""
        words = query_words(terms)
        if not words or limit <= 0:
            return []
        matches = path_filter(filters)
        wanted = limit * GLOB_OVERFETCH if matches else limit
        files = FILE_PREFETCH * FILE_FANOUT if filters is None else 0
        members = self._candidates(words, wanted, files, filters).members[:wanted]
        ranked = [(chunk, score) for _, score, chunk in members if chunk is not None]
        return keep_matching(ranked, matches, limit)

    def files(self, terms: Sequence[str], limit: int) -> list[tuple[str, float]]:
        """(path, score) of the best files: the sum of each file's chunks among the snapshot's
        best `limit * FILE_FANOUT` (Postgres holds no whole-file document; the local store's
        `file_fts` is one)."""
        words = query_words(terms)
        if not words or limit <= 0:
            return []
        best = self._candidates(words, 0, limit * FILE_FANOUT, None).members
        totals: dict[str, float] = {}
        for path, score, _ in best[: limit * FILE_FANOUT]:
            totals[path] = totals.get(path, 0.0) + score
        return sorted(totals.items(), key=lambda item: -item[1])[:limit]

    # -- candidates ---------------------------------------------------------------------
    def _candidates(
        self, words: tuple[str, ...], chunks: int, files: int, filters: SearchFilters | None
    ) -> _Candidates:
        """Members enough for the best `chunks` chunks (read whole) and `files` scores."""
        key = (words, filters)
        with self._lock:
            kept = self._memo.get(key)
            if kept is not None and kept.serves(chunks, files):
                self._memo.move_to_end(key)
                return kept
        count = max(chunks, files)
        found = self._scan(words, count * CANDIDATE_MARGIN, chunks * CANDIDATE_MARGIN, filters)
        if not found.serves(chunks, files):
            self.exact_scans += 1
            found = self._scan(words, count, chunks, filters, exact=True)
        with self._lock:
            self._memo[key] = found
            self._memo.move_to_end(key)
            while len(self._memo) > MEMO_SIZE:
                self._memo.popitem(last=False)
        return found

    def _scan(
        self,
        words: Sequence[str],
        count: int,
        read: int,
        filters: SearchFilters | None,
        *,
        exact: bool = False,
    ) -> _Candidates:
        """The best `count` matches by score with their membership in the snapshot, the
        first `read` of them with their chunk; with `exact`, only members are scored."""
        text = " | ".join(words)
        weights, score, score_args = self._score_sql(words, text)
        where, where_args = filter_sql(filters)
        inside = f" AND {in_snapshot(self.snapshot_id)}" if exact else ""
        # Scored in the innermost query (top-N by score, no other column read), numbered in
        # the middle one (500 rows), whole rows joined for the first `read` only.
        sql = (
            f"{weights}SELECT t.score, {'true' if exact else in_snapshot(self.snapshot_id, 't')}, "
            f"t.path, "
            f"{SELECT_COLUMNS} FROM (SELECT s.*, row_number() OVER (ORDER BY s.score "
            f"DESC, s.pk) AS n FROM (SELECT c.pk, c.path, c.file_sha, {score} AS score FROM "
            f"{SCHEMA}.chunks c WHERE c.tsv @@ to_tsquery('simple', %s) AND c.repo_id = "
            f"{int(self.repo_id)} AND c.space_id = {int(self.space_id)}{where}{inside} ORDER "
            f"BY score DESC, c.pk LIMIT %s) s) t LEFT JOIN {SCHEMA}.chunks c ON c.pk = CASE WHEN "
            "t.n <= %s THEN t.pk END ORDER BY t.n"
        )
        rows = self._rows(sql, [*score_args, text, *where_args, count, read])
        members = [
            (r[2], float(r[0]), chunk_from_row(r[3:]) if r[3] is not None else None)
            for r in rows
            if r[1]
        ]
        return _Candidates(members, complete=len(rows) < count)

    def _score_sql(self, words: Sequence[str], text: str) -> tuple[str, str, list[Any]]:
        """(WITH clause, score expression, their arguments). BM25's IDF times each term's
        own ts_rank: ts_rank alone weighs a word found in every file like a rare identifier
        (measured on the four question sets, see BENCHMARKS.md "Shared team index"). The
        IDFs are computed in the same statement (`schema.term_stats`, one InitPlan each).
        A word without statistics weighs nothing when others have some (it occurs in no
        stored row), and 1 when none has (a repository last published before the table
        existed); a database without the table ranks by ts_rank alone."""
        if self._has_stats is None:
            rows = self._rows(f"SELECT to_regclass('{SCHEMA}.term_stats') IS NOT NULL", ())
            self._has_stats = bool(rows and rows[0][0])
        if not self._has_stats:
            return "", f"ts_rank('{TS_WEIGHTS}', c.tsv, to_tsquery('simple', %s), 1)", [text]
        weights = (
            # float8 throughout: a numeric IDF makes every row's product numeric (1.6x the scan)
            "WITH weights AS MATERIALIZED (SELECT s.term, ln(1 + (greatest(coalesce(n.chunks, "
            "0), s.df) - s.df + 0.5::float8) / (s.df + 0.5::float8)) AS idf FROM "
            f"{SCHEMA}.term_stats s, {SCHEMA}.snapshots n WHERE n.id = {int(self.snapshot_id)} "
            f"AND s.repo_id = {int(self.repo_id)} AND s.space_id = {int(self.space_id)} AND "
            "s.term = ANY(%s) AND s.df > 0) "
        )
        score = " + ".join(
            "coalesce((SELECT w.idf FROM weights w WHERE w.term = %s), (SELECT 0 FROM weights "
            "LIMIT 1), 1) * "
            f"ts_rank('{TS_WEIGHTS}', c.tsv, to_tsquery('simple', %s), 1)"
            for _ in words
        )
        return weights, score, [list(words), *(w for word in words for w in (word, word))]
