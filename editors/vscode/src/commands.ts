/**
 * The palette commands. Each one works without arguments (prompts the user) and also accepts an
 * argument object so keybindings, other extensions and the e2e hook can drive it directly.
 */

import * as crypto from "node:crypto";
import * as vscode from "vscode";
import { openRange, type AnswerPanel } from "./answerPanel";
import { hitRange, questionPlaceholder, searchItemView, selectionQuestionPrefix, lineSpan } from "./citations";
import { pushHistory } from "./history";
import { ServerCommands, type AnswerResult, type IndexStatus, type SearchHit } from "./protocol";
import { apiKeySecretName, type CodeQaServer } from "./server";
import { API_KEY_ENV } from "./settings";
import { statusSummary } from "./statusView";

const HISTORY_KEY = "codeqa.questionHistory";

export interface AskArgs {
  readonly question?: string;
  readonly path?: string;
  readonly language?: string;
}

export interface SearchArgs {
  readonly query?: string;
}

export interface ExplainArgs {
  readonly uri?: string;
  readonly position?: { line: number; character: number };
}

export class Commands {
  /** The hits last shown in the search QuickPick and the one opened (e2e assertions). */
  lastSearch: { query: string; hits: SearchHit[]; opened?: SearchHit } | undefined;
  /** The question box as last shown: its prefilled value and items (e2e assertions). */
  lastPrompt: { value: string; items: string[] } | undefined;
  /** The answer being generated; a new question cancels it ($/cancelRequest stops the model). */
  private inFlight: vscode.CancellationTokenSource | undefined;

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly server: CodeQaServer,
    private readonly panel: AnswerPanel,
    private readonly onStatus: (status: IndexStatus) => void,
  ) {}

  register(): vscode.Disposable[] {
    const reg = vscode.commands.registerCommand;
    return [
      reg("codeqa.askQuestion", (args?: AskArgs) => this.ask(args)),
      reg("codeqa.askSelection", () => this.askSelection()),
      reg("codeqa.searchCode", (args?: SearchArgs) => this.search(args)),
      reg("codeqa.explainFunction", (args?: ExplainArgs) => this.explain(args)),
      reg("codeqa.reindexWorkspace", () => this.reindex()),
      reg("codeqa.showStatus", () => this.showStatus()),
      reg("codeqa.setApiKey", () => this.setApiKey()),
    ];
  }

  async ask(args?: AskArgs, prefill = ""): Promise<AnswerResult | undefined> {
    const question = args?.question ?? (await this.promptQuestion(prefill));
    if (!question) return undefined;
    await this.context.workspaceState.update(HISTORY_KEY, pushHistory(this.history(), question));
    return this.answer(question, ServerCommands.ask, { question, path: args?.path, language: args?.language });
  }

  async askSelection(): Promise<AnswerResult | undefined> {
    const editor = vscode.window.activeTextEditor;
    if (!editor) return this.ask();
    const { start, end } = editor.selection;
    const endLine = end.character === 0 && end.line > start.line ? end.line : end.line + 1;
    const relative = vscode.workspace.asRelativePath(editor.document.uri, false);
    return this.ask(undefined, selectionQuestionPrefix(relative, start.line + 1, endLine));
  }

  async explain(args?: ExplainArgs): Promise<AnswerResult | undefined> {
    const editor = vscode.window.activeTextEditor;
    const uri = args?.uri ?? editor?.document.uri.toString();
    const position = args?.position ?? (editor ? { line: editor.selection.active.line, character: editor.selection.active.character } : undefined);
    if (!uri || !position) {
      void vscode.window.showInformationMessage("CodeQA: open a file and put the cursor in a function to explain it.");
      return undefined;
    }
    const where = `${vscode.workspace.asRelativePath(vscode.Uri.parse(uri), false)}:${lineSpan(position.line + 1, position.line + 1)}`;
    return this.answer(`Explain the code at ${where}`, ServerCommands.explain, { uri, position });
  }

  async search(args?: SearchArgs): Promise<SearchHit | undefined> {
    const query =
      args?.query ?? (await vscode.window.showInputBox({ title: "CodeQA: Search code semantically", prompt: "Describe the code you are looking for", placeHolder: "e.g. where are API keys read" }));
    if (!query) return undefined;
    let hits: SearchHit[];
    try {
      hits = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Window, title: "CodeQA: searching" },
        () => this.server.execute<SearchHit[]>(ServerCommands.search, { query }),
      );
    } catch (error) {
      void vscode.window.showErrorMessage(`CodeQA: search failed: ${errorText(error)}`);
      return undefined;
    }
    this.lastSearch = { query, hits };
    if (hits.length === 0) {
      void vscode.window.showInformationMessage(`CodeQA: nothing found for "${query}".`);
      return undefined;
    }
    const picked = await this.pickHit(query, hits);
    if (!picked) return undefined;
    this.lastSearch.opened = picked;
    await openRange(vscode.Uri.parse(picked.uri), hitRange(picked));
    return picked;
  }

  async reindex(): Promise<void> {
    try {
      await this.server.execute(ServerCommands.reindex, { force: false });
      vscode.window.setStatusBarMessage("CodeQA: reindexing started", 3000);
    } catch (error) {
      void vscode.window.showErrorMessage(`CodeQA: reindex failed: ${errorText(error)}`);
    }
  }

  async showStatus(): Promise<IndexStatus | undefined> {
    let status: IndexStatus;
    try {
      status = await this.server.execute<IndexStatus>(ServerCommands.status);
    } catch (error) {
      const choice = await vscode.window.showErrorMessage(`CodeQA: no status: ${errorText(error)}`, "Show logs");
      if (choice) void vscode.commands.executeCommand("codeqa.showLogs");
      return undefined;
    }
    this.onStatus(status);
    void vscode.window.showInformationMessage(`CodeQA: ${statusSummary(status)}.`, "Reindex", "Show logs").then((choice) => {
      if (choice === "Reindex") void this.reindex();
      if (choice === "Show logs") void vscode.commands.executeCommand("codeqa.showLogs");
    });
    return status;
  }

  /** Stores a provider's key in SecretStorage (OS keychain), never in settings.json. */
  async setApiKey(): Promise<void> {
    const current = vscode.workspace.getConfiguration("codeqa").get<string>("provider") ?? "extractive";
    const providers = Object.keys(API_KEY_ENV);
    const items = providers.map((p) => ({ label: p, description: `${p === current ? "current provider · " : ""}else read from ${API_KEY_ENV[p]}` }));
    const picked = await vscode.window.showQuickPick(items, { title: "CodeQA: API key for which provider?" });
    if (!picked) return;
    const key = await vscode.window.showInputBox({
      title: `CodeQA: ${picked.label} API key`,
      prompt: "Stored in VS Code's secret storage. Leave empty to remove the stored key.",
      password: true,
      ignoreFocusOut: true,
    });
    if (key === undefined) return;
    const name = apiKeySecretName(picked.label);
    if (key.trim()) await this.context.secrets.store(name, key.trim());
    else await this.context.secrets.delete(name);
    // The secrets listener restarts the server with the new key.
    void vscode.window.showInformationMessage(`CodeQA: ${picked.label} API key ${key.trim() ? "saved" : "removed"}.`);
  }

  private history(): string[] {
    return this.context.workspaceState.get<string[]>(HISTORY_KEY) ?? [];
  }

  /** A QuickPick as an input box with history: type a new question or pick a previous one. */
  private promptQuestion(prefill: string): Promise<string | undefined> {
    const history = this.history();
    const pick = vscode.window.createQuickPick<vscode.QuickPickItem>();
    pick.title = "CodeQA: Ask a question about this workspace";
    pick.placeholder = history.length ? "Type a question, or pick a previous one" : questionPlaceholder(vscode.window.activeTextEditor ? vscode.workspace.asRelativePath(vscode.window.activeTextEditor.document.uri, false) : undefined);
    pick.value = prefill;
    pick.ignoreFocusOut = true;
    const historyItems = history.map((q) => ({ label: q, description: "previous question" }));
    const refresh = (): void => {
      const typed = pick.value.trim();
      const asNew = typed && !history.includes(typed) ? [{ label: typed, description: "ask", alwaysShow: true }] : [];
      pick.items = [...asNew, ...historyItems];
    };
    refresh();
    this.lastPrompt = { value: pick.value, items: pick.items.map((item) => item.label) };
    return new Promise((resolve) => {
      pick.onDidChangeValue(refresh);
      pick.onDidAccept(() => {
        const chosen = pick.selectedItems[0]?.label ?? pick.value;
        resolve(chosen.trim() || undefined);
        pick.hide();
      });
      pick.onDidHide(() => {
        resolve(undefined);
        pick.dispose();
      });
      pick.show();
    });
  }

  private pickHit(query: string, hits: SearchHit[]): Promise<SearchHit | undefined> {
    const pick = vscode.window.createQuickPick<vscode.QuickPickItem & { hit: SearchHit }>();
    pick.title = `CodeQA: ${hits.length} results for "${query}"`;
    pick.matchOnDescription = true;
    pick.matchOnDetail = true;
    pick.items = hits.map((hit) => ({ ...searchItemView(hit), hit }));
    return new Promise((resolve) => {
      pick.onDidAccept(() => {
        resolve(pick.selectedItems[0]?.hit);
        pick.hide();
      });
      pick.onDidHide(() => {
        resolve(undefined);
        pick.dispose();
      });
      pick.show();
    });
  }

  /** Runs ask/explain with our own requestId so streamed deltas reach the panel before the result. */
  private async answer(title: string, command: string, argument: Record<string, unknown>): Promise<AnswerResult | undefined> {
    const requestId = `vscode-${crypto.randomUUID()}`;
    this.inFlight?.cancel();
    const cancellation = new vscode.CancellationTokenSource();
    this.inFlight = cancellation;
    this.panel.begin(title, requestId);
    try {
      const result = await this.server.execute<AnswerResult>(command, { ...stripUndefined(argument), requestId }, cancellation.token);
      this.panel.result(result);
      return result;
    } catch (error) {
      if (!cancellation.token.isCancellationRequested) this.panel.error(`The server could not answer: ${errorText(error)}`);
      return undefined;
    } finally {
      if (this.inFlight === cancellation) this.inFlight = undefined;
      cancellation.dispose();
    }
  }
}

function stripUndefined(record: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(record).filter(([, v]) => v !== undefined));
}

export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
