"""The MCP protocol layer: five tools over `CodeService`, served on stdio.

Built with the official SDK's `MCPServer` (mcp 2.x; it was `FastMCP` in 1.x): each tool is
a typed function whose parameters (with descriptions) become the input schema and whose
result model becomes the output schema. Handlers are synchronous: the SDK runs them in
worker threads, so a slow `ask` never stalls the stdio reader or another call.

A tool returns its result twice, as the protocol asks: `structuredContent` for clients
that read the schema, and one compact JSON text block for those that show text to the
model (compact rather than the SDK's default indented dump: indentation made search
results over this repository 13-15% larger in the agent's context).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Literal, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field

from codeqa_lsp import __version__
from codeqa_lsp.config import Settings
from codeqa_lsp.mcp.paths import ToolInputError
from codeqa_lsp.mcp.results import (
    DEFAULT_TOP_K,
    MAX_TOP_K,
    AnswerResult,
    ExplainResult,
    OutlineResult,
    SearchResult,
    StatusResult,
)
from codeqa_lsp.mcp.service import CodeService

log = logging.getLogger(__name__)
Model = TypeVar("Model", bound=BaseModel)

INSTRUCTIONS = """\
codeqa indexes this workspace's code (functions, methods, classes, doc sections) for \
keyword + semantic search. Prefer `search` over grep to find where something is done: it \
returns ranked definitions with exact line ranges. `outline` lists a file's definitions, \
`explain` describes one definition and what it calls, `ask` gives a cited answer, `status` \
says how complete the index is. Paths are relative to the workspace root."""

Language = Annotated[
    str | None,
    Field(
        description="only this language: python, javascript, typescript, tsx, go, rust, java, c, "
        "cpp, ruby, csharp, php, bash, markdown (status lists what is indexed)"
    ),
]
PathFilter = Annotated[
    str | None,
    Field(
        description="only paths matching this directory, file or gitignore-style glob, relative to "
        "the root (e.g. 'src/', '*.py', 'lib/**/router*')"
    ),
]


def _reply(result: BaseModel) -> CallToolResult:
    data = result.model_dump(mode="json")
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)


def _guard(call: Callable[[], Model]) -> CallToolResult:
    """Refusals and bad arguments become a tool error the agent can read and correct."""
    try:
        return _reply(call())
    except ToolInputError as exc:
        raise ToolError(str(exc)) from None


def build_server(service: CodeService) -> MCPServer:
    server: MCPServer = MCPServer(
        name="codeqa",
        title="codeqa: codebase search and cited answers",
        version=__version__,
        instructions=INSTRUCTIONS,
        log_level="WARNING",
    )
    remote_answers = service.settings.provider != "extractive" and service.settings.allow_remote
    read_only = ToolAnnotations(read_only_hint=True, open_world_hint=False, idempotent_hint=True)

    @server.tool(annotations=read_only)
    def search(
        query: Annotated[
            str,
            Field(
                description="what to find, in words or identifiers, e.g. "
                "'where do we retry failed uploads', 'parse_args' or 'who calls parse_args'"
            ),
        ],
        top_k: Annotated[
            int, Field(ge=1, le=MAX_TOP_K, description="how many results")
        ] = DEFAULT_TOP_K,
        language: Language = None,
        path: PathFilter = None,
        kind: Annotated[
            Literal["function", "method", "class", "module", "section"] | None,
            Field(description="only this kind of chunk"),
        ] = None,
    ) -> Annotated[CallToolResult, SearchResult]:
        """Search the workspace's code: ranked functions, methods and classes (and doc sections)
        with workspace-relative path, symbol, kind, exact 1-based line range, score and a short
        snippet (first 12 lines). Hybrid keyword + semantic search; identifiers in the query are
        matched exactly. `confident: false` means nothing matched strongly. Check `index.note`:
        while the index is still being built, results may be partial."""
        return _guard(lambda: service.search(query, top_k, language, path, kind))

    @server.tool(annotations=ToolAnnotations(read_only_hint=True, open_world_hint=remote_answers))
    def ask(
        question: Annotated[
            str,
            Field(
                description="a question about this codebase, e.g. 'how is "
                "the session cookie refreshed?'"
            ),
        ],
        language: Language = None,
        path: PathFilter = None,
    ) -> Annotated[CallToolResult, AnswerResult]:
        """Answer a question about the codebase with citations: `answer` text with [n] markers,
        and `citations` giving each marker's path and line range. Without a configured model the
        answer is extractive (the most relevant code, quoted; nothing leaves the machine). Says
        so when no code answers confidently rather than guessing."""
        return _guard(lambda: service.ask(question, language, path))

    @server.tool(annotations=ToolAnnotations(read_only_hint=True, open_world_hint=remote_answers))
    def explain(
        path: Annotated[
            str | None, Field(description="file, relative to the root (with line)")
        ] = None,
        line: Annotated[
            int | None, Field(ge=1, description="1-based line inside the definition")
        ] = None,
        symbol: Annotated[
            str | None,
            Field(
                description="instead of path+line: a definition's "
                "name, e.g. 'parse_args', 'Config.load' or 'Config::load'"
            ),
        ] = None,
    ) -> Annotated[CallToolResult, ExplainResult]:
        """Explain one function, method or class: the definition enclosing `path`:`line`, or the
        one named `symbol`. Returns the explanation with citations, the definition's exact line
        range, and other definitions sharing the name."""
        return _guard(lambda: service.explain(path, line, symbol))

    @server.tool(annotations=read_only)
    def outline(
        path: Annotated[str, Field(description="file, relative to the workspace root")],
    ) -> Annotated[CallToolResult, OutlineResult]:
        """List a file's definitions (functions, methods, classes; headings for docs) in order,
        each with its kind, exact 1-based line range and signature line. Cheaper than reading
        the file to find where something is."""
        return _guard(lambda: service.outline(path))

    @server.tool(annotations=read_only)
    def status() -> Annotated[CallToolResult, StatusResult]:
        """Index status: files and chunks indexed, embedding coverage, embedder, answer provider,
        and whether background indexing is still running (keyword search serves meanwhile)."""
        return _guard(service.status)

    return server


def run(root: Path, settings: Settings) -> None:
    """Serve `root` on stdin/stdout until the client closes the connection."""
    service = CodeService(root, settings)
    try:
        build_server(service).run("stdio")
    finally:
        service.close()
