"""Chunk <-> row conversion shared by the publisher and the reader.

Chunk fields that have a column are stored there; any other init field of `Chunk` (the
chunker grows fields, e.g. a declaration flag) travels in the `attrs` JSONB column, so a
new field needs no schema change and an old row simply lacks it (the dataclass default).
"""

from __future__ import annotations

import dataclasses
import functools
import json
from collections.abc import Sequence
from typing import Any

import numpy as np

from codeqa_lsp.chunking.model import Chunk
from codeqa_lsp.index.filters import SearchFilters, path_spec
from codeqa_lsp.index.pg.schema import SCHEMA

COLUMNS = (
    "path",
    "symbol",
    "kind",
    "language",
    "start_line",
    "end_line",
    "start_byte",
    "end_byte",
    "text",
    "signature",
    "doc",
    "part",
    "parts",
)

# Over-fetch when path globs are post-filtered in Python (Postgres cannot evaluate them).
GLOB_OVERFETCH = 4
SELECT_COLUMNS = ", ".join(f"c.{name}" for name in COLUMNS) + ", c.attrs"


@functools.cache
def _init_fields() -> frozenset[str]:
    """Chunk's init fields (fixed for the process; read for every row a search returns)."""
    return frozenset(f.name for f in dataclasses.fields(Chunk) if f.init)


def attrs_of(chunk: Chunk) -> str:
    """JSON of the chunk's fields that have no column of their own."""
    extra = {name: getattr(chunk, name) for name in _init_fields() if name not in COLUMNS}
    return json.dumps(extra, sort_keys=True, default=str)


def chunk_from_row(row: Sequence[Any]) -> Chunk:
    """A row of `SELECT_COLUMNS` (attrs last) back into a `Chunk`; unknown attrs (written by
    a newer chunker) are dropped, missing ones take the field default."""
    values = dict(zip(COLUMNS, row[: len(COLUMNS)], strict=True))
    attrs = row[len(COLUMNS)] or {}
    known = _init_fields()
    # JSON has no tuples: sequence fields (`refs`) come back as lists; a Chunk holds tuples
    # (it is frozen and hashable, and must compare equal to the one the local store returns).
    values.update(
        {
            k: tuple(v) if isinstance(v, list) else v
            for k, v in attrs.items()
            if k in known and k not in values
        }
    )
    return Chunk(**values)


def vector_literal(vector: Any) -> str:
    """pgvector's text form; float32 repr keeps the exact stored value."""
    return "[" + ",".join(map(repr, np.asarray(vector, dtype=np.float32).tolist())) + "]"


def parse_vector(text: str) -> np.ndarray:
    return np.asarray(json.loads(text), dtype=np.float32)


def filter_sql(filters: SearchFilters | None) -> tuple[str, list[Any]]:
    """SQL conditions (` AND ...`) for language and kind filters. Path globs are gitignore
    patterns Postgres cannot evaluate; the caller post-filters them (see `needs_post_filter`)."""
    if filters is None:
        return "", []
    sql, args = "", []
    if filters.languages:
        sql += " AND c.language = ANY(%s)"
        args.append(list(filters.languages))
    if filters.kinds:
        sql += " AND c.kind = ANY(%s)"
        args.append(list(filters.kinds))
    return sql, args


def path_filter(filters: SearchFilters | None) -> Any:
    """A predicate over paths for the path globs, or None when there are none."""
    if filters is None or not filters.path_globs:
        return None
    return path_spec(filters.path_globs).match_file


def keep_matching(
    ranked: list[tuple[Chunk, float]], matches: Any, limit: int
) -> list[tuple[Chunk, float]]:
    """The first `limit` of `ranked` whose path `matches` (`path_filter`; None keeps all)."""
    if matches is not None:
        ranked = [(c, s) for c, s in ranked if matches(c.path)]
    return ranked[:limit]


def in_snapshot(snapshot_id: int, alias: str = "c") -> str:
    """SQL: the row `alias` (a chunk, or a row carrying its path and file_sha) is a version
    the snapshot holds."""
    return (
        f"EXISTS (SELECT 1 FROM {SCHEMA}.snapshot_files sf WHERE sf.snapshot_id = "
        f"{int(snapshot_id)} AND sf.path = {alias}.path AND sf.sha256 = {alias}.file_sha)"
    )
