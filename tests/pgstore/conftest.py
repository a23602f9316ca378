"""A real PostgreSQL + pgvector server from the `pgserver` wheel, one per test session.

pgserver runs the server binary it ships from a data directory we give it. As root it
creates (once) a system user `pgserver` to own the data directory, since postgres refuses
to run as root; as any other user it runs as that user. It listens on a Unix socket in the
data directory only (no TCP port), so tests stay on loopback. Each test gets a fresh
database with the `vector` extension created, so tests never see each other's snapshots.
"""

from __future__ import annotations

import itertools
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

pgserver = pytest.importorskip("pgserver", reason="pgserver is installed with the dev extra")
psycopg = pytest.importorskip("psycopg", reason="psycopg is installed with the dev extra")

_counter = itertools.count()


class PgServer:
    def __init__(self, server: object, socket_dir: str) -> None:
        self.server = server
        self.socket_dir = socket_dir

    def url(self, database: str = "postgres", user: str = "postgres") -> str:
        return f"postgresql://{user}@/{database}?host={self.socket_dir}"

    def admin(self, sql: str, database: str = "postgres") -> None:
        with psycopg.connect(self.url(database), autocommit=True) as conn:
            conn.execute(sql)

    def stop(self) -> None:
        """Stop the server (for the database-down tests); `start` brings it back."""
        self.server._cleanup()  # type: ignore[attr-defined]

    def data_dir(self) -> Path:
        return Path(self.server.pgdata)  # type: ignore[attr-defined]


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    data = Path(tempfile.mkdtemp(prefix="codeqa-pg-")) / "pgdata"
    server = pgserver.get_server(data, cleanup_mode="delete")
    uri = server.get_uri()
    socket_dir = uri.split("host=", 1)[1].split("&", 1)[0]
    yield PgServer(server, socket_dir)
    server._cleanup()
    shutil.rmtree(data.parent, ignore_errors=True)


@pytest.fixture
def pg_url(pg_server: PgServer) -> str:
    """A fresh database with pgvector, as a store URL without a password."""
    name = f"codeqa_test_{next(_counter)}"
    pg_server.admin(f"CREATE DATABASE {name}")
    pg_server.admin("CREATE EXTENSION IF NOT EXISTS vector", database=name)
    return pg_server.url(name)


def git(root: Path, *args: str) -> str:
    done = subprocess.run(
        [
            "git",
            "-C",
            str(root),
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.com",
            "-c",
            "commit.gpgsign=false",
            *args,
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def make_repo(
    root: Path, files: dict[str, str], remote: str = "https://example.com/team/mono.git"
) -> str:
    """A git repository at `root` holding `files`, one commit; returns the commit."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    git(root, "remote", "add", "origin", remote)
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    return git(root, "rev-parse", "HEAD")
