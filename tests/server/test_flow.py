"""Issue 5's end-to-end flow against the real server over stdio (pytest-lsp).

Parametrised over the VS Code and Neovim client capability sets. One session walks the
whole product: indexing progress → status counts → ask (extractive, then through the
loopback LLM after a configuration change) → citations match the fixture's definitions →
edit + save → search reflects it → hover → code lens → watched-file delete → showAnswer.
"""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from tests.fakes.llm_server import FakeLLMServer, Reply
from tests.server.workspace import FIXTURE_FILES, all_definitions, definitions, make_workspace

SERVER = [sys.executable, "-m", "codeqa_lsp", "--stdio", "--log-level", "warning"]
CLIENTS = {"visual-studio-code": "Visual Studio Code", "neovim": "Neovim"}
GUARD = 120.0  # seconds: only stops a hung test, never asserts speed


class Recorder:
    """What the server sent us beyond what pytest-lsp already records."""

    def __init__(self) -> None:
        self.deltas: list[dict[str, Any]] = []
        self.answers: list[dict[str, Any]] = []
        self.message_requests: list[types.ShowMessageRequestParams] = []
        self.registrations: list[types.Registration] = []
        self.client_name = ""


async def eventually(predicate: Any, interval: float = 0.05) -> None:
    async def poll() -> None:
        while not await predicate() if asyncio.iscoroutinefunction(predicate) else not predicate():
            await asyncio.sleep(interval)

    await asyncio.wait_for(poll(), GUARD)


@pytest_lsp.fixture(params=list(CLIENTS), config=ClientServerConfig(server_command=SERVER))
async def client(
    request: pytest.FixtureRequest, lsp_client: LanguageClient, tmp_path: Path, recorder: Recorder
) -> Any:
    root = make_workspace(tmp_path / "ws")
    recorder.client_name = CLIENTS[request.param]

    @lsp_client.feature("codeqa/answerDelta")
    def on_delta(params: Any) -> None:
        recorder.deltas.append(params._asdict() if hasattr(params, "_asdict") else params)

    @lsp_client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
    def on_message_request(
        params: types.ShowMessageRequestParams,
    ) -> types.MessageActionItem | None:
        recorder.message_requests.append(params)
        return params.actions[0] if params.actions else None

    @lsp_client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def on_register(params: types.RegistrationParams) -> None:
        recorder.registrations.extend(params.registrations)

    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities(request.param),
            client_info=types.ClientInfo(name=CLIENTS[request.param]),
            root_uri=root.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name="ws")],
            initialization_options={"embedder": "hash", "indexDir": str(tmp_path / "index")},
        )
    )
    yield
    await lsp_client.shutdown_session()


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


async def command(client: LanguageClient, name: str, *arguments: Any) -> Any:
    return await asyncio.wait_for(
        client.workspace_execute_command_async(
            types.ExecuteCommandParams(command=name, arguments=list(arguments))
        ),
        GUARD,
    )


def ended(client: LanguageClient) -> list[types.WorkDoneProgressEnd]:
    return [
        v
        for reports in client.progress_reports.values()
        for v in reports
        if isinstance(v, types.WorkDoneProgressEnd)
    ]


def as_dict(value: Any) -> Any:
    """pygls hands untyped results back as namedtuples; compare them as plain data."""
    if hasattr(value, "_asdict"):
        return {k: as_dict(v) for k, v in value._asdict().items()}
    if isinstance(value, list):
        return [as_dict(v) for v in value]
    return value


def assert_citations_match_definitions(root: Path, result: dict[str, Any]) -> None:
    spans = all_definitions(root)
    assert result["citations"], result
    for citation in result["citations"]:
        rel = citation["path"]
        assert citation["uri"] == (root / rel).as_uri()
        start, end = citation["startLine"], citation["endLine"]
        if rel.endswith(".py") and citation["symbol"] in {
            name for (path, name) in spans if path == rel
        }:
            assert spans[(rel, citation["symbol"])] == (start, end), citation
        assert citation["range"] == {
            "start": {"line": start - 1, "character": 0},
            "end": {"line": end, "character": 0},
        }
        assert f"{citation['uri']}#L{start}-L{end}" in result["answer"] or start == end


async def test_full_flow(
    client: LanguageClient, recorder: Recorder, tmp_path: Path, fake_llm: FakeLLMServer
) -> None:
    root = (tmp_path / "ws").resolve()

    # -- indexing progress: begin / report / end ------------------------------------------------
    await eventually(lambda: len(ended(client)) >= 1)
    reports = next(
        r
        for r in client.progress_reports.values()
        if any(isinstance(v, types.WorkDoneProgressEnd) for v in r)
    )
    begin = reports[0]
    assert (
        isinstance(begin, types.WorkDoneProgressBegin)
        and begin.title == "Indexing ws"
        and begin.cancellable
    )
    messages = [v.message or "" for v in reports if isinstance(v, types.WorkDoneProgressReport)]
    # Every phase is named with its own counts: files while chunking, chunks while embedding.
    assert any(re.match(r"chunking files \d+/\d+", m) for m in messages), messages
    assert any(re.match(r"embedding chunks \d+/\d+", m) for m in messages), messages
    percentages = [
        v.percentage
        for v in reports
        if isinstance(v, types.WorkDoneProgressReport) and v.percentage is not None
    ]
    assert percentages == sorted(percentages), percentages
    assert re.fullmatch(r"\d+ chunks from \d+ files in [\d.]+ s", ended(client)[0].message or "")

    # -- dynamic registration where the client supports it ---------------------------------------
    methods = {r.method for r in recorder.registrations}
    if recorder.client_name == "Visual Studio Code":  # its capability set allows both
        assert methods == {
            types.WORKSPACE_DID_CHANGE_CONFIGURATION,
            types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
        }
        watcher = next(
            r
            for r in recorder.registrations
            if r.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES
        )
        assert as_dict(watcher.register_options)["watchers"][0]["globPattern"] == "**/*"
    else:  # Neovim's preset declares neither as dynamically registrable
        assert methods == set()

    # -- status counts -------------------------------------------------------------------------
    status = as_dict(await command(client, "codeqa.status"))
    assert status["folders"] == [str(root)]
    assert status["files"] == len(FIXTURE_FILES)
    py_defs = sum(
        len(definitions(text)) for rel, text in FIXTURE_FILES.items() if rel.endswith(".py")
    )
    assert status["chunks"] >= py_defs
    assert status["embedded"] == status["chunks"] and status["coverage"] == 1.0
    assert status["embedder"] == "hash" and status["indexing"] is False

    # -- ask, extractive: citations point at the real definitions --------------------------------
    result = as_dict(
        await command(
            client,
            "codeqa.ask",
            {"question": "how are settings loaded from the config file?", "requestId": "q1"},
        )
    )
    assert result["requestId"] == "q1" and result["provider"] == "extractive"
    assert_citations_match_definitions(root, result)
    assert any(c["symbol"].endswith("load_settings") for c in result["citations"])

    # -- ask through the loopback LLM after a configuration change (re-index with progress) -----
    fake_llm.default_reply = Reply("Settings are read by load_settings [1].", deltas=4)
    client.set_configuration(
        {
            "provider": "openai",
            "model": "gpt-test",
            "baseUrl": fake_llm.openai_url,
            "apiKey": "sk-test-not-a-real-key-123456",
        },
        section="codeqa",
    )
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    await eventually(lambda: len(ended(client)) >= 2)
    result = as_dict(
        await command(
            client,
            "codeqa.ask",
            {
                "question": "how are settings loaded from the config file?",
                "requestId": "q2",
                "path": "app/**",
            },
        )
    )
    assert result["provider"] == "openai" and result["model"] == "gpt-test", result
    assert "load_settings" in result["answer"]
    assert_citations_match_definitions(root, result)
    q2_deltas = [d["text"] for d in recorder.deltas if d["requestId"] == "q2"]
    assert len(q2_deltas) >= 2 and "".join(q2_deltas).startswith("Settings are read")
    assert any(
        "how are settings loaded from the config file?" in str(r.body)
        for r in fake_llm.requests_to("chat")
    )

    # -- edit + didSave: the next search sees the new code, the old is gone ------------------------
    cache = root / "app" / "cache.py"
    cache.write_text(
        FIXTURE_FILES["app/cache.py"].replace(
            "def get(self, key)", "def fetch_zebrafinch(self, key)"
        )
    )
    client.text_document_did_save(
        types.DidSaveTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=cache.as_uri())
        )
    )

    async def edited() -> bool:
        hits = as_dict(
            await command(client, "codeqa.search", {"query": "fetch_zebrafinch", "topK": 20})
        )
        return any(h["symbol"] == "LRUCache.fetch_zebrafinch" for h in hits)

    await eventually(edited)
    hits = as_dict(
        await command(client, "codeqa.search", {"query": "LRUCache get recently used", "topK": 50})
    )
    assert not any(h["symbol"] == "LRUCache.get" for h in hits)

    # -- a question about uses: each use says where it calls -------------------------------------
    hits = as_dict(await command(client, "codeqa.search", {"query": "who calls load_settings"}))
    caller = next(h for h in hits if h["path"] == "app/session.py")
    lines = FIXTURE_FILES["app/session.py"].splitlines()
    call = next(n for n, line in enumerate(lines, 1) if "= load_settings(" in line)
    assert caller["useLines"] == [call] and caller["preview"] == lines[call - 1].strip()
    assert all(h["useLines"] == [] for h in hits if h["symbol"] == "load_settings")

    # -- workspace/symbol: hybrid search ---------------------------------------------------------
    symbols = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="parse config"))
    assert symbols and any(s.name.endswith("load_settings") for s in symbols)

    # -- hover shows where the definition lives -------------------------------------------------
    session = root / "app" / "session.py"
    session_text = session.read_text()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=session.as_uri(), language_id="python", version=1, text=session_text
            )
        )
    )
    line = next(i for i, text in enumerate(session_text.splitlines()) if "= load_settings(" in text)
    character = session_text.splitlines()[line].index("load_settings") + 3
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=session.as_uri()),
            position=types.Position(line=line, character=character),
        )
    )
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    config_line = definitions(FIXTURE_FILES["app/config.py"])["load_settings"][0]
    assert f"app/config.py:{config_line}" in hover.contents.value
    assert f"{(root / 'app' / 'config.py').as_uri()}#L{config_line}" in hover.contents.value
    assert "Parse the JSON config file" in hover.contents.value

    # -- code lens: one per function / method / class of the *buffer* text ----------------------
    edited_text = "def added_helper():\n    return 1\n\n\n" + session_text
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=session.as_uri(), version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=edited_text)],
        )
    )
    lenses = await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=session.as_uri()))
    )
    expected_lines = sorted(start - 1 for start, _ in definitions(edited_text).values())
    assert sorted(lens.range.start.line for lens in lenses or []) == expected_lines
    title = (
        "$(sparkle) Explain"
        if recorder.client_name == "Visual Studio Code"
        else "Explain this function"
    )
    for lens in lenses or []:
        assert lens.command is not None and lens.command.command == "codeqa.showAnswer"
        assert lens.command.title == title
        assert list(as_dict(lens.command.arguments)) == [
            {"uri": session.as_uri(), "position": {"line": lens.range.start.line, "character": 0}}
        ]

    # -- watched-file delete removes the file's chunks -------------------------------------------
    config = root / "app" / "config.py"
    config.unlink()
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=config.as_uri(), type=types.FileChangeType.Deleted)]
        )
    )

    async def deleted() -> bool:
        status = as_dict(await command(client, "codeqa.status"))
        return status["files"] == len(FIXTURE_FILES) - 1 and status["pendingUpdates"] == 0

    await eventually(deleted)
    hits = as_dict(
        await command(
            client, "codeqa.search", {"query": "load_settings parse JSON config", "topK": 50}
        )
    )
    assert not any(h["path"] == "app/config.py" for h in hits)

    # -- showAnswer: showMessageRequest, then showDocument at the cited range ---------------------
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=session.as_uri())
        )
    )
    send_line = definitions(session_text)["Session.send"][0] - 1
    shown = as_dict(
        await command(
            client,
            "codeqa.showAnswer",
            {"uri": session.as_uri(), "position": {"line": send_line, "character": 4}},
        )
    )
    assert shown["citations"], shown
    await eventually(lambda: bool(client.shown_documents))
    request = recorder.message_requests[-1]
    first = shown["citations"][0]
    assert (
        request.actions
        and request.actions[0].title
        == f"Open [{first['number']}] {first['symbol']} ({first['path']}:{first['startLine']})"
    )
    document = client.shown_documents[-1]
    assert document.uri == first["uri"] and document.take_focus is True
    assert document.selection == types.Range(
        start=types.Position(line=first["startLine"] - 1, character=0),
        end=types.Position(line=first["endLine"], character=0),
    )
