"""The client side: a workspace reading the shared snapshot of the nearest published
commit, with only what differs in the working tree indexed locally; and the fallback
when the database goes away. Through the engine (`CodeBase`), real git, real Postgres."""

from __future__ import annotations

from pathlib import Path

import pytest

from codeqa_lsp.answering.citations import CitationResolver
from codeqa_lsp.config import Settings
from codeqa_lsp.engine import CodeBase
from codeqa_lsp.index.embedders.hashing import HashEmbedder
from codeqa_lsp.index.overlay import OverlayIndexer
from codeqa_lsp.index.pg.publish import Publisher
from tests.pgstore.conftest import PgServer, git, make_repo
from tests.pgstore.trees import AUTH_PY, TREE

NEW_FEATURE = '''def export_invoice_pdf(invoice):
    """Render an invoice as a PDF document."""
    return render(invoice, format="pdf")
'''


def _published_checkout(tmp_path: Path, url: str) -> Path:
    """A repository whose main is published, then edited without committing: auth.py
    changed, a new file added, router.js deleted."""
    root = tmp_path / "repo"
    make_repo(root, TREE)
    Publisher(url, root, Settings(embedder="hash"), embedder=HashEmbedder()).publish("main")
    (root / "app/auth.py").write_text(AUTH_PY.replace("partition", "xylophone_partition"))
    (root / "app/new_feature.py").write_text(NEW_FEATURE)
    (root / "web/router.js").unlink()
    return root


def _workspace(root: Path, tmp_path: Path, url: str) -> CodeBase:
    return CodeBase(root, Settings(embedder="hash", index_dir=str(tmp_path / "index"), store=url))


def _own_database(pg_server: PgServer, tmp_path: Path, database: str) -> tuple[str, CodeBase]:
    """A database of the test's own (it will be dropped, locked or frozen), the checkout
    published to it, and a workspace reading it."""
    pg_server.admin(f"CREATE DATABASE {database}")
    url = pg_server.url(database)
    return url, _workspace(_published_checkout(tmp_path, url), tmp_path, url)


def test_local_index_holds_only_what_differs(tmp_path: Path, pg_url: str) -> None:
    root = _published_checkout(tmp_path, pg_url)
    ws = _workspace(root, tmp_path, pg_url)
    try:
        overlay = ws.indexer
        assert isinstance(overlay, OverlayIndexer)
        report = ws.index()
        assert report.notice is None
        assert overlay.shared is not None
        local = overlay.local
        assert set(local.store.files()) == {"app/auth.py", "app/new_feature.py"}
        # Nothing of the unchanged tree was embedded here: only the two local files' chunks.
        assert local.embedder.texts == len(local.chunks())
        assert report.chunks_total == len(ws.chunks())

        top = ws.search("xylophone partition header").hits[0].chunk
        assert top.path == "app/auth.py" and "xylophone" in top.text
        # The shared (old) version of auth.py is never returned, the deleted file neither.
        for query in ("parse bearer token", "match route url", "refresh session"):
            for hit in ws.search(query).hits:
                assert hit.chunk.path != "web/router.js"
                if hit.chunk.path == "app/auth.py":
                    assert hit.chunk in local.chunks(path="app/auth.py")
        retry = ws.search("retry with backoff").hits[0].chunk
        assert retry.path == "net/retry.go" and retry not in local.chunks()
        assert ws.search("invoice pdf").hits[0].chunk.symbol == "export_invoice_pdf"
        assert [c.path for c in ws.definitions("RetryWithBackoff")] == ["net/retry.go"]
        assert ws.definitions("matchRoute") == []
        assert {c.path for c in ws.chunks()} == {
            "app/auth.py",
            "app/new_feature.py",
            "net/retry.go",
            "docs/guide.md",
        }
        status = ws.status()
        assert status.files == 4 and status.chunks == report.chunks_total
    finally:
        ws.close()


def test_shared_chunk_whose_file_changed_is_stale_until_saved(tmp_path: Path, pg_url: str) -> None:
    root = _published_checkout(tmp_path, pg_url)
    ws = _workspace(root, tmp_path, pg_url)
    try:
        ws.index()
        [retry] = ws.definitions("RetryWithBackoff")
        [guide] = [c for c in ws.chunks() if c.path == "docs/guide.md"][:1]
        assert CitationResolver(ws).resolve(1, guide).stale is False  # type: ignore[union-attr]
        assert CitationResolver(ws).resolve(1, retry).stale is False  # type: ignore[union-attr]
        # Edited on disk (the editor has not told us yet): the shared chunk is now stale.
        path = root / "net/retry.go"
        path.write_text("// Package netutil.\n" + path.read_text())
        assert CitationResolver(ws).resolve(1, retry).stale is True  # type: ignore[union-attr]
        # The save reaches the overlay: the file is now local, its citation current again.
        ws.update_file("net/retry.go")
        [moved] = ws.definitions("RetryWithBackoff")
        assert moved.start_line == retry.start_line + 1
        assert CitationResolver(ws).resolve(1, moved).stale is False  # type: ignore[union-attr]
        # A dirty buffer wins too.
        ws.update_file("docs/guide.md", text="# Guide\n\nRoll out with canary releases.\n")
        top = ws.search("canary releases").hits[0].chunk
        assert top.path == "docs/guide.md" and "canary" in top.text
    finally:
        ws.close()


def test_new_local_commits_use_the_nearest_published_ancestor(tmp_path: Path, pg_url: str) -> None:
    root = tmp_path / "repo"
    published = make_repo(root, TREE)
    Publisher(pg_url, root, Settings(embedder="hash"), embedder=HashEmbedder()).publish("main")
    git(root, "checkout", "-qb", "feature")
    (root / "app/new_feature.py").write_text(NEW_FEATURE)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "feature work")
    ws = _workspace(root, tmp_path, pg_url)
    try:
        ws.index()
        overlay = ws.indexer
        assert isinstance(overlay, OverlayIndexer) and overlay.shared is not None
        assert overlay.shared.commit == published
        assert set(overlay.local.store.files()) == {"app/new_feature.py"}
        assert ws.search("invoice pdf").hits[0].chunk.path == "app/new_feature.py"
    finally:
        ws.close()


def test_a_file_of_a_newly_published_snapshot_resolves_from_a_mention(
    tmp_path: Path, pg_url: str
) -> None:
    """The searcher's cached path resolver follows the shared snapshot, not only the local
    index: here the local index is empty before and after the new snapshot."""
    trace = (
        "Traceback (most recent call last):\n"
        '  File "/srv/app/new_feature.py", line 3, in export_invoice_pdf\n'
        "ValueError: pdf\n"
    )
    root = tmp_path / "repo"
    make_repo(root, TREE)
    Publisher(pg_url, root, Settings(embedder="hash"), embedder=HashEmbedder()).publish("main")
    ws = _workspace(root, tmp_path, pg_url)
    try:
        ws.index()
        overlay = ws.indexer
        assert isinstance(overlay, OverlayIndexer)
        assert "app/new_feature.py" not in ws.searcher._evidence(trace).paths
        local_before = overlay.local.paths_generation()
        (root / "app/new_feature.py").write_text(NEW_FEATURE)
        git(root, "add", "-A")
        git(root, "commit", "-qm", "invoices")
        Publisher(pg_url, root, Settings(embedder="hash"), embedder=HashEmbedder()).publish("main")
        ws.index()
        assert overlay.local.paths_generation() == local_before  # nothing differs locally
        assert ws.searcher._evidence(trace).paths.get("app/new_feature.py") == 1.0
    finally:
        ws.close()


def test_database_down_at_start_falls_back_to_a_full_local_index(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    make_repo(root, TREE)
    down = "postgresql://postgres@/codeqa?host=" + str(tmp_path / "no-server-here")
    ws = _workspace(root, tmp_path, down)
    try:
        report = ws.index()
        assert report.notice is not None and "shared index unavailable" in report.notice
        assert "\n" not in report.notice
        assert ws.status().files == 4  # indexed normally
        assert ws.search("retry with backoff").hits[0].chunk.path == "net/retry.go"
        assert ws.index().notice is None  # said once
    finally:
        ws.close()


def test_no_snapshot_published_falls_back_and_says_why(tmp_path: Path, pg_url: str) -> None:
    root = tmp_path / "repo"
    make_repo(root, TREE)
    other = tmp_path / "other"
    make_repo(
        other, {"x.py": "def x():\n    return 1\n"}, remote="https://example.com/team/other.git"
    )
    Publisher(pg_url, other, Settings(embedder="hash"), embedder=HashEmbedder()).publish("main")
    ws = _workspace(root, tmp_path, pg_url)
    try:
        report = ws.index()
        assert report.notice is not None and "no snapshot of example.com/team/mono" in report.notice
        assert ws.search("retry with backoff").hits[0].chunk.path == "net/retry.go"
    finally:
        ws.close()


def test_database_lost_mid_session_falls_back_without_failing_a_query(
    tmp_path: Path, pg_server: PgServer
) -> None:
    _, ws = _own_database(pg_server, tmp_path, "codeqa_doomed")
    try:
        ws.index()
        overlay = ws.indexer
        assert isinstance(overlay, OverlayIndexer) and overlay.shared is not None
        assert ws.search("retry with backoff").hits[0].chunk.path == "net/retry.go"
        pg_server.admin("DROP DATABASE codeqa_doomed WITH (FORCE)")
        # The query in flight is answered from the local index, and the overlay switches.
        response = ws.search("xylophone partition")
        assert response.hits and response.hits[0].chunk.path == "app/auth.py"
        assert overlay.shared is None
        background = overlay._background
        assert background is not None
        background.join()
        # The local index now holds the whole tree.
        assert ws.search("retry with backoff").hits[0].chunk.path == "net/retry.go"
        report = ws.index()
        assert report.notice is not None and "shared index unavailable" in report.notice
    finally:
        ws.close()


@pytest.mark.parametrize(
    "bad", ["postgresql://u:pw@host/db", "mysql://host/db", "host=x password=pw"]
)
def test_store_setting_refuses_passwords_without_echoing_them(bad: str) -> None:
    settings, problems = Settings.from_wire({"store": bad})
    assert settings.store is None
    assert problems and "pw" not in problems[0].replace("password", "")


def test_slow_database_times_out_and_falls_back(tmp_path: Path, pg_server: PgServer) -> None:
    """A statement blocked longer than the read timeout (a lock held by a migration, an
    overloaded server) is cancelled by Postgres; the query is answered locally."""
    import psycopg

    url, ws = _own_database(pg_server, tmp_path, "codeqa_slow")
    try:
        ws.index()
        overlay = ws.indexer
        assert isinstance(overlay, OverlayIndexer) and overlay.shared is not None
        with psycopg.connect(url) as blocker:
            blocker.execute("LOCK TABLE codeqa.chunks IN ACCESS EXCLUSIVE MODE")
            response = ws.search("xylophone partition")
            assert response.hits[0].chunk.path == "app/auth.py"
            assert overlay.shared is None
            blocker.rollback()
        background = overlay._background
        assert background is not None
        background.join()
        assert ws.search("retry with backoff").hits[0].chunk.path == "net/retry.go"
    finally:
        ws.close()


def test_hung_database_is_cut_off_and_said_once_to_the_listener(
    tmp_path: Path, pg_server: PgServer
) -> None:
    """A server that stops answering altogether (its backends frozen: no statement timeout
    can fire) costs one query the read deadline, then the listener hears it once and the
    workspace answers locally; nothing waits for the frozen server again."""
    import os
    import signal

    import psycopg

    url, ws = _own_database(pg_server, tmp_path, "codeqa_hung")
    heard: list[str] = []
    ws.set_notice_listener(heard.append)
    frozen: list[int] = []
    try:
        ws.index()
        overlay = ws.indexer
        assert isinstance(overlay, OverlayIndexer) and overlay.shared is not None
        assert ws.search("retry with backoff").hits[0].chunk.path == "net/retry.go"
        with psycopg.connect(url, autocommit=True) as admin:
            frozen = [
                r[0]
                for r in admin.execute(
                    "SELECT pid FROM pg_stat_activity WHERE datname = 'codeqa_hung' "
                    "AND application_name = 'codeqa-lsp'"
                ).fetchall()
            ]
        assert frozen
        for pid in frozen:
            os.kill(pid, signal.SIGSTOP)
        response = ws.search("xylophone partition")
        assert response.hits and response.hits[0].chunk.path == "app/auth.py"
        assert overlay.shared is None
        assert len(heard) == 1 and "shared index unavailable" in heard[0] and "\n" not in heard[0]
        ws.search("xylophone partition")
        assert len(heard) == 1  # said once
        background = overlay._background
        assert background is not None
        background.join()
        assert ws.search("retry with backoff").hits[0].chunk.path == "net/retry.go"
    finally:
        for pid in frozen:
            os.kill(pid, signal.SIGCONT)
        ws.close()


def test_every_text_arm_of_the_search_reads_the_shared_snapshot(
    tmp_path: Path, pg_url: str
) -> None:
    """The searcher's keyword arm, file ranking, long-query IDF and path list all see the
    shared files (none of them may fall through to the local index alone), and local
    versions still replace shared ones."""
    root = _published_checkout(tmp_path, pg_url)
    ws = _workspace(root, tmp_path, pg_url)
    try:
        ws.index()
        overlay = ws.indexer
        assert isinstance(overlay, OverlayIndexer) and overlay.shared is not None
        keyword = overlay.bm25_terms(["retrywithbackoff", "backoff"], 5)
        assert keyword and keyword[0][0].path == "net/retry.go"
        assert all(
            c.path != "web/router.js" for c, _ in overlay.bm25_terms(["matchroute", "route"], 10)
        )
        local_auth = overlay.bm25_terms(["xylophone"], 5)
        assert local_auth and local_auth[0][0].path == "app/auth.py"
        assert [p for p, _ in overlay.file_bm25(["backoff"], 5)][:1] == ["net/retry.go"]
        assert "web/router.js" not in overlay.indexed_paths()
        assert {"net/retry.go", "app/auth.py", "app/new_feature.py"} <= set(overlay.indexed_paths())
        counts, total = overlay.file_document_counts(["backoff", "xylophone"])
        assert counts["backoff"] >= 1 and counts["xylophone"] >= 1 and total >= 4
        ids = overlay.definitions_in_paths(["net/retry.go", "app/auth.py"])
        assert {path for _, path, _ in ids} == {"net/retry.go", "app/auth.py"}
        assert {c.path for c in overlay.get_chunks([cid for cid, _, _ in ids])} == {
            "net/retry.go",
            "app/auth.py",
        }
        sizes = overlay.file_sizes(["net/retry.go", "app/auth.py", "web/router.js"])
        assert set(sizes) == {"net/retry.go", "app/auth.py"}  # the deleted file has none
        assert sizes["app/auth.py"] == (root / "app/auth.py").stat().st_size  # local: the file
        assert 0 < sizes["net/retry.go"] <= (root / "net/retry.go").stat().st_size  # shared: chunks
        # The whole keyword-only pipeline (what a client without a ready embedder runs).
        ws.keyword_only = True
        assert ws.search("retry with backoff").hits[0].chunk.path == "net/retry.go"
    finally:
        ws.close()


def test_a_collected_snapshot_is_noticed_by_an_open_session(
    tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server left open while publishes collect its snapshot finds out at its next check
    and says so, instead of silently reading an empty snapshot."""
    from datetime import timedelta

    from codeqa_lsp.index.pg import snapshot as snapshot_module

    root = _published_checkout(tmp_path, pg_url)
    ws = _workspace(root, tmp_path, pg_url)
    heard: list[str] = []
    ws.set_notice_listener(heard.append)
    try:
        ws.index()
        overlay = ws.indexer
        assert isinstance(overlay, OverlayIndexer) and overlay.shared is not None
        # CI publishes a newer commit elsewhere, collecting everything but the newest.
        ci = tmp_path / "ci"
        git(tmp_path, "clone", "-q", str(root), str(ci))
        git(ci, "remote", "set-url", "origin", "https://example.com/team/mono.git")
        (ci / "net/extra.py").write_text("def extra():\n    return 2\n")
        git(ci, "add", "-A")
        git(ci, "commit", "-qm", "extra")
        Publisher(
            pg_url,
            ci,
            Settings(embedder="hash"),
            embedder=HashEmbedder(),
            keep=1,
            grace=timedelta(0),
        ).publish("main")
        monkeypatch.setattr(snapshot_module, "RECHECK_SECONDS", 0.0)  # the next check is due
        response = ws.search("xylophone partition")
        assert response.hits[0].chunk.path == "app/auth.py"
        assert overlay.shared is None
        assert len(heard) == 1 and "garbage-collected" in heard[0]
    finally:
        ws.close()


def test_closing_a_snapshot_never_finishes_a_connection_another_thread_reads_from(
    tmp_path: Path, pg_server: PgServer
) -> None:
    """A query that loses the database closes the snapshot while the search's other arm is
    still reading on its own connection. libpq must not finish a connection under the
    thread inside it (freed memory: the process aborted once in CI, later, in hnswlib): the
    busy connection is severed, and its own thread closes it when its read returns."""
    import threading
    import time

    import psycopg

    url, ws = _own_database(pg_server, tmp_path, "codeqa_closing")
    try:
        ws.index()
        overlay = ws.indexer
        assert isinstance(overlay, OverlayIndexer) and overlay.shared is not None
        snapshot = overlay.shared
        outcome: list[BaseException | int] = []
        closers: list[str] = []

        def read() -> None:
            try:
                outcome.append(snapshot.chunk_count())
            except BaseException as exc:
                outcome.append(exc)

        with (
            psycopg.connect(url, autocommit=True) as blocker,
            psycopg.connect(url, autocommit=True) as watcher,
            blocker.transaction(),
        ):
            blocker.execute("LOCK TABLE codeqa.chunks IN ACCESS EXCLUSIVE MODE")
            reader = threading.Thread(target=read, name="reader")
            reader.start()
            waiting = "SELECT pid FROM pg_stat_activity WHERE datname = 'codeqa_closing' "
            waiting += "AND application_name = 'codeqa-lsp' AND wait_event_type = 'Lock'"
            pids: list[tuple[int]] = []
            deadline = time.monotonic() + 10
            while not pids and time.monotonic() < deadline:
                pids = watcher.execute(waiting).fetchall()
                time.sleep(0.02)
            conns = [c for c in snapshot._all if (c.info.backend_pid,) in pids]
            assert len(conns) == 1  # the reader's, blocked on the lock
            finish = conns[0].close

            def recording_close() -> None:
                closers.append(threading.current_thread().name)
                finish()

            conns[0].close = recording_close
            snapshot.close()
            reader.join(timeout=10)
        assert not reader.is_alive()
        assert len(outcome) == 1 and isinstance(outcome[0], ConnectionError)
        assert conns[0].closed and closers == ["reader"]
    finally:
        ws.close()
