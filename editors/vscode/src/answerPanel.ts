/**
 * The answer webview: one reusable panel beside the editor. The host renders the HTML (pure
 * `answerView`) and the webview script only inserts it and reports clicks back as messages, so
 * the page runs under a strict CSP: no inline script or style, one nonce'd script file.
 */

import * as vscode from "vscode";
import {
  applyDelta,
  applyError,
  applyResult,
  renderAnswer,
  splitExtractiveNote,
  startAnswer,
  type AnswerState,
} from "./answerView";
import { parseFileTarget, rangeForLines, selectionForRange, targetColumn } from "./citations";
import type { AnswerDelta, AnswerResult, Citation, LspRange } from "./protocol";
import { webviewPage, webviewRoots } from "./webviewPage";

/** What the webview reported after inserting a render (the e2e test asserts on it). */
export interface RenderedReport {
  /** Which answer the render belonged to (bumped by `begin`), so late reports are ignored. */
  readonly generation: number;
  readonly phase: string;
  readonly citationLinks: number;
  readonly sources: number;
  readonly staleSources: number;
  readonly textLength: number;
  /** The start of the answer as the user sees it (text content, not HTML). */
  readonly text: string;
  readonly renders: number;
  /** Elements in the rendered answer that could run or load something (must be 0). */
  readonly unsafeElements: number;
  /** The Content-Security-Policy the page runs under. */
  readonly csp: string;
}

type FromWebview =
  | { type: "ready" }
  | { type: "openCitation"; number: number }
  | { type: "openUri"; uri: string }
  | ({ type: "rendered" } & RenderedReport);

const RENDER_INTERVAL_MS = 40;

export class AnswerPanel implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;
  private state: AnswerState = startAnswer("", undefined);
  private renderTimer: NodeJS.Timeout | undefined;
  private generation = 0;
  /** Deltas seen for the current answer (the e2e test checks streaming really happened). */
  deltasReceived = 0;
  lastRendered: RenderedReport | undefined;
  /** Renders the webview reported while the current answer was still streaming. */
  streamingRenders = 0;
  private readonly renderedListeners: Array<(report: RenderedReport) => void> = [];

  /** Whether the "no model configured" notice was already shown in this window. */
  private extractiveNoticeShown = false;

  constructor(private readonly extensionUri: vscode.Uri) {}

  get current(): AnswerState {
    return this.state;
  }

  get visible(): boolean {
    return this.panel?.visible ?? false;
  }

  /** Opens (or reuses) the panel for a new answer; `requestId` undefined adopts the first delta's. */
  begin(title: string, requestId: string | undefined): void {
    this.state = startAnswer(title, requestId);
    this.generation += 1;
    this.deltasReceived = 0;
    this.streamingRenders = 0;
    this.lastRendered = undefined;
    this.ensurePanel();
    this.panel!.title = `CodeQA: ${truncate(title, 40)}`;
    this.postRender();
  }

  delta(delta: AnswerDelta): void {
    const next = applyDelta(this.state, delta.requestId, delta.text);
    if (next === this.state) return;
    this.deltasReceived += 1;
    this.state = next;
    this.scheduleRender();
  }

  result(result: AnswerResult): void {
    const next = applyResult(this.state, result);
    if (next === this.state) return;
    const hasNote = splitExtractiveNote(next.text).note !== undefined;
    this.state = { ...next, showExtractiveNotice: hasNote && !this.extractiveNoticeShown };
    if (hasNote) this.extractiveNoticeShown = true;
    this.postRender();
  }

  error(message: string): void {
    this.state = applyError(this.state, message);
    this.postRender();
  }

  /** Resolves with the next render report matching `predicate` (used by the e2e hook). */
  waitForRender(predicate: (report: RenderedReport) => boolean): Promise<RenderedReport> {
    if (this.lastRendered && predicate(this.lastRendered)) return Promise.resolve(this.lastRendered);
    return new Promise((resolve) => {
      const listener = (report: RenderedReport): void => {
        if (!predicate(report)) return;
        this.renderedListeners.splice(this.renderedListeners.indexOf(listener), 1);
        resolve(report);
      };
      this.renderedListeners.push(listener);
    });
  }

  /** Test builds only: asks the webview to click the element matching `selector`, as a user would. */
  async clickInWebview(selector: string): Promise<boolean> {
    if (!CODEQA_TEST_BUILD) return false;
    return (await this.panel?.webview.postMessage({ type: "testClick", selector })) ?? false;
  }

  dispose(): void {
    this.panel?.dispose();
    if (this.renderTimer) clearTimeout(this.renderTimer);
  }

  private ensurePanel(): void {
    if (this.panel) {
      if (!this.panel.visible) this.panel.reveal(vscode.ViewColumn.Beside, true);
      return;
    }
    const panel = vscode.window.createWebviewPanel(
      "codeqa.answer",
      "CodeQA",
      { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true },
      { enableScripts: true, localResourceRoots: webviewRoots(this.extensionUri), retainContextWhenHidden: true },
    );
    panel.webview.html = webviewPage(panel.webview, this.extensionUri, { script: "webview.js", title: "CodeQA", allowImages: true });
    panel.webview.onDidReceiveMessage((message: FromWebview) => void this.onMessage(message));
    panel.onDidDispose(() => {
      this.panel = undefined;
    });
    this.panel = panel;
  }

  private scheduleRender(): void {
    if (this.renderTimer) return;
    this.renderTimer = setTimeout(() => {
      this.renderTimer = undefined;
      this.postRender();
    }, RENDER_INTERVAL_MS);
  }

  private postRender(): void {
    if (this.renderTimer) {
      clearTimeout(this.renderTimer);
      this.renderTimer = undefined;
    }
    void this.panel?.webview.postMessage({
      type: "render",
      generation: this.generation,
      phase: this.state.phase,
      html: renderAnswer(this.state),
    });
  }

  private async onMessage(message: FromWebview): Promise<void> {
    switch (message.type) {
      case "ready":
        this.postRender();
        return;
      case "rendered": {
        const { type: _type, ...report } = message;
        if (report.generation !== this.generation) return;
        this.lastRendered = report;
        if (report.phase === "streaming") this.streamingRenders += 1;
        for (const listener of [...this.renderedListeners]) listener(report);
        return;
      }
      case "openCitation": {
        const citation = this.state.result?.citations.find((c) => c.number === message.number);
        if (citation) await openCitation(citation, this.panel?.viewColumn);
        return;
      }
      case "openUri": {
        const target = parseFileTarget(message.uri);
        if (!/^file:/i.test(target.uri)) return;
        const range = target.startLine !== undefined ? rangeForLines(target.startLine, target.endLine!) : undefined;
        await openRange(vscode.Uri.parse(target.uri), range, this.panel?.viewColumn);
        return;
      }
    }
  }
}

/** Opens the cited file with the cited lines selected, beside the answer (never over it). */
export async function openCitation(citation: Citation, answerColumn?: vscode.ViewColumn): Promise<vscode.TextEditor | undefined> {
  const editor = await openRange(vscode.Uri.parse(citation.uri), citation.range, answerColumn);
  if (editor && citation.stale) {
    vscode.window.setStatusBarMessage(`CodeQA: ${citation.path} changed since it was indexed; lines may have moved`, 6000);
  }
  return editor;
}

/** Opens `uri` with `range` selected; `avoidColumn` is the group of the answer or chat that
 * asked for it, which must stay visible (the file opens in another group, made if needed). */
export async function openRange(
  uri: vscode.Uri,
  range: LspRange | undefined,
  avoidColumn?: vscode.ViewColumn,
): Promise<vscode.TextEditor | undefined> {
  try {
    const document = await vscode.workspace.openTextDocument(uri);
    const active = vscode.window.activeTextEditor?.viewColumn;
    const visible = vscode.window.visibleTextEditors.map((e) => e.viewColumn).filter((c): c is vscode.ViewColumn => c !== undefined);
    const viewColumn = targetColumn(avoidColumn, active, visible) as vscode.ViewColumn;
    const editor = await vscode.window.showTextDocument(document, { viewColumn, preview: false });
    if (range) {
      const sel = selectionForRange(range, document.lineCount, (line) => document.lineAt(line).text.length);
      const selection = new vscode.Selection(sel.start.line, sel.start.character, sel.end.line, sel.end.character);
      editor.selection = selection;
      editor.revealRange(selection, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
    }
    return editor;
  } catch (error) {
    void vscode.window.showWarningMessage(`CodeQA: cannot open ${uri.fsPath}: ${error instanceof Error ? error.message : String(error)}`);
    return undefined;
  }
}

function truncate(text: string, max: number): string {
  return text.length > max ? text.slice(0, max - 1) + "…" : text;
}
