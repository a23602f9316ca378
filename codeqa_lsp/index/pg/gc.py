"""Garbage collection of old snapshots of the shared index, run by the publisher.

Retention, per (repository, embedding space, chunking, ref): the newest `keep` ready
snapshots stay, and so does any snapshot published less than `grace` ago; older ones are
collected. A snapshot still `building` is left alone unless it was started more than a day
ago (a publisher that crashed). Why this rule:

* A client reads the snapshot of the nearest *published ancestor* of its HEAD. Keeping the
  last few per ref leaves one for a developer whose branch forked a few publishes ago; one
  whose merge-base is older than all of them gets the newest kept ancestor of HEAD if any,
  otherwise it indexes locally (the overlay's fallback), so collection never breaks a client.
* The grace period protects clients that have a snapshot open right now: a server opens its
  snapshot at start and re-opens it at each index run; a snapshot younger than `grace` is
  never pulled from under a session of a normal working day.
* Per ref, so a release branch or tag published now and then keeps its snapshots while main
  moves on every merge.

Collected: the snapshots' `snapshot_files` rows (cascade), then the chunk rows of every file
version that no remaining snapshot of the same repository and space lists. Chunk rows are
content-addressed by file version, so a version shared with a kept snapshot stays. The
deleted rows leave the HNSW and GIN indexes at the next (auto)vacuum.

It runs automatically at the end of each publish of a repository (the publisher is the only
writer and already holds the writer role; no cron job to forget, and each run deletes about
one snapshot's worth, so the database never accumulates). Publish and collection of one
repository are serialised by an advisory lock, so a publish that reuses a stored file
version never races a collection deleting it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from codeqa_lsp.index.pg.schema import SCHEMA

# Newest snapshots kept per ref. The overlay's local side indexes whatever differs between
# the working tree and the snapshot, so an older snapshot costs a client only local indexing
# of more files; 10 publishes back covers a branch forked a day or two ago on a busy main.
KEEP_SNAPSHOTS = 10
GRACE = timedelta(days=1)
# A `building` snapshot older than this is a crashed publish.
STALE_BUILD = timedelta(days=1)


@dataclass
class CollectReport:
    snapshots: int = 0  # snapshots collected
    file_versions: int = 0  # (path, sha) versions no longer listed by any snapshot
    chunks: int = 0  # chunk rows deleted


def publish_lock(conn: Any, repo_id: int) -> None:
    """Serialise publishing and collecting of one repository (held until the session ends
    or `publish_unlock`)."""
    conn.execute("SELECT pg_advisory_lock(hashtext('codeqa-publish'), %s)", (int(repo_id),))


def publish_unlock(conn: Any, repo_id: int) -> None:
    conn.execute("SELECT pg_advisory_unlock(hashtext('codeqa-publish'), %s)", (int(repo_id),))


def expired_snapshots(
    conn: Any, repo_id: int, keep: int = KEEP_SNAPSHOTS, grace: timedelta = GRACE
) -> list[int]:
    """Ids of the repository's snapshots the retention rule lets go."""
    rows = conn.execute(
        f"""
        SELECT id FROM (
            SELECT id, state, published_at, row_number() OVER (
                PARTITION BY space_id, chunking, coalesce(ref, '')
                ORDER BY published_at DESC NULLS LAST, id DESC) AS rank
            FROM {SCHEMA}.snapshots WHERE repo_id = %s AND state = 'ready'
        ) ranked WHERE rank > %s AND published_at < now() - %s
        UNION
        SELECT id FROM {SCHEMA}.snapshots
        WHERE repo_id = %s AND state = 'building' AND started_at < now() - %s
        ORDER BY 1
        """,
        (repo_id, max(0, keep), grace, repo_id, STALE_BUILD),
    ).fetchall()
    return [int(r[0]) for r in rows]


def collect(conn: Any, repo_id: int, snapshot_ids: list[int]) -> CollectReport:
    """Delete `snapshot_ids` (of `repo_id`) and the chunk rows only they referenced, in one
    transaction. The caller holds `publish_lock`."""
    report = CollectReport()
    if not snapshot_ids:
        return report
    with conn.transaction():
        spaces = conn.execute(
            f"SELECT DISTINCT space_id FROM {SCHEMA}.snapshots WHERE id = ANY(%s) AND repo_id = %s",
            (snapshot_ids, repo_id),
        ).fetchall()
        # Versions the expired snapshots list that no other snapshot of the space lists.
        conn.execute(
            f"""
            CREATE TEMP TABLE codeqa_gone ON COMMIT DROP AS
            SELECT DISTINCT s.space_id, sf.path, sf.sha256 FROM {SCHEMA}.snapshot_files sf
            JOIN {SCHEMA}.snapshots s ON s.id = sf.snapshot_id \
WHERE s.id = ANY(%s) AND s.repo_id = %s
            EXCEPT
            SELECT DISTINCT s.space_id, sf.path, sf.sha256 FROM {SCHEMA}.snapshot_files sf
            JOIN {SCHEMA}.snapshots s ON s.id = sf.snapshot_id
            WHERE s.repo_id = %s AND s.space_id = ANY(%s) AND NOT (s.id = ANY(%s))
            """,
            (snapshot_ids, repo_id, repo_id, [r[0] for r in spaces], snapshot_ids),
        )
        report.file_versions = int(conn.execute("SELECT count(*) FROM codeqa_gone").fetchone()[0])
        deleted = conn.execute(
            f"DELETE FROM {SCHEMA}.chunks c USING codeqa_gone g WHERE c.repo_id = %s "
            "AND c.space_id = g.space_id AND c.path = g.path AND c.file_sha = g.sha256",
            (repo_id,),
        )
        report.chunks = deleted.rowcount
        gone = conn.execute(
            f"DELETE FROM {SCHEMA}.snapshots WHERE id = ANY(%s) AND repo_id = %s",
            (snapshot_ids, repo_id),
        )
        report.snapshots = gone.rowcount
    return report


def collect_garbage(
    conn: Any, repo_id: int, keep: int = KEEP_SNAPSHOTS, grace: timedelta = GRACE
) -> CollectReport:
    """Apply the retention rule to one repository (the caller holds `publish_lock`)."""
    return collect(conn, repo_id, expired_snapshots(conn, repo_id, keep, grace))
