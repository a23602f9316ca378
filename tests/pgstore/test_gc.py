"""Garbage collection of old snapshots (`pg.gc`), on the real Postgres: the retention rule,
chunk rows shared by content across snapshots, refs, grace, crashed publishes."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import psycopg

from codeqa_lsp.config import Settings
from codeqa_lsp.index.embedders.hashing import HashEmbedder
from codeqa_lsp.index.pg.publish import Publisher, PublishReport, spaces_for, workspace_identity
from codeqa_lsp.index.pg.snapshot import open_snapshot
from tests.pgstore.conftest import git, make_repo
from tests.pgstore.trees import AUTH_PY, TREE

SETTINGS = Settings(embedder="hash")
V2 = AUTH_PY.replace("return token if", "return token.strip() if")
V3 = AUTH_PY.replace("return token if", "return token.lower() if")


def _publish(
    url: str, root: Path, ref: str = "main", keep: int = 2, grace: timedelta = timedelta(0)
) -> PublishReport:
    return Publisher(url, root, SETTINGS, embedder=HashEmbedder(), keep=keep, grace=grace).publish(
        ref
    )


def _commit(root: Path, auth: str, message: str) -> str:
    (root / "app/auth.py").write_text(auth)
    git(root, "commit", "-qam", message)
    return git(root, "rev-parse", "HEAD")


def _auth_versions(url: str) -> set[str]:
    """The distinct texts of parse_bearer_token stored in the chunks table."""
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT DISTINCT text FROM codeqa.chunks WHERE name = 'parse_bearer_token'"
        ).fetchall()
    return {
        "strip" if "token.strip()" in t else "lower" if "token.lower()" in t else "v1"
        for (t,) in rows
    }


def _snapshot_commits(url: str) -> set[str]:
    with psycopg.connect(url) as conn:
        return {r[0] for r in conn.execute("SELECT commit FROM codeqa.snapshots").fetchall()}


def test_old_snapshots_and_the_rows_only_they_referenced_are_collected(
    tmp_path: Path, pg_url: str
) -> None:
    root = tmp_path / "repo"
    c1 = make_repo(root, TREE)
    assert _publish(pg_url, root).collected.snapshots == 0
    c2 = _commit(root, V2, "strip")
    _publish(pg_url, root)
    assert _auth_versions(pg_url) == {"v1", "strip"}
    c3 = _commit(root, AUTH_PY, "revert")  # back to the first version: content shared with c1
    report = _publish(pg_url, root)
    # keep=2: c1 goes, but its auth.py version is c3's too, so its rows stay.
    assert report.collected.snapshots == 1 and report.collected.chunks == 0
    assert _snapshot_commits(pg_url) == {c2, c3}
    assert _auth_versions(pg_url) == {"v1", "strip"}

    c4 = _commit(root, V3, "lower")
    report = _publish(pg_url, root)
    # c2 goes, and with it the only snapshot listing the "strip" version of auth.py.
    assert report.collected.snapshots == 1 and report.collected.file_versions == 1
    assert report.collected.chunks > 0
    assert _snapshot_commits(pg_url) == {c3, c4}
    assert _auth_versions(pg_url) == {"v1", "lower"}

    # The kept snapshots still answer completely; a collected one is no longer offered.
    space, chunking = spaces_for(HashEmbedder(), SETTINGS)
    identity = workspace_identity(root)
    for commit, version in ((c3, "token if"), (c4, "token.lower()")):
        snap = open_snapshot(
            pg_url, repo=identity, space=space, chunking=chunking, commits=[commit]
        )
        assert snap is not None
        try:
            [fn] = snap.definitions("parse_bearer_token")
            assert version in fn.text
            assert snap.chunk_count() == report.chunks_total
        finally:
            snap.close()
    assert (
        open_snapshot(pg_url, repo=identity, space=space, chunking=chunking, commits=[c1, c2])
        is None
    )
    # Nothing dangling: every chunk row belongs to a version some snapshot lists.
    with psycopg.connect(pg_url) as conn:
        orphans = conn.execute(
            "SELECT count(*) FROM codeqa.chunks c WHERE NOT EXISTS (SELECT 1 FROM "
            "codeqa.snapshot_files sf WHERE sf.path = c.path AND sf.sha256 = c.file_sha)"
        ).fetchone()[0]
    assert orphans == 0


def test_grace_period_and_other_refs_keep_snapshots(tmp_path: Path, pg_url: str) -> None:
    root = tmp_path / "repo"
    make_repo(root, TREE)
    git(root, "branch", "release")
    _publish(pg_url, root, ref="release")
    release = git(root, "rev-parse", "HEAD")
    commits = [release]
    for i, text in enumerate((V2, V3, AUTH_PY + "\n")):
        commits.append(_commit(root, text, f"c{i}"))
        report = _publish(pg_url, root, ref="main", keep=1, grace=timedelta(days=1))
        assert report.collected.snapshots == 0  # all younger than the grace period
    assert _snapshot_commits(pg_url) == set(commits)

    # Without grace, main keeps its newest; the release snapshot is the newest of its ref.
    commits.append(_commit(root, V2 + "\n", "c4"))
    report = _publish(pg_url, root, ref="main", keep=1)
    assert report.collected.snapshots == 3
    assert _snapshot_commits(pg_url) == {release, commits[-1]}


def test_a_crashed_publish_is_collected_after_a_day(tmp_path: Path, pg_url: str) -> None:
    root = tmp_path / "repo"
    make_repo(root, TREE)
    _publish(pg_url, root)
    with psycopg.connect(pg_url) as conn:
        conn.execute(
            "INSERT INTO codeqa.snapshots(repo_id, commit, ref, space_id, chunking, started_at) "
            "SELECT repo_id, 'dead', 'main', space_id, chunking, now() - interval '2 days' FROM "
            "codeqa.snapshots"
        )
        conn.execute(
            "INSERT INTO codeqa.snapshots(repo_id, commit, ref, space_id, chunking) SELECT "
            "repo_id, 'running', 'main', space_id, chunking FROM codeqa.snapshots WHERE commit <> "
            "'dead'"
        )
    _commit(root, V2, "next")
    report = _publish(pg_url, root, keep=5)
    assert report.collected.snapshots == 1
    assert "dead" not in _snapshot_commits(pg_url) and "running" in _snapshot_commits(pg_url)
