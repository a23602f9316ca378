"""The shared snapshot's text arm (`pg.text_arm`) on the real Postgres: one scan serves the
chunk and the file ranking, membership is checked on the candidates, and a scan whose best
rows are mostly other versions is repeated with the check inside."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from codeqa_lsp.config import Settings
from codeqa_lsp.index.embedders.hashing import HashEmbedder
from codeqa_lsp.index.filters import SearchFilters
from codeqa_lsp.index.pg.publish import Publisher, spaces_for, workspace_identity
from codeqa_lsp.index.pg.snapshot import SharedSnapshot, open_snapshot
from codeqa_lsp.index.pg.text_arm import TextArm
from tests.pgstore.conftest import git, make_repo

SETTINGS = Settings(embedder="hash")
# Commit 1 holds six functions named after zebras in zoo.py; commit 2 renames them all and
# leaves one weak mention of a zebra in a docstring elsewhere. Both versions stay stored
# (nothing is garbage-collected), so the best-scoring zebra rows belong to commit 1 only.
ZEBRAS = "".join(f"def zebra_stripes_{i}(zebra):\n    return zebra + {i}\n\n\n" for i in range(6))
RENAMED = ZEBRAS.replace("zebra", "horse")
FARM = 'def feed(animals):\n    """Feeds every animal, the zebra last."""\n    return animals\n'


def _publish(url: str, root: Path) -> None:
    Publisher(url, root, SETTINGS, embedder=HashEmbedder(), keep=5).publish("main")


def _open(url: str, root: Path, commit: str) -> SharedSnapshot:
    space, chunking = spaces_for(HashEmbedder(), SETTINGS)
    snap = open_snapshot(
        url, repo=workspace_identity(root), space=space, chunking=chunking, commits=[commit]
    )
    assert snap is not None
    return snap


@pytest.fixture
def two_commits(tmp_path: Path, pg_url: str) -> Iterator[tuple[SharedSnapshot, SharedSnapshot]]:
    root = tmp_path / "repo"
    first = make_repo(root, {"zoo.py": ZEBRAS, "farm.py": "def feed(animals):\n    return 1\n"})
    _publish(pg_url, root)
    (root / "zoo.py").write_text(RENAMED)
    (root / "farm.py").write_text(FARM)
    git(root, "commit", "-qam", "rename")
    second = git(root, "rev-parse", "HEAD")
    _publish(pg_url, root)
    old, new = _open(pg_url, root, first), _open(pg_url, root, second)
    yield old, new
    old.close()
    new.close()


def _counting(snap: SharedSnapshot) -> tuple[TextArm, list[str]]:
    statements: list[str] = []

    def rows(sql: str, args: Sequence[Any] = ()) -> list[Any]:
        statements.append(sql)
        return snap._rows(sql, args, prepare=False)

    arm = TextArm(rows, repo_id=snap.repo_id, space_id=snap.space_id, snapshot_id=snap.snapshot_id)
    return arm, statements


def test_other_versions_never_rank_and_the_order_is_the_exact_scans(
    two_commits: tuple[SharedSnapshot, SharedSnapshot],
) -> None:
    old, new = two_commits
    # The old snapshot: every zebra function, in the order the exact scan ranks them.
    old_ranked = old.bm25_terms(["zebra", "stripes"], 10)
    assert {c.symbol for c, _ in old_ranked} >= {f"zebra_stripes_{i}" for i in range(6)}
    exact = old.text._scan(["zebra", "stripes"], 10, 10, None, exact=True).members
    assert [(c.id, s) for c, s in old_ranked] == [(c.id, s) for _, s, c in exact if c]
    # The new snapshot: only its own versions, although the old rows score higher.
    new_ranked = new.bm25_terms(["zebra"], 10)
    assert [c.symbol for c, _ in new_ranked] == ["feed"]
    assert "the zebra last" in new_ranked[0][0].text
    assert all("zebra_stripes" not in c.text for c, _ in new_ranked)


def test_mostly_other_versions_among_the_candidates_rescans_with_membership_inside(
    two_commits: tuple[SharedSnapshot, SharedSnapshot],
) -> None:
    _, new = two_commits
    python = SearchFilters(languages=("python",))
    # One chunk wanted, two candidates scored: both are old zebra functions, so the scan is
    # repeated with membership inside it, which finds the weak mention in farm.py.
    [(chunk, score)] = new.bm25_terms(["zebra"], 1, python)
    assert chunk.path == "farm.py" and score > 0
    assert new.text.exact_scans == 1
    # Kept: the same terms and filters need no statement again.
    arm, statements = _counting(new)
    assert arm.chunks(["zebra"], 1, python) == [(chunk, score)]
    assert arm.exact_scans == 1
    assert arm.chunks(["zebra"], 1, python) == [(chunk, score)]
    assert sum("tsv @@" in sql for sql in statements) == 2


def test_the_file_ranking_comes_from_the_chunk_scan(
    two_commits: tuple[SharedSnapshot, SharedSnapshot],
) -> None:
    old, _ = two_commits
    terms = ["zebra", "feed"]
    arm, statements = _counting(old)
    chunks = arm.chunks(terms, 100)
    scans = sum("tsv @@" in sql for sql in statements)
    files = arm.files(terms, 10)
    assert sum("tsv @@" in sql for sql in statements) == scans == 1
    # The same ranking as a reader that scans for the files alone: a file sums its chunks.
    fresh, _ = _counting(old)
    assert files == fresh.files(terms, 10)
    assert {p for p, _ in files} == {"zoo.py", "farm.py"}
    for path, total in files:
        assert total == pytest.approx(sum(s for c, s in chunks if c.path == path))
