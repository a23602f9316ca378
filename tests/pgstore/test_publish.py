"""Publishing snapshots: incremental writes, embedding reuse, refusals, roles, the CLI."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import psycopg
import pytest

from codeqa_lsp.config import Settings
from codeqa_lsp.index.embedders.hashing import HashEmbedder
from codeqa_lsp.index.pg.publish import Publisher, PublishError, spaces_for, workspace_identity
from codeqa_lsp.index.pg.schema import grants_sql
from codeqa_lsp.index.pg.snapshot import open_snapshot
from tests.pgstore.conftest import PgServer, git, make_repo
from tests.pgstore.trees import AUTH_PY, TREE

SETTINGS = Settings(embedder="hash")


def _publish(url: str, root: Path, ref: str = "main") -> tuple[Publisher, object]:
    publisher = Publisher(url, root, SETTINGS, embedder=HashEmbedder())
    return publisher, publisher.publish(ref)


def test_second_commit_writes_only_the_changed_file_and_embeds_only_new_text(
    tmp_path: Path, pg_url: str
) -> None:
    root = tmp_path / "repo"
    first = make_repo(root, TREE)
    publisher, report = _publish(pg_url, root)
    assert report.files_seen == 4 and report.files_written == 4  # type: ignore[attr-defined]
    assert report.embedded == report.chunks_added == report.chunks_total  # type: ignore[attr-defined]
    assert report.skipped["secret-name"] == 1 and report.skipped["secret-content"] == 1  # type: ignore[attr-defined]

    # One function of auth.py changes; the rest of that file keeps its text.
    (root / "app/auth.py").write_text(AUTH_PY.replace("return token if", "return token.strip() if"))
    git(root, "commit", "-qam", "strip tokens")
    second_publisher, second = _publish(pg_url, root)
    assert second.files_seen == 4 and second.files_written == 1  # type: ignore[attr-defined]
    auth_chunks = second.chunks_added  # type: ignore[attr-defined]
    assert second.embedded == 1 and second.reused == auth_chunks - 1  # type: ignore[attr-defined]
    assert second_publisher.embedder.texts == 1

    # Both commits stay queryable, each with its own version of auth.py.
    space, chunking = spaces_for(publisher.embedder, SETTINGS)
    identity = workspace_identity(root)
    old = open_snapshot(pg_url, repo=identity, space=space, chunking=chunking, commits=[first])
    new = open_snapshot(
        pg_url,
        repo=identity,
        space=space,
        chunking=chunking,
        commits=[git(root, "rev-parse", "HEAD")],
    )
    assert old is not None and new is not None
    try:
        [old_fn] = old.definitions("parse_bearer_token")
        [new_fn] = new.definitions("parse_bearer_token")
        assert "token.strip()" in new_fn.text and "token.strip()" not in old_fn.text
        assert old.chunk_count() == new.chunk_count()
    finally:
        old.close()
        new.close()


def test_republishing_a_commit_is_a_no_op(tmp_path: Path, pg_url: str) -> None:
    root = tmp_path / "repo"
    make_repo(root, TREE)
    _publish(pg_url, root)
    publisher, again = _publish(pg_url, root)
    assert again.already_published  # type: ignore[attr-defined]
    assert publisher.embedder.texts == 0


def test_refuses_a_dirty_checkout_or_another_ref(tmp_path: Path, pg_url: str) -> None:
    root = tmp_path / "repo"
    make_repo(root, TREE)
    git(root, "branch", "feature")
    (root / "web/router.js").write_text("// changed\n")
    git(root, "commit", "-qam", "change")
    with pytest.raises(PublishError, match="check out feature first"):
        _publish(pg_url, root, ref="feature")
    (root / "web/router.js").write_text("// dirty\n")
    with pytest.raises(PublishError, match="modified"):
        _publish(pg_url, root)


def test_reader_role_reads_and_cannot_write(
    tmp_path: Path, pg_server: PgServer, pg_url: str
) -> None:
    """The README's grants, executed: the writer publishes, the reader only reads."""
    database = pg_url.split("@/", 1)[1].split("?")[0]
    script = "\n".join(line.split("--", 1)[0] for line in grants_sql(database).splitlines())
    for statement in script.split(";"):
        sql = statement.strip()
        if not sql:
            continue
        with contextlib.suppress(psycopg.errors.DuplicateObject):  # roles are cluster-wide
            pg_server.admin(sql, database=database)
    root = tmp_path / "repo"
    commit = make_repo(root, TREE)
    writer = pg_server.url(database, user="codeqa_writer")
    reader = pg_server.url(database, user="codeqa_reader")
    _publish(writer, root)
    space, chunking = spaces_for(HashEmbedder(), SETTINGS)
    snapshot = open_snapshot(
        reader, repo=workspace_identity(root), space=space, chunking=chunking, commits=[commit]
    )
    assert snapshot is not None
    try:
        assert snapshot.definitions("matchRoute")
    finally:
        snapshot.close()
    with (
        psycopg.connect(reader, autocommit=True) as conn,
        pytest.raises(psycopg.errors.InsufficientPrivilege),
    ):
        conn.execute("DELETE FROM codeqa.snapshots")
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        _publish(reader, root)  # the reader cannot publish either


def test_cli_publishes_and_never_prints_a_password(
    tmp_path: Path, pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from codeqa_lsp.cli import main

    root = tmp_path / "repo"
    make_repo(root, TREE)
    common = ["--embedder", "hash", "--index-dir", str(tmp_path / "index")]
    assert main(["index", "--store", pg_url, str(root), "--ref", "main", *common, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (
        report["files"] == 4 and report["chunks_total"] > 0 and report["already_published"] is False
    )
    assert report["collected"] == {"snapshots": 0, "file_versions": 0, "chunks": 0}
    assert main(["index", "--store", pg_url, str(root), "--ref", "main", *common]) == 0
    assert "already published" in capsys.readouterr().out

    secret_url = pg_url.replace("postgres@", "postgres:sw0rdfish@")
    assert main(["index", "--store", secret_url, str(root), "--ref", "main", *common]) != 0
    out = capsys.readouterr()
    assert "PGPASSWORD" in out.err and "sw0rdfish" not in out.err + out.out

    unreachable = "postgresql://postgres@/codeqa?host=" + str(tmp_path / "no-server")
    assert main(["index", "--store", unreachable, str(root), *common]) != 0
    out = capsys.readouterr()
    assert "unreachable" in out.err and "Traceback" not in out.err
