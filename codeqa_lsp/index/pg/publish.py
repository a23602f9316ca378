"""`publish`: write a snapshot of a tree to the shared index (`codeqa index --store`).

The scanner and `read_source` decide what is published, exactly as for the local index:
ignored paths, secret file names and files whose content matches a secret rule are never
read into the database. Incremental: a file version (path + sha256 of its bytes) already
stored for this repository and embedding space is not chunked again, only listed in the
new snapshot; a new version's chunks whose embedding text was embedded before (in the
database, or in the publisher's local embedding cache, same key) are not embedded again.
The snapshot becomes visible (`ready`) only once complete, in one final transaction.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np

from codeqa_lsp.chunking.model import Chunk
from codeqa_lsp.config import Settings
from codeqa_lsp.index.embedders import CountingEmbedder, Embedder, create_embedder
from codeqa_lsp.index.pg import dsn, gitinfo
from codeqa_lsp.index.pg.gc import (
    GRACE,
    KEEP_SNAPSHOTS,
    CollectReport,
    collect_garbage,
    publish_lock,
)
from codeqa_lsp.index.pg.rows import attrs_of, parse_vector, vector_literal
from codeqa_lsp.index.pg.schema import (
    SCHEMA,
    ensure_space,
    ensure_vector_index,
    migrate,
    refresh_term_stats,
)
from codeqa_lsp.index.store import label_for
from codeqa_lsp.index.tokens import token_stream

log = logging.getLogger(__name__)

# Files written per transaction: big enough that commits are not the cost, small enough
# that a crash loses little (the next publish of the same commit reuses what was written).
FILES_PER_TRANSACTION = 64
EMBED_BATCH = 64
# Memory for building the HNSW index in one pass; pgvector falls back to a much slower
# build when the graph does not fit (about 2 KB per 384-dim vector: ~200 MB at 100k chunks).
MAINTENANCE_WORK_MEM = "512MB"

# Rows are bulk-loaded: COPY into a temporary table (no per-row statement, no per-row
# round trip), then one INSERT ... SELECT computes the weighted tsvector server-side and
# skips rows already stored. Measured in BENCHMARKS.md ("Shared team index"): COPY made the
# publish of the 100k-chunk tree several times faster than one INSERT per row.
LOAD_COLUMNS = (
    "repo_id integer, space_id integer, path text, file_sha text, id text, label bigint, name "
    "text, symbol text, kind text, language text, start_line integer, end_line integer, start_byte "
    "integer, end_byte integer, text text, signature text, doc text, part integer, parts integer, "
    "attrs jsonb, embed_hash text, embedding vector, tok_a text, tok_c text, tok_b text, tok_d text"
)
_LOAD_TABLE = "codeqa_chunks_load"
_FROM_LOAD = f"""
INSERT INTO {SCHEMA}.chunks (repo_id, space_id, path, file_sha, id, label, name, symbol, kind,
    language, start_line, end_line, start_byte, end_byte, text, signature, doc, part, parts,
    attrs, embed_hash, embedding, tsv)
SELECT repo_id, space_id, path, file_sha, id, label, name, symbol, kind, language, start_line,
    end_line, start_byte, end_byte, text, signature, doc, part, parts, attrs, embed_hash, embedding,
    setweight(to_tsvector('simple', tok_a), 'A') || setweight(to_tsvector('simple', tok_c), 'C')
    || setweight(to_tsvector('simple', tok_b), 'B') || to_tsvector('simple', tok_d)
FROM {_LOAD_TABLE}
ON CONFLICT DO NOTHING
"""


def chunk_row(repo_id: int, space_id: int, sha: str, c: Chunk, vector: Any) -> tuple[Any, ...]:
    """One row for `copy_chunk_rows`: the chunk's columns, its vector, its token streams."""
    return (
        repo_id,
        space_id,
        c.path,
        sha,
        c.id,
        label_for(c.id),
        c.name,
        c.symbol,
        c.kind,
        c.language,
        c.start_line,
        c.end_line,
        c.start_byte,
        c.end_byte,
        c.text,
        c.signature,
        c.doc,
        c.part,
        c.parts,
        attrs_of(c),
        embed_hash(c.embed_text()),
        vector_literal(vector),
        token_stream(f"{c.symbol} {c.signature}"),
        token_stream(c.path),
        token_stream(c.doc),
        token_stream(c.text),
    )


def copy_chunk_rows(conn: Any, rows: Iterable[tuple[Any, ...]]) -> None:
    """Bulk-load `chunk_row` tuples; call inside a transaction (the staging table is
    dropped at its commit)."""
    conn.execute(f"CREATE TEMP TABLE {_LOAD_TABLE} ({LOAD_COLUMNS}) ON COMMIT DROP")
    with conn.cursor() as cur, cur.copy(f"COPY {_LOAD_TABLE} FROM STDIN") as copy:
        for row in rows:
            copy.write_row(row)
    conn.execute(_FROM_LOAD)


class PublishError(RuntimeError):
    """The tree cannot be published as asked; the message is one line, safe to print."""


@dataclass
class PublishReport:
    repo: str = ""
    commit: str = ""
    snapshot_id: int = 0
    files_seen: int = 0
    files_written: int = 0  # new file versions chunked and stored
    chunks_total: int = 0
    chunks_added: int = 0
    embedded: int = 0  # texts sent to the embedder
    reused: int = 0  # vectors reused from the database or the local cache
    already_published: bool = False
    collected: CollectReport = field(default_factory=CollectReport)  # old snapshots let go
    skipped: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0


def embed_hash(text: str) -> str:
    """The same sha256 of the embedding text that keys the local embedding cache."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def workspace_identity(root: Path) -> str:
    """Repository identity, plus the sub-directory when ROOT is not the repository top."""
    identity = gitinfo.repo_identity(root)
    top = gitinfo.toplevel(root).resolve()
    sub = root.resolve().relative_to(top).as_posix() if root.resolve() != top else ""
    return f"{identity}//{sub}" if sub and sub != "." else identity


def spaces_for(embedder: Embedder | CountingEmbedder, settings: Settings) -> tuple[str, str]:
    """(embedding space, chunking) names, the same strings the local index records."""
    from codeqa_lsp.chunking.chunker import CHUNKER_VERSION

    return (
        f"{embedder.name}|{embedder.model}|{embedder.dim}",
        f"{CHUNKER_VERSION}|{settings.chunk_tokens}",
    )


class Publisher:
    def __init__(
        self,
        url: str,
        root: Path,
        settings: Settings,
        embedder: Embedder | None = None,
        cache: Any = None,
        keep: int = KEEP_SNAPSHOTS,
        grace: timedelta = GRACE,
    ) -> None:
        self.url = dsn.validate(url)
        self.keep, self.grace = keep, grace  # retention of old snapshots (`gc`)
        self.root = root.resolve()
        self.settings = settings
        self.embedder = CountingEmbedder(embedder or create_embedder(settings))
        self.cache = cache  # an EmbeddingCache, or None

    def publish(
        self, ref: str = "HEAD", progress: Callable[[int, int], None] | None = None
    ) -> PublishReport:
        started = time.monotonic()
        report = PublishReport()
        try:
            commit = gitinfo.resolve(self.root, ref)
            head = gitinfo.resolve(self.root, "HEAD")
            dirty = gitinfo.dirty_tracked(self.root)
            report.repo = workspace_identity(self.root)
        except gitinfo.GitError as exc:
            raise PublishError(f"cannot publish {self.root}: {exc}") from None
        if commit != head:
            raise PublishError(
                f"{ref} is {commit[:12]} but the checkout is at {head[:12]}; check out {ref} first"
            )
        if dirty:
            raise PublishError(
                f"{len(dirty)} tracked file(s) modified (e.g. {dirty[0]}); publish a clean checkout"
            )
        report.commit = commit
        space, chunking = spaces_for(self.embedder, self.settings)
        conn = dsn.connect(self.url, read_only=False)
        try:
            migrate(conn)
            with conn.transaction():
                space_id = ensure_space(conn, space, self.embedder.dim)
                repo_id = conn.execute(
                    f"INSERT INTO {SCHEMA}.repos(identity) VALUES (%s) ON CONFLICT (identity) "
                    "DO UPDATE SET identity = EXCLUDED.identity RETURNING id",
                    (report.repo,),
                ).fetchone()[0]
            publish_lock(conn, repo_id)  # released when the connection closes
            with conn.transaction():
                row = conn.execute(
                    f"SELECT id, state FROM {SCHEMA}.snapshots WHERE repo_id = %s AND commit = %s "
                    "AND space_id = %s AND chunking = %s",
                    (repo_id, commit, space_id, chunking),
                ).fetchone()
                if row is not None and row[1] == "ready":
                    report.snapshot_id, report.already_published = int(row[0]), True
                    report.seconds = time.monotonic() - started
                    return report
                if row is None:
                    row = conn.execute(
                        f"INSERT INTO {SCHEMA}.snapshots(repo_id, commit, ref, space_id, chunking) "
                        "VALUES (%s, %s, %s, %s, %s) RETURNING id",
                        (repo_id, commit, ref, space_id, chunking),
                    ).fetchone()
                snapshot_id = report.snapshot_id = int(row[0])
                conn.execute(
                    f"DELETE FROM {SCHEMA}.snapshot_files WHERE snapshot_id = %s", (snapshot_id,)
                )
            self._write_files(conn, repo_id, space_id, snapshot_id, report, progress)
            with conn.transaction():
                total = conn.execute(
                    f"SELECT count(*) FROM {SCHEMA}.snapshot_files sf JOIN {SCHEMA}.chunks c "
                    "ON c.repo_id = %s AND c.space_id = %s AND c.path = sf.path AND c.file_sha = "
                    "sf.sha256 "
                    "WHERE sf.snapshot_id = %s",
                    (repo_id, space_id, snapshot_id),
                ).fetchone()[0]
                report.chunks_total = int(total)
                conn.execute(
                    f"UPDATE {SCHEMA}.snapshots SET state = 'ready', files = %s, chunks = %s, "
                    "published_at = now() WHERE id = %s",
                    (report.files_seen, total, snapshot_id),
                )
            # Built once, after the first publish loaded its rows (a no-op afterwards).
            conn.execute(f"SET maintenance_work_mem = '{MAINTENANCE_WORK_MEM}'")
            ensure_vector_index(conn, space_id, repo_id, self.embedder.dim)
            # Fresh statistics: without them the planner takes a just-loaded table for empty
            # and sorts every row by distance instead of walking the HNSW graph.
            conn.execute(f"ANALYZE {SCHEMA}.chunks")
            conn.execute(f"ANALYZE {SCHEMA}.snapshot_files")
            report.collected = collect_garbage(conn, repo_id, self.keep, self.grace)
            refresh_term_stats(conn, repo_id, space_id)
        finally:
            conn.close()
        report.seconds = time.monotonic() - started
        return report

    def _write_files(
        self,
        conn: Any,
        repo_id: int,
        space_id: int,
        snapshot_id: int,
        report: PublishReport,
        progress: Callable[[int, int], None] | None,
    ) -> None:
        from codeqa_lsp.chunking.scanner import Skip, WorkspaceFilter, read_source, scan

        result = scan(self.root, self.settings, WorkspaceFilter(self.root, self.settings))
        report.skipped.update(result.skipped)
        paths = [f.rel_path for f in result.files]
        for start in range(0, len(paths), FILES_PER_TRANSACTION):
            batch: list[tuple[str, str, str]] = []  # (path, sha, text)
            for rel in paths[start : start + FILES_PER_TRANSACTION]:
                source = read_source(self.root, rel, self.settings)  # secrets are skipped here
                if isinstance(source, Skip):
                    report.skipped[source.reason] += 1
                    continue
                batch.append((source.rel_path, source.sha256, source.text))
            with conn.transaction():
                stored = self._stored_versions(
                    conn, repo_id, space_id, [(p, s) for p, s, _ in batch]
                )
                fresh = [(p, s, t) for p, s, t in batch if (p, s) not in stored]
                self._insert_versions(conn, repo_id, space_id, fresh, report)
                with conn.cursor() as cur:
                    cur.executemany(
                        f"INSERT INTO {SCHEMA}.snapshot_files(snapshot_id, path, sha256) VALUES "
                        "(%s, %s, %s)",
                        [(snapshot_id, p, s) for p, s, _ in batch],
                    )
            report.files_seen += len(batch)
            if progress is not None:
                progress(min(start + FILES_PER_TRANSACTION, len(paths)), len(paths))

    @staticmethod
    def _stored_versions(
        conn: Any, repo_id: int, space_id: int, versions: Sequence[tuple[str, str]]
    ) -> set[tuple[str, str]]:
        if not versions:
            return set()
        rows = conn.execute(
            f"SELECT DISTINCT path, file_sha FROM {SCHEMA}.chunks WHERE repo_id = %s AND space_id "
            "= %s "
            "AND (path, file_sha) IN (SELECT * FROM unnest(%s::text[], %s::text[]))",
            (repo_id, space_id, [p for p, _ in versions], [s for _, s in versions]),
        ).fetchall()
        return {(p, s) for p, s in rows}

    def _insert_versions(
        self,
        conn: Any,
        repo_id: int,
        space_id: int,
        versions: Sequence[tuple[str, str, str]],
        report: PublishReport,
    ) -> None:
        from codeqa_lsp.chunking.chunker import chunk_source

        rows: list[tuple[str, Chunk]] = []
        for path, sha, text in versions:
            chunks = chunk_source(path, text, language=None, max_tokens=self.settings.chunk_tokens)
            rows.extend((sha, c) for c in chunks)
        if not rows:
            return
        report.files_written += len(versions)
        vectors = self._vectors(conn, repo_id, space_id, [c.embed_text() for _, c in rows], report)
        copy_chunk_rows(
            conn,
            (
                chunk_row(repo_id, space_id, sha, c, vector)
                for (sha, c), vector in zip(rows, vectors, strict=True)
            ),
        )
        report.chunks_added += len(rows)

    def _vectors(
        self, conn: Any, repo_id: int, space_id: int, texts: Sequence[str], report: PublishReport
    ) -> list[np.ndarray]:
        """Vectors for `texts`: the database's, then the local cache's, then the model's."""
        hashes = [embed_hash(t) for t in texts]
        rows = conn.execute(
            f"SELECT DISTINCT ON (embed_hash) embed_hash, embedding::text FROM {SCHEMA}.chunks "
            "WHERE repo_id = %s AND space_id = %s AND embed_hash = ANY(%s) AND embedding IS NOT "
            "NULL",
            (repo_id, space_id, list(set(hashes))),
        ).fetchall()
        known = {h: parse_vector(v) for h, v in rows}
        out: list[np.ndarray | None] = [known.get(h) for h in hashes]
        if self.cache is not None:
            missing = [i for i, v in enumerate(out) if v is None]
            for i, vector in zip(
                missing,
                self.cache.get_many([texts[i] for i in missing], self.embedder.dim),
                strict=True,
            ):
                out[i] = vector
        misses = [i for i, v in enumerate(out) if v is None]
        report.reused += len(texts) - len(misses)
        for start in range(0, len(misses), EMBED_BATCH):
            group = misses[start : start + EMBED_BATCH]
            fresh = self.embedder.embed([texts[i] for i in group])
            if self.cache is not None:
                self.cache.put_many([texts[i] for i in group], fresh)
            for i, vector in zip(group, fresh, strict=True):
                out[i] = vector
        report.embedded += len(misses)
        return [v for v in out if v is not None]
