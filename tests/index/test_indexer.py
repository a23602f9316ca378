"""The indexer end to end with the real chunker, SQLite, hnswlib and the hash embedder."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path

from codeqa_lsp.config import Settings
from codeqa_lsp.index.filters import SearchFilters
from codeqa_lsp.index.indexer import Indexer, default_index_dir
from tests.index.conftest import snapshot

MakeWorkspace = Callable[..., Path]
OpenIndexer = Callable[[Path, Settings], Indexer]
HashSettings = Callable[..., Settings]


def _symbols(hits: list) -> list[str]:
    return [chunk.symbol for chunk, _ in hits]


def test_full_index_then_both_arms_find_a_function(
    make_workspace: MakeWorkspace, hash_settings: HashSettings, open_indexer: OpenIndexer
) -> None:
    root = make_workspace()
    indexer = open_indexer(root, hash_settings())
    report = indexer.index()
    assert report.files_seen == 6 and report.files_changed == 6
    assert report.chunks_total == indexer.status().chunks > 0
    assert report.embedded == report.chunks_total
    assert indexer.coverage() == 1.0
    assert _symbols(indexer.bm25("compute_total_3_2", 3))[0] == "compute_total_3_2"
    assert _symbols(indexer.dense("compute total 3 2 values scale", 5))[0].startswith(
        "compute_total_3_"
    )
    snapshot(indexer)


def test_edit_one_function_reembeds_exactly_one_chunk(
    make_workspace: MakeWorkspace, hash_settings: HashSettings, open_indexer: OpenIndexer
) -> None:
    root = make_workspace()
    indexer = open_indexer(root, hash_settings())
    indexer.index()
    path = root / "pkg" / "mod2.py"
    path.write_text(
        path.read_text().replace("return total + 2\n", "return zanzibar_factor(total) + 2\n", 1)
    )
    calls = indexer.embedder.calls
    update = indexer.update_file("pkg/mod2.py")
    assert update.embedded == 1 and update.chunks_added == 1 and update.chunks_removed == 1
    assert indexer.embedder.calls == calls + 1
    hits = indexer.bm25("zanzibar", 5)
    assert _symbols(hits) == ["compute_total_2_0"]
    dense_top = indexer.dense("zanzibar factor", 1)[0][0]
    assert "zanzibar_factor" in dense_top.text
    old = [c for c in indexer.chunks(path="pkg/mod2.py") if c.symbol == "compute_total_2_0"]
    assert len(old) == 1 and "zanzibar" in old[0].text
    assert indexer.file_hash("pkg/mod2.py") == hashlib.sha256(path.read_bytes()).hexdigest()
    snapshot(indexer)


def test_lines_added_above_move_the_kept_chunks_citations(
    make_workspace: MakeWorkspace, hash_settings: HashSettings, open_indexer: OpenIndexer
) -> None:
    """Code added above a function keeps its text, so its id and vector: nothing to embed,
    but its lines and bytes moved, and a citation must jump to where it is now."""
    root = make_workspace()
    indexer = open_indexer(root, hash_settings())
    indexer.index()
    path = root / "pkg" / "mod2.py"
    before = {c.symbol: c for c in indexer.chunks(path="pkg/mod2.py")}
    added = "import os\n\n\ndef zanzibar_helper():\n    return os.sep\n\n\n"
    path.write_text(added + path.read_text())
    update = indexer.update_file("pkg/mod2.py")
    # Embedded: the new function and the module block that gained the import; no other.
    assert (update.embedded, update.chunks_added, update.chunks_removed) == (2, 2, 1)
    data = path.read_bytes()
    lines = data.decode().splitlines()
    shift = added.count("\n")
    for chunk in indexer.chunks(path="pkg/mod2.py"):
        if chunk.symbol not in before or chunk.kind == "module":  # the module block changed
            continue
        old = before[chunk.symbol]
        assert (chunk.id, chunk.start_line, chunk.end_line) == (
            old.id,
            old.start_line + shift,
            old.end_line + shift,
        )
        if chunk.kind != "class":  # a class skeleton elides its methods' bodies
            assert data[chunk.start_byte : chunk.end_byte].decode() == chunk.text
        assert lines[chunk.start_line - 1].strip() == chunk.text.splitlines()[0].strip()
    hit = indexer.bm25("compute_total_2_0", 1)[0][0]
    assert hit.start_line == before["compute_total_2_0"].start_line + shift
    snapshot(indexer)


def test_warm_start_makes_zero_embedding_calls(
    make_workspace: MakeWorkspace, hash_settings: HashSettings, open_indexer: OpenIndexer
) -> None:
    root = make_workspace()
    settings = hash_settings()
    first = Indexer(root, settings)
    first.index()
    before = snapshot(first)
    first.close()
    second = open_indexer(root, settings)
    report = second.index()
    assert report.embedded == 0 and second.embedder.calls == 0
    assert report.files_changed == 0 and report.rebuilt_reason is None
    assert snapshot(second) == before
    # Touching a file without changing it re-hashes but re-chunks and re-embeds nothing.
    target = root / "pkg" / "mod1.py"
    os.utime(target, (1, 1))
    assert second.index().embedded == 0


def test_deleted_file_leaves_both_arms(
    make_workspace: MakeWorkspace, hash_settings: HashSettings, open_indexer: OpenIndexer
) -> None:
    root = make_workspace()
    indexer = open_indexer(root, hash_settings())
    indexer.index()
    (root / "pkg" / "mod4.py").unlink()
    report = indexer.index()
    assert report.files_removed == 1 and report.chunks_removed > 0
    assert not indexer.chunks(path="pkg/mod4.py")
    assert all(c.path != "pkg/mod4.py" for c, _ in indexer.bm25("compute_total_4_1 session4", 50))
    assert all(c.path != "pkg/mod4.py" for c, _ in indexer.dense("compute_total_4_1", 50))
    assert indexer.file_hash("pkg/mod4.py") is None
    snapshot(indexer)
    removed = indexer.remove_file("pkg/mod3.py")
    assert removed.chunks_removed > 0 and not indexer.chunks(path="pkg/mod3.py")
    snapshot(indexer)


def test_unsaved_buffer_text_and_secrets(
    make_workspace: MakeWorkspace, hash_settings: HashSettings, open_indexer: OpenIndexer
) -> None:
    root = make_workspace(files=2)
    indexer = open_indexer(root, hash_settings())
    indexer.index()
    buffer = "def brand_new_helper():\n    return 'quokka'\n"
    update = indexer.update_file("pkg/mod0.py", text=buffer)
    assert update.chunks_added >= 1
    assert _symbols(indexer.bm25("quokka", 3))[0] == "brand_new_helper"
    assert indexer.file_hash("pkg/mod0.py") == hashlib.sha256(buffer.encode()).hexdigest()
    # The next full index goes back to what is on disk.
    indexer.index()
    assert not indexer.bm25("quokka", 3)
    secret = indexer.update_file(
        ".env", text="OPENAI_API_KEY=sk-abcdefghijklmnopqrstuvwxyz0123456789\n"
    )
    assert secret.skipped_reason and not indexer.chunks(path=".env")


def test_reads_filters_and_lookups(
    make_workspace: MakeWorkspace, hash_settings: HashSettings, open_indexer: OpenIndexer
) -> None:
    root = make_workspace()
    (root / "README.md").write_text("# Sessions\n\nHow to send a request with a session.\n")
    indexer = open_indexer(root, hash_settings())
    indexer.index()
    defs = indexer.definitions("send_request_1")
    assert [c.symbol for c in defs] == ["Session1.send_request_1"]
    assert indexer.definitions("Session1.send_request_1") == defs
    assert indexer.definitions("ession1.send_request_1") == []
    only_py = SearchFilters(languages=("python",))
    assert {c.language for c, _ in indexer.bm25("session send request", 20, only_py)} == {"python"}
    only_md = SearchFilters(path_globs=("*.md",))
    assert {c.path for c, _ in indexer.dense("session send request", 20, only_md)} == {"README.md"}
    classes = SearchFilters(kinds=("class",), path_globs=("pkg/mod1.py",))
    assert {c.symbol for c, _ in indexer.bm25("session", 20, classes)} == {"Session1"}
    chunks = indexer.chunks(path="pkg/mod1.py")
    ids = [chunks[2].id, "missing", chunks[0].id]
    assert [c.id for c in indexer.get_chunks(ids)] == [chunks[2].id, chunks[0].id]
    preview = indexer.chunk_text("pkg/new.py", "def fresh():\n    pass\n")
    assert [c.symbol for c in preview] == ["fresh"] and not indexer.chunks(path="pkg/new.py")
    status = indexer.status()
    assert status.files == 7 and status.languages.get("markdown") and status.size_bytes > 0
    assert status.embedder == "hash" and status.coverage == 1.0 and status.last_updated
    assert indexer.bm25("", 5) == [] and indexer.bm25("!!! ???", 5) == []
    assert indexer.bm25('"AND" OR NEAR(', 5) == [] or True  # FTS syntax in a query never raises


def test_default_index_dir_honours_xdg(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    directory = default_index_dir(Path("/some/root"))
    assert directory.parent == tmp_path / "xdg" / "codeqa-lsp"
    assert directory.name == hashlib.sha256(b"/some/root").hexdigest()[:16]


def test_cancel_keeps_work_and_resumes(
    make_workspace: MakeWorkspace, hash_settings: HashSettings, open_indexer: OpenIndexer
) -> None:
    import threading

    from codeqa_lsp.index.indexer import FILES_PER_TRANSACTION

    files = 2 * FILES_PER_TRANSACTION + 5
    root = make_workspace(files=files, functions=1)
    indexer = open_indexer(root, hash_settings())
    cancel = threading.Event()

    def progress(p) -> None:  # type: ignore[no-untyped-def]
        if p.phase == "chunk":
            cancel.set()  # after the first stored batch

    report = indexer.index(progress=progress, cancel=cancel)
    assert report.cancelled and indexer.status().files == FILES_PER_TRANSACTION
    assert indexer.coverage() == 0.0  # embedding comes after chunking; BM25 already works
    assert indexer.bm25("compute_total_0_0", 1)[0][0].symbol == "compute_total_0_0"
    resumed = indexer.index()
    assert not resumed.cancelled and indexer.status().files == files
    assert resumed.files_changed == files - FILES_PER_TRANSACTION
    assert resumed.embedded == resumed.chunks_total
    snapshot(indexer)


def test_embedder_change_reembeds_everything(
    make_workspace: MakeWorkspace, tmp_path: Path, open_indexer: OpenIndexer
) -> None:
    from codeqa_lsp.index.embedders import HashEmbedder

    root = make_workspace(files=2)
    settings = Settings(embedder="hash", index_dir=str(tmp_path / "idx"))
    first = Indexer(root, settings)
    first.index()
    first.close()
    import codeqa_lsp.index.indexer as indexer_module

    original = indexer_module.create_embedder
    indexer_module.create_embedder = lambda s: HashEmbedder(dim=128)  # type: ignore[assignment]
    try:
        second = open_indexer(root, settings)
    finally:
        indexer_module.create_embedder = original
    report = second.index()
    assert report.rebuilt_reason and "embedder changed" in report.rebuilt_reason
    assert report.embedded == report.chunks_total > 0
    snapshot(second)


def test_close_during_a_full_index_stops_it_cleanly(
    make_workspace: MakeWorkspace, hash_settings: HashSettings
) -> None:
    import threading

    root = make_workspace(files=80, functions=2)
    settings = hash_settings()
    indexer = Indexer(root, settings)
    started = threading.Event()
    outcome: list[object] = []

    def run() -> None:
        try:
            outcome.append(indexer.index(progress=lambda p: started.set()))
        except BaseException as exc:
            outcome.append(exc)

    worker = threading.Thread(target=run)
    worker.start()
    started.wait()
    indexer.close()
    worker.join()
    assert len(outcome) == 1 and not isinstance(outcome[0], BaseException), outcome
    reopened = Indexer(root, settings)
    try:
        reopened.index()
        snapshot(reopened)
        assert reopened.status().files == 80
    finally:
        reopened.close()


def test_embedding_calls_take_chunks_in_length_order(
    tmp_path: Path, hash_settings: HashSettings, open_indexer: OpenIndexer
) -> None:
    """A full index hands the embedder texts sorted by length (within a window), so each
    padded model batch holds texts of similar length instead of the files' order."""
    root = tmp_path / "ws"
    (root / "pkg").mkdir(parents=True)
    for i in range(40):  # long and short functions interleaved in every file
        body = "\n".join(f"    total += {k} * values[{k}]" for k in range((i * 7) % 23))
        (root / "pkg" / f"m{i}.py").write_text(
            f"def short_{i}():\n    return {i}\n\n\ndef long_{i}(values):\n    total = 0\n"
            f"{body}\n    return total\n",
            "utf-8",
        )
    indexer = open_indexer(root, hash_settings())
    seen: list[str] = []
    inner = indexer.embedder.embed

    def recording(texts):  # type: ignore[no-untyped-def]
        seen.extend(texts)
        return inner(texts)

    indexer.embedder.embed = recording  # type: ignore[method-assign]
    report = indexer.index()
    assert report.embedded == len(seen) == report.chunks_total >= 80
    lengths = [len(text) for text in seen]
    assert lengths == sorted(lengths)
