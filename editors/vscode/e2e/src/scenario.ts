/**
 * The end-to-end scenario, in the test build only (e2e/src/main.ts runs it when
 * `CODEQA_E2E_OUT` is set; the published bundle does not contain it). It drives the real
 * commands through `vscode.commands.executeCommand`, as the palette would, and writes what it
 * observed to the JSON file the harness (scripts/e2e.mjs) polls: server start, indexing
 * progress, search QuickPick → editor, explain, the code-lens path, ask with streaming into the
 * webview, a citation click inside the webview → editor selection, a streamed model answer, the
 * docked chat with a follow-up, `@codeqa`'s handler, a real window reload after which the chat
 * shows the earlier thread again, and finally the "cannot start" notification for a bad server
 * path. The window reload restarts the extension host, so the scenario resumes from the report
 * file (phase "reloading"). The harness, not this file, decides pass/fail.
 */

import * as fs from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";
import { PARTICIPANT_ID } from "../../src/chatParticipant";
import type { CodeQaApi } from "../../src/extension";
import { ServerCommands, type AnswerResult, type IndexStatus, type SearchHit } from "../../src/protocol";
import { apiKeySecretName } from "../../src/server";
import { describeCommand } from "../../src/settings";

interface Scenario {
  readonly search: string;
  readonly ask: string;
  /** Workspace-relative file and 0-based position inside the function to explain. */
  readonly explain: { readonly path: string; readonly line: number; readonly character: number };
  /** Workspace-relative file and 0-based first/last line to select for "Ask about the selection". */
  readonly selection: { readonly path: string; readonly startLine: number; readonly endLine: number };
  /** A loopback OpenAI-compatible server the harness runs: the streamed-model scenario. */
  readonly llm: { readonly baseUrl: string; readonly apiKey: string; readonly model: string; readonly question: string };
  /** `@codeqa`'s first question (not asked before, so the model streams a fresh answer). */
  readonly participant: string;
  /** An executable that exits with an error at once (a server that cannot start). */
  readonly crashingServer: string;
  /** A question whose answer quotes HTML/script from the fixture (must be shown, never run). */
  readonly injection: string;
}

type Report = Record<string, unknown> & { phase: string; errors: string[] };

const STEP_TIMEOUT_MS = 90_000;

export async function runE2e(outFile: string, api: CodeQaApi, secrets: vscode.SecretStorage): Promise<void> {
  const previous = readReport(outFile);
  const resuming = previous?.phase === "reloading";
  const report: Report = resuming ? { ...previous, phase: "reloaded" } : { phase: "started", errors: [], startedAt: Date.now(), timings: {} };
  // One extension host per window load: a different pid after the reload proves it was real.
  report.extensionHostPids = [...((report.extensionHostPids as number[] | undefined) ?? []), process.pid];
  const write = (): void => {
    fs.writeFileSync(outFile + ".tmp", JSON.stringify(report, null, 2));
    fs.renameSync(outFile + ".tmp", outFile);
  };
  const step = async (name: string, body: () => Promise<unknown>): Promise<void> => {
    const started = Date.now();
    try {
      report[name] = await withTimeout(body(), STEP_TIMEOUT_MS, name);
    } catch (error) {
      report.errors.push(`${name}: ${error instanceof Error ? error.stack ?? error.message : String(error)}`);
    }
    (report.timings as Record<string, number>)[name] = Date.now() - started;
    write();
  };
  write();
  try {
    const scenario = JSON.parse(process.env.CODEQA_E2E_SCENARIO ?? "null") as Scenario;
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
    if (!scenario || !folder) throw new Error("CODEQA_E2E_SCENARIO and an open folder are required");
    if (resuming) {
      await step("afterReload", () => afterReloadStep(api, report.chat as ChatReport | undefined, Number(report.reloadRequestedAt)));
      await step("cannotStart", () => cannotStartStep(api, scenario.crashingServer));
    } else {
      await step("server", () => serverStep(api));
      await step("indexing", () => indexingStep(api));
      await step("search", () => searchStep(api, scenario.search));
      await step("explain", () => explainStep(api, vscode.Uri.joinPath(folder, scenario.explain.path), scenario.explain));
      await step("codeLens", () => codeLensStep(api, vscode.Uri.joinPath(folder, scenario.explain.path), scenario.explain.line));
      await step("injection", () => injectionStep(api, scenario.injection));
      await step("askSelection", () => askSelectionStep(api, vscode.Uri.joinPath(folder, scenario.selection.path), scenario.selection));
      await step("ask", () => askStep(api, scenario.ask));
      await step("citationClick", () => citationClickStep(api));
      await step("reindex", () => reindexStep(api));
      await step("llm", () => llmStep(api, secrets, scenario.llm));
      await step("llmCitationClick", () => citationClickStep(api));
      // The answer panel and the cited code are on screen now: let the harness take its screenshot
      // (without the earlier status notification over the panel).
      await vscode.commands.executeCommand("notifications.clearAll").then(undefined, () => undefined);
      report.phase = "screenshot";
      write();
      await waitFor(() => fs.existsSync(outFile + ".screenshot-done"), 60_000, "the harness's screenshot").catch((e) =>
        report.errors.push(String(e)),
      );
      await step("participant", () => participantStep(api, scenario.participant));
      await step("chat", () => chatStep(api, scenario.llm.question));
      report.phase = "chatScreenshot";
      write();
      await waitFor(() => fs.existsSync(outFile + ".chat-screenshot-done"), 60_000, "the harness's chat screenshot").catch((e) =>
        report.errors.push(String(e)),
      );
      // A real window reload: this extension host ends here and the next one resumes the
      // scenario from the report (see `resuming` above).
      // Nothing is written after this: the command's promise is cancelled as this host ends.
      report.phase = "reloading";
      report.reloadRequestedAt = Date.now();
      write();
      void vscode.commands.executeCommand("workbench.action.reloadWindow").then(undefined, () => undefined);
      return;
    }
  } catch (error) {
    report.errors.push(error instanceof Error ? error.stack ?? error.message : String(error));
  }
  report.serverMessages = api.server.serverMessages;
  report.phase = "done";
  report.finishedAt = Date.now();
  write();
}

function readReport(file: string): Report | undefined {
  try {
    return JSON.parse(fs.readFileSync(file, "utf8")) as Report;
  } catch {
    return undefined;
  }
}

async function serverStep(api: CodeQaApi): Promise<unknown> {
  await waitFor(() => api.server.isRunning, 60_000, "the server to run");
  return {
    running: api.server.isRunning,
    serverInfo: api.server.serverInfo,
    command: api.server.command ? describeCommand(api.server.command) : undefined,
    source: api.server.command?.source,
  };
}

async function indexingStep(api: CodeQaApi): Promise<unknown> {
  let status: IndexStatus | undefined;
  await waitFor(
    async () => {
      status = await api.server.execute<IndexStatus>(ServerCommands.status);
      return !status.indexing && status.chunks > 0 && api.statusBar.progressLog.some((p) => p.kind === "end");
    },
    STEP_TIMEOUT_MS - 5000,
    "indexing to finish",
  );
  await waitFor(() => api.statusBar.text.includes("chunks"), 10_000, "the status bar to show the chunk count").catch(() => undefined);
  return { status, progress: api.statusBar.progressLog, statusBarText: api.statusBar.text };
}

async function searchStep(api: CodeQaApi, query: string): Promise<unknown> {
  api.commands.lastSearch = undefined;
  const opened = vscode.commands.executeCommand<SearchHit | undefined>("codeqa.searchCode", { query });
  // The QuickPick is real UI: accept its first (best) item the way Enter would.
  await waitFor(() => api.commands.lastSearch !== undefined, 30_000, "search results");
  let accepted: SearchHit | undefined;
  for (let attempt = 0; attempt < 20 && !accepted; attempt++) {
    await sleep(250);
    await vscode.commands.executeCommand("workbench.action.acceptSelectedQuickOpenItem");
    accepted = await Promise.race([opened, sleep(250).then(() => undefined)]);
  }
  await waitFor(() => vscode.window.activeTextEditor?.document.uri.toString() === accepted?.uri, 10_000, "the result's editor").catch(() => undefined);
  return {
    query,
    hits: ((api.commands.lastSearch as { hits: SearchHit[] } | undefined)?.hits ?? []).map(hitSummary),
    opened: accepted ? hitSummary(accepted) : null,
    editor: editorSummary(),
  };
}

async function explainStep(api: CodeQaApi, uri: vscode.Uri, position: { line: number; character: number }): Promise<unknown> {
  const document = await vscode.workspace.openTextDocument(uri);
  await vscode.window.showTextDocument(document, { viewColumn: vscode.ViewColumn.One, preview: false });
  const result = await vscode.commands.executeCommand<AnswerResult | undefined>("codeqa.explainFunction", {
    uri: uri.toString(),
    position,
  });
  const rendered = await api.panel.waitForRender((r) => r.phase === "done" || r.phase === "error");
  return { result: answerSummary(result), deltas: api.panel.deltasReceived, rendered };
}

async function codeLensStep(api: CodeQaApi, uri: vscode.Uri, line: number): Promise<unknown> {
  let lenses: vscode.CodeLens[] = [];
  await waitFor(
    async () => {
      lenses = (await vscode.commands.executeCommand<vscode.CodeLens[]>("vscode.executeCodeLensProvider", uri, 100)) ?? [];
      return lenses.some((lens) => lens.command?.command === ServerCommands.showAnswer);
    },
    30_000,
    "code lenses",
  );
  // The innermost Explain lens above the scenario's line: the same function Explain ran on.
  const explainLenses = lenses.filter((l) => l.command?.command === ServerCommands.showAnswer && l.range.start.line <= line);
  const lens = explainLenses.sort((a, b) => b.range.start.line - a.range.start.line)[0] ?? lenses[0];
  api.panel.begin("(waiting for the code lens answer)", "none");
  await vscode.commands.executeCommand(lens.command!.command, ...(lens.command!.arguments ?? []));
  const rendered = await api.panel.waitForRender((r) => r.phase === "done" || r.phase === "error");
  return {
    lenses: lenses.length,
    title: lens.command!.title,
    line: lens.range.start.line,
    panelTitle: api.panel.current.title,
    answer: api.panel.current.result ? answerSummary(api.panel.current.result) : null,
    deltas: api.panel.deltasReceived,
    rendered,
  };
}

async function injectionStep(api: CodeQaApi, question: string): Promise<unknown> {
  const result = await vscode.commands.executeCommand<AnswerResult | undefined>("codeqa.askQuestion", { question });
  const rendered = await api.panel.waitForRender((r) => r.phase === "done" || r.phase === "error");
  return { result: answerSummary(result), rendered };
}

async function askSelectionStep(api: CodeQaApi, uri: vscode.Uri, selection: Scenario["selection"]): Promise<unknown> {
  const document = await vscode.workspace.openTextDocument(uri);
  const editor = await vscode.window.showTextDocument(document, { viewColumn: vscode.ViewColumn.One, preview: false });
  editor.selection = new vscode.Selection(selection.startLine, 0, selection.endLine, document.lineAt(selection.endLine).text.length);
  api.commands.lastPrompt = undefined;
  const asked = vscode.commands.executeCommand<AnswerResult | undefined>("codeqa.askSelection");
  await waitFor(() => api.commands.lastPrompt !== undefined, 10_000, "the question box");
  const prompt = api.commands.lastPrompt;
  // Accept the prefilled question as Enter would (the first item is "ask <typed text>").
  let result: AnswerResult | undefined;
  for (let attempt = 0; attempt < 20 && result === undefined; attempt++) {
    await sleep(250);
    await vscode.commands.executeCommand("workbench.action.acceptSelectedQuickOpenItem");
    result = await Promise.race([asked, sleep(500).then(() => undefined)]);
  }
  const rendered = await api.panel.waitForRender((r) => r.phase === "done" || r.phase === "error");
  return { prompt, result: answerSummary(result), panelTitle: api.panel.current.title, rendered };
}

async function askStep(api: CodeQaApi, question: string): Promise<unknown> {
  const result = await vscode.commands.executeCommand<AnswerResult | undefined>("codeqa.askQuestion", { question });
  const rendered = await api.panel.waitForRender((r) => r.phase === "done" || r.phase === "error");
  return { result: answerSummary(result), deltas: api.panel.deltasReceived, rendered, panelVisible: api.panel.visible };
}

async function citationClickStep(api: CodeQaApi): Promise<unknown> {
  const citation = api.panel.current.result?.citations[0];
  if (!citation) throw new Error("the answer has no citation to click");
  const target = vscode.Uri.parse(citation.uri).fsPath;
  // Click the inline [n] link in the rendered answer; if the model text has none, the Sources entry.
  const selector = api.panel.lastRendered?.citationLinks ? `article a.cite[data-citation="${citation.number}"]` : `.sources a[data-citation="${citation.number}"]`;
  await api.panel.clickInWebview(selector);
  await waitFor(() => vscode.window.activeTextEditor?.document.uri.fsPath === target, 20_000, "the cited file to open");
  await sleep(300);
  return { selector, citation: { ...citation }, editor: editorSummary() };
}

interface ChatReport {
  readonly threadIds?: ReadonlyArray<string | undefined>;
  readonly questions?: readonly string[];
}

/**
 * The docked chat: a question, a follow-up that needs the first turn's subject, and a click on
 * a source of the follow-up (the file opens in the editor area beside the chat with the cited
 * lines selected). The thread stays on screen for the harness's screenshot and the reload.
 */
async function chatStep(api: CodeQaApi, question: string): Promise<unknown> {
  await vscode.commands.executeCommand("codeqa.chat.ask");
  await waitFor(() => api.chat.lastRendered !== undefined, 30_000, "the chat view to render");
  api.chat.newChat();
  const first = await api.chat.ask(question);
  const followUp = await api.chat.ask("and where is it called from?");
  await waitFor(() => api.chat.lastRendered?.turns === 2, 10_000, "both turns in the chat");
  const rendered = api.chat.lastRendered;
  const citation = api.chat.current.turns[1]?.result?.citations[0];
  if (!citation) throw new Error("the follow-up has no citation to click");
  api.chat.lastOpened = undefined;
  await api.chat.clickInWebview(`section.turn[data-turn="1"] .sources a[data-citation="${citation.number}"]`);
  await waitFor(() => api.chat.lastOpened !== undefined, 20_000, "the cited file to open from the chat");
  await sleep(300);
  const opened = { editor: editorSummary(), citation: { ...citation }, chatVisible: api.chat.visible };
  return {
    first: answerSummary(first),
    followUp: answerSummary(followUp),
    threadIds: [(first as { threadId?: string } | undefined)?.threadId, (followUp as { threadId?: string } | undefined)?.threadId],
    questions: api.chat.current.turns.map((t) => t.title),
    rendered,
    opened,
  };
}

/**
 * After the window reload, in a new extension host with a new server process: the chat view
 * comes back by itself (it was open) and shows the thread from before, read from the server's
 * on-disk history. Nothing is asked or clicked before the check.
 */
async function afterReloadStep(api: CodeQaApi, before: ChatReport | undefined, reloadRequestedAt: number): Promise<unknown> {
  const threadId = before?.threadIds?.[0];
  if (!threadId) throw new Error("no thread from before the reload");
  await waitFor(() => api.chat.current.turns.length > 0, 60_000, "the chat to restore a thread").catch(() => undefined);
  await waitFor(() => (api.chat.lastRendered?.turns ?? 0) > 0, 10_000, "the restored thread to render").catch(() => undefined);
  return {
    reloadRequestedAt,
    activatedAfterReload: Date.now() > reloadRequestedAt,
    serverStarts: api.server.starts,
    chatVisible: api.chat.visible,
    threadId: api.chat.current.threadId,
    sameThread: api.chat.current.threadId === threadId,
    questions: api.chat.current.turns.map((t) => t.title),
    expectedQuestions: before?.questions ?? [],
    citations: api.chat.current.turns.map((t) => t.result?.citations.length ?? 0),
    rendered: api.chat.lastRendered,
  };
}

/**
 * `@codeqa`'s handler, called the way VS Code's chat calls it (code-server has no chat UI):
 * a request, the session's history and a stream that records what it was given, against the
 * real server and the harness's streaming model. Then a follow-up in the same session.
 */
async function participantStep(api: CodeQaApi, question: string): Promise<unknown> {
  const token = new vscode.CancellationTokenSource().token;
  const call = async (prompt: string, history: readonly unknown[]): Promise<unknown> => {
    const markdown: string[] = [];
    const references: unknown[] = [];
    const stream = {
      markdown: (value: string | vscode.MarkdownString) => {
        markdown.push(typeof value === "string" ? value : value.value);
      },
      reference: (value: vscode.Uri | vscode.Location) => {
        const location = value instanceof vscode.Location ? value : new vscode.Location(value, new vscode.Position(0, 0));
        references.push({
          path: vscode.workspace.asRelativePath(location.uri, false),
          isLocation: value instanceof vscode.Location,
          startLine: location.range.start.line,
          endLine: location.range.end.line,
        });
      },
    };
    const result = await api.participant.handler({ prompt }, { history }, stream, token);
    return { markdown, text: markdown.join(""), references, metadata: result.metadata ?? null };
  };
  const first = (await call(question, [])) as { metadata: { threadId?: string } | null };
  // VS Code hands the handler the session's earlier turns: our response turn carries its thread.
  const history = [{ prompt: question, participant: PARTICIPANT_ID, command: undefined }, { participant: PARTICIPANT_ID, result: { metadata: first.metadata }, response: [] }];
  const followUp = await call("and where is it called from?", history);
  return { registered: api.participant.registered, first, followUp };
}

async function reindexStep(api: CodeQaApi): Promise<unknown> {
  const endsBefore = api.statusBar.progressLog.filter((p) => p.kind === "end").length;
  await vscode.commands.executeCommand("codeqa.reindexWorkspace");
  await waitFor(() => api.statusBar.progressLog.filter((p) => p.kind === "end").length > endsBefore, 60_000, "the reindex to finish");
  const status = await vscode.commands.executeCommand<IndexStatus | undefined>("codeqa.showStatus");
  await waitFor(() => api.statusBar.text.includes("chunks"), 10_000, "the status bar count").catch(() => undefined);
  return { endsBefore, progress: api.statusBar.progressLog.slice(-3), status, statusBarText: api.statusBar.text };
}

/**
 * A model that streams: the API key goes into SecretStorage (as "Set API key" stores it), the
 * provider settings into the *user* settings (the server sends a key only to an endpoint the
 * user chose there: README "Privacy"); the server restarts with the key, and the answer
 * streams from the harness's loopback OpenAI-compatible server into the panel.
 */
async function llmStep(api: CodeQaApi, secrets: vscode.SecretStorage, llm: Scenario["llm"]): Promise<unknown> {
  const config = vscode.workspace.getConfiguration("codeqa");
  const startsBefore = api.server.starts;
  const endsBefore = api.statusBar.progressLog.filter((p) => p.kind === "end").length;
  await config.update("provider", "openai", vscode.ConfigurationTarget.Global);
  await config.update("baseUrl", llm.baseUrl, vscode.ConfigurationTarget.Global);
  await config.update("model", llm.model, vscode.ConfigurationTarget.Global);
  await secrets.store(apiKeySecretName("openai"), llm.apiKey);
  // Each change above restarts the server; a restart asked for now runs after them, so it
  // resolves once the server has every one of them.
  await api.server.restart();
  await waitFor(() => api.server.starts > startsBefore && api.server.isRunning, 60_000, "the server to restart with the key");
  // The restarted server answers once it has opened the index again (its indexing pass ends).
  await waitFor(() => api.statusBar.progressLog.filter((p) => p.kind === "end").length > endsBefore, 60_000, "the index to reopen");
  const result = await vscode.commands.executeCommand<AnswerResult | undefined>("codeqa.askQuestion", { question: llm.question });
  const rendered = await api.panel.waitForRender((r) => r.phase === "done" || r.phase === "error");
  return {
    restarts: api.server.starts - startsBefore,
    result: answerSummary(result),
    model: result?.model ?? null,
    deltas: api.panel.deltasReceived,
    streamingRenders: api.panel.streamingRenders,
    panelError: api.panel.current.error ?? null,
    rendered,
  };
}

async function cannotStartStep(api: CodeQaApi, crashingServer: string): Promise<unknown> {
  const config = vscode.workspace.getConfiguration("codeqa");
  const original = config.inspect<string>("server.path")?.workspaceValue;
  const observe = async (serverPath: string): Promise<unknown> => {
    const before = api.notifier.shown.length;
    const startsBefore = api.server.starts;
    await config.update("server.path", serverPath, vscode.ConfigurationTarget.Workspace);
    await waitFor(() => api.notifier.shown.length > before, 30_000, `the notification for ${serverPath}`);
    await sleep(3000); // any restart loop or duplicate notification would show up here
    return {
      notifications: api.notifier.shown.slice(before),
      starts: api.server.starts - startsBefore,
      statusBarText: api.statusBar.text,
      statusBarPhase: api.statusBar.phase,
      running: api.server.isRunning,
      lastStartError: api.server.lastStartError,
    };
  };
  try {
    // A path that does not exist, then a server that dies while starting (like `python3 -m
    // codeqa_lsp` without the package installed).
    return { missing: await observe("/nonexistent/codeqa-e2e/codeqa-lsp"), crashing: await observe(crashingServer) };
  } finally {
    await config.update("server.path", original, vscode.ConfigurationTarget.Workspace);
  }
}

function answerSummary(result: AnswerResult | undefined): unknown {
  if (!result) return null;
  return {
    requestId: result.requestId,
    answer: result.answer,
    confident: result.confident,
    provider: result.provider,
    error: result.error ?? null,
    citations: result.citations.map((c) => ({ number: c.number, path: c.path, symbol: c.symbol, startLine: c.startLine, endLine: c.endLine, range: c.range, stale: c.stale ?? false })),
  };
}

function hitSummary(hit: SearchHit): unknown {
  return { path: hit.path, symbol: hit.symbol, kind: hit.kind, score: hit.score, startLine: hit.startLine, endLine: hit.endLine, range: hit.range, preview: hit.preview, uri: hit.uri };
}

function editorSummary(): unknown {
  const editor = vscode.window.activeTextEditor;
  if (!editor) return null;
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? "";
  const { start, end } = editor.selection;
  return {
    path: path.relative(folder, editor.document.uri.fsPath).split(path.sep).join("/"),
    selection: { start: { line: start.line, character: start.character }, end: { line: end.line, character: end.character } },
    selectedText: editor.document.getText(editor.selection),
    visibleRanges: editor.visibleRanges.map((r) => [r.start.line, r.end.line]),
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      if (await condition()) return;
    } catch {
      // not ready yet (e.g. the server is still starting)
    }
    await sleep(250);
  }
  throw new Error(`timed out waiting for ${what}`);
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms / 1000} s`)), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
