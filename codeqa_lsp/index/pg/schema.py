"""Tables of the shared index, created by the publisher; the grants readers need.

Layout (schema `codeqa`, one database for many repositories and refs):

* `repos`: one row per repository identity (normalised remote URL, see `gitinfo`).
* `spaces`: one row per embedding space (`embedder|model|dim`); vectors of two models are
  never compared. Each space gets its own partial HNSW index with a fixed dimension.
* `snapshots`: one published commit of one repository in one space and chunking.
* `snapshot_files`: which version (sha256 of the bytes) of each path a snapshot holds.
* `chunks`: content-addressed by file version: a chunk row belongs to (repo, space, path,
  file sha), so two snapshots that share a file version share its rows. Publishing a
  commit where 10 files changed writes those 10 files' chunks and copies only small
  `snapshot_files` rows for the rest. Known chunk fields are columns; fields the chunker
  grows later go to `attrs` (JSONB) with no schema change.

The `tsv` column holds the same code-aware token stream as the local FTS5 table, weighted
A for the symbol and signature (x5 like `BM25_WEIGHTS`) and D for the rest.
"""

from __future__ import annotations

from typing import Any

SCHEMA_VERSION = "1"
SCHEMA = "codeqa"

DDL = f"""
CREATE EXTENSION IF NOT EXISTS vector;
CREATE SCHEMA IF NOT EXISTS {SCHEMA};
CREATE TABLE IF NOT EXISTS {SCHEMA}.meta (key text PRIMARY KEY, value text NOT NULL);
CREATE TABLE IF NOT EXISTS {SCHEMA}.repos (id serial PRIMARY KEY, identity text NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS {SCHEMA}.spaces (
    id serial PRIMARY KEY, name text NOT NULL UNIQUE, dim integer NOT NULL CHECK (dim > 0)
);
CREATE TABLE IF NOT EXISTS {SCHEMA}.snapshots (
    id bigserial PRIMARY KEY,
    repo_id integer NOT NULL REFERENCES {SCHEMA}.repos(id),
    commit text NOT NULL, ref text,
    space_id integer NOT NULL REFERENCES {SCHEMA}.spaces(id),
    chunking text NOT NULL,
    state text NOT NULL DEFAULT 'building' CHECK (state IN ('building', 'ready')),
    base_id bigint, files integer NOT NULL DEFAULT 0, chunks integer NOT NULL DEFAULT 0,
    published_at timestamptz,
    UNIQUE (repo_id, commit, space_id, chunking)
);
-- added after schema 1 shipped; additive, so still schema 1 (garbage collection, `gc`):
ALTER TABLE {SCHEMA}.snapshots ADD COLUMN IF NOT EXISTS started_at timestamptz \
NOT NULL DEFAULT now();
CREATE TABLE IF NOT EXISTS {SCHEMA}.snapshot_files (
    snapshot_id bigint NOT NULL REFERENCES {SCHEMA}.snapshots(id) ON DELETE CASCADE,
    path text NOT NULL, sha256 text NOT NULL,
    PRIMARY KEY (snapshot_id, path)
);
CREATE TABLE IF NOT EXISTS {SCHEMA}.chunks (
    pk bigserial PRIMARY KEY,
    repo_id integer NOT NULL, space_id integer NOT NULL,
    path text NOT NULL, file_sha text NOT NULL,
    id text NOT NULL, label bigint NOT NULL, name text NOT NULL, symbol text NOT NULL,
    kind text NOT NULL, language text NOT NULL,
    start_line integer NOT NULL, end_line integer NOT NULL,
    start_byte integer NOT NULL, end_byte integer NOT NULL,
    text text NOT NULL, signature text NOT NULL, doc text NOT NULL,
    part integer NOT NULL, parts integer NOT NULL,
    attrs jsonb NOT NULL DEFAULT '{{}}'::jsonb,
    embed_hash text NOT NULL, embedding vector, tsv tsvector NOT NULL,
    UNIQUE (repo_id, space_id, path, file_sha, id)
);
-- Document frequency of each token over a repository's rows in one space (all stored
-- versions), refreshed by every publish: the IDF the text arm weights terms by (`snapshot`).
CREATE TABLE IF NOT EXISTS {SCHEMA}.term_stats (
    repo_id integer NOT NULL, space_id integer NOT NULL, term text NOT NULL, df integer NOT NULL,
    PRIMARY KEY (repo_id, space_id, term)
);
CREATE INDEX IF NOT EXISTS chunks_tsv ON {SCHEMA}.chunks USING gin (tsv);
CREATE INDEX IF NOT EXISTS chunks_name ON {SCHEMA}.chunks (repo_id, space_id, name);
CREATE INDEX IF NOT EXISTS chunks_label ON {SCHEMA}.chunks (repo_id, space_id, label);
CREATE INDEX IF NOT EXISTS chunks_embed_hash ON {SCHEMA}.chunks (repo_id, space_id, embed_hash);
CREATE INDEX IF NOT EXISTS snapshots_lookup ON {SCHEMA}.snapshots (repo_id, space_id, commit);
"""

# Documented in the README ("Shared team index"); `codeqa_writer` owns the tables (it runs
# the DDL above on its first publish), `codeqa_reader` may only read them.
GRANTS = f"""
-- once, as a superuser (CREATE EXTENSION needs one; then nobody else needs privileges on it):
CREATE EXTENSION IF NOT EXISTS vector;
CREATE ROLE codeqa_writer LOGIN;  -- the publisher (CI); password in its .pgpass / PGPASSWORD
CREATE ROLE codeqa_reader LOGIN;  -- every developer's language server
GRANT CREATE ON DATABASE {{database}} TO codeqa_writer;
-- the writer creates schema {SCHEMA} on its first publish; readers may read what it creates:
ALTER DEFAULT PRIVILEGES FOR ROLE codeqa_writer GRANT USAGE ON SCHEMAS TO codeqa_reader;
ALTER DEFAULT PRIVILEGES FOR ROLE codeqa_writer GRANT SELECT ON TABLES TO codeqa_reader;
"""


def grants_sql(database: str) -> str:
    """The grants above for one database (the README shows them for `codeqa`)."""
    if not database.replace("_", "").isalnum():
        raise ValueError(f"unusual database name {database!r}: write the grants by hand")
    return GRANTS.replace("{database}", database)


def migrate(conn: Any) -> None:
    """Create what is missing (idempotent); refuse a database of another schema version."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(hashtext('codeqa-schema'))")
        conn.execute(DDL)
        row = conn.execute(
            f"SELECT value FROM {SCHEMA}.meta WHERE key = 'schema_version'"
        ).fetchone()
        if row is None:
            conn.execute(
                f"INSERT INTO {SCHEMA}.meta(key, value) VALUES ('schema_version', %s)",
                (SCHEMA_VERSION,),
            )
        elif row[0] != SCHEMA_VERSION:
            raise RuntimeError(
                f"shared index schema {row[0]} != {SCHEMA_VERSION}; upgrade codeqa-lsp"
            )


def ensure_space(conn: Any, name: str, dim: int) -> int:
    """The id of embedding space `name` (created on first use)."""
    row = conn.execute(
        f"INSERT INTO {SCHEMA}.spaces(name, dim) VALUES (%s, %s) ON CONFLICT (name) DO UPDATE "
        "SET dim = EXCLUDED.dim RETURNING id",
        (name, dim),
    ).fetchone()
    return int(row[0])


def hnsw_index_name(space_id: int, repo_id: int) -> str:
    return f"chunks_hnsw_{int(space_id)}_{int(repo_id)}"


def ensure_vector_index(conn: Any, space_id: int, repo_id: int, dim: int) -> None:
    """The HNSW (cosine) index of one repository's vectors in one space.

    One partial index per (space, repository): it is the partitioning by repository the
    scaling notes talk about (each index stays the size of one repository, and a query
    scans only its own), and it has the fixed dimension pgvector's HNSW needs while the
    column itself takes any. Created after the first publish has loaded the rows: building
    it in one pass is much faster than inserting row by row into an existing graph
    (measured in BENCHMARKS.md, "Shared team index"); later publishes insert their few new
    rows into it. Integers only in this DDL (an index predicate cannot take a parameter).
    """
    conn.execute(
        f"CREATE INDEX IF NOT EXISTS {hnsw_index_name(space_id, repo_id)} ON {SCHEMA}.chunks USING "
        f"hnsw ((embedding::vector({int(dim)})) vector_cosine_ops) WHERE space_id = "
        f"{int(space_id)} AND repo_id = {int(repo_id)}"
    )


def refresh_term_stats(conn: Any, repo_id: int, space_id: int) -> None:
    """Recompute `term_stats` for one repository and space (one pass over its tsvectors)."""
    scope = f"repo_id = {int(repo_id)} AND space_id = {int(space_id)}"
    with conn.transaction():
        conn.execute(f"DELETE FROM {SCHEMA}.term_stats WHERE {scope}")
        conn.execute(
            f"INSERT INTO {SCHEMA}.term_stats (repo_id, space_id, term, df) "
            f"SELECT {int(repo_id)}, {int(space_id)}, word, ndoc FROM "
            f"ts_stat('SELECT tsv FROM {SCHEMA}.chunks WHERE {scope}')"
        )
