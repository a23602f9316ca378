/**
 * The docked chat: a webview *view* (sidebar / panel, not an editor tab) showing one
 * conversation thread with streamed answers. Questions go to `codeqa.conversation.continue`,
 * so follow-ups are retrieved with the earlier subject; `[n]` and sources open beside the chat
 * (in the editor area) with the cited lines selected. After a reload the view shows this
 * editor's latest thread again (the server keeps threads on disk); "History" picks another.
 * As the answer panel, the host renders the HTML (chatThread.ts) under a strict CSP.
 */

import * as crypto from "node:crypto";
import * as vscode from "vscode";
import { openCitation } from "./answerPanel";
import {
  askInThread,
  copyText,
  emptyThread,
  renderThread,
  threadDelta,
  threadError,
  threadFromStored,
  threadResult,
  type ChatThread,
  type StoredThread,
  type ThreadSummary,
} from "./chatThread";
import type { AnswerDelta, AnswerResult } from "./protocol";
import type { CodeQaServer } from "./server";
import { webviewPage, webviewRoots } from "./webviewPage";

export const CHAT_VIEW_ID = "codeqa.chat";

/** The question box under the thread (static markup; chat.js wires it). */
const CHAT_FORM =
  '<form id="ask"><textarea id="question" rows="3" placeholder="Ask about your code (Enter to send, Shift+Enter for a new line)"></textarea><button type="submit">Ask</button></form>';

type FromChat =
  | { type: "ready" }
  | { type: "ask"; question: string }
  | { type: "openCitation"; turn: number; number: number }
  | { type: "copy"; turn: number }
  | { type: "rendered"; turns: number; text: string; citationLinks: number };

export class ChatView implements vscode.WebviewViewProvider, vscode.Disposable {
  private view: vscode.WebviewView | undefined;
  private thread: ChatThread = emptyThread;
  private loadedHistory = false;
  private renderTimer: NodeJS.Timeout | undefined;
  private inFlight: vscode.CancellationTokenSource | undefined;
  /** The last render the webview reported (the e2e test asserts on it). */
  lastRendered: { turns: number; text: string; citationLinks: number } | undefined;
  /** The editor a citation opened into last (the e2e test checks its selection). */
  lastOpened: vscode.TextEditor | undefined;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly server: CodeQaServer,
  ) {}

  get current(): ChatThread {
    return this.thread;
  }

  get visible(): boolean {
    return this.view?.visible ?? false;
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    view.webview.options = { enableScripts: true, localResourceRoots: webviewRoots(this.extensionUri) };
    view.webview.html = webviewPage(view.webview, this.extensionUri, {
      script: "chat.js",
      title: "CodeQA chat",
      allowImages: false,
      bodyClass: "chat",
      afterMain: CHAT_FORM,
    });
    view.webview.onDidReceiveMessage((message: FromChat) => void this.onMessage(message));
    view.onDidDispose(() => {
      this.view = undefined;
    });
  }

  /** Shows the chat (opening the view) and optionally prefills the question box. */
  async focus(prefill?: string): Promise<void> {
    await vscode.commands.executeCommand(`${CHAT_VIEW_ID}.focus`);
    if (prefill !== undefined) void this.view?.webview.postMessage({ type: "prefill", text: prefill });
  }

  newChat(): void {
    this.inFlight?.cancel();
    this.thread = emptyThread;
    this.loadedHistory = true;
    this.post();
  }

  /** Ask `question` in the current thread (a new thread when there is none). */
  async ask(question: string): Promise<AnswerResult | undefined> {
    question = question.trim();
    if (!question) return undefined;
    this.inFlight?.cancel();
    const cancellation = new vscode.CancellationTokenSource();
    this.inFlight = cancellation;
    const requestId = `vscode-chat-${crypto.randomUUID()}`;
    const threadId = this.thread.threadId;
    this.thread = askInThread(this.thread, question, requestId);
    this.post();
    try {
      const result = await this.server.execute<AnswerResult & { threadId?: string }>(
        "codeqa.conversation.continue",
        threadId ? { question, threadId, requestId } : { question, newThread: true, requestId },
        cancellation.token,
      );
      this.thread = threadResult(this.thread, result);
      this.post();
      return result;
    } catch (error) {
      if (!cancellation.token.isCancellationRequested) {
        this.thread = threadError(this.thread, `The server could not answer: ${error instanceof Error ? error.message : String(error)}`);
        this.post();
      }
      return undefined;
    }
  }

  delta(delta: AnswerDelta): void {
    const next = threadDelta(this.thread, delta.requestId, delta.text);
    if (next === this.thread) return;
    this.thread = next;
    if (!this.renderTimer) {
      this.renderTimer = setTimeout(() => {
        this.renderTimer = undefined;
        this.post();
      }, 40);
    }
  }

  /** Pick one of this workspace's conversations and show it. */
  async history(): Promise<void> {
    const threads = await this.server.execute<ThreadSummary[]>("codeqa.conversation.list", {});
    if (threads.length === 0) {
      void vscode.window.showInformationMessage("CodeQA: no conversations yet.");
      return;
    }
    const picked = await vscode.window.showQuickPick(
      threads.map((t) => ({ label: t.title || t.id, description: `${t.turns} turns`, id: t.id })),
      { title: "CodeQA: conversations", placeHolder: "Pick a conversation to continue" },
    );
    if (picked) await this.load(picked.id);
  }

  async load(threadId: string): Promise<void> {
    const stored = await this.server.execute<StoredThread>("codeqa.conversation.get", { threadId });
    this.thread = threadFromStored(stored);
    this.loadedHistory = true;
    this.post();
  }

  dispose(): void {
    this.inFlight?.cancel();
    if (this.renderTimer) clearTimeout(this.renderTimer);
  }

  /** After a reload: this editor's latest conversation, as it was. */
  private async restoreLatest(): Promise<void> {
    if (this.loadedHistory || this.thread.turns.length > 0) return;
    this.loadedHistory = true;
    try {
      const threads = await this.server.execute<ThreadSummary[]>("codeqa.conversation.list", { client: true });
      if (threads.length > 0 && this.thread.turns.length === 0) await this.load(threads[0].id);
    } catch {
      // No server yet (no folder open): the chat starts empty.
    }
  }

  private post(): void {
    if (this.renderTimer) {
      clearTimeout(this.renderTimer);
      this.renderTimer = undefined;
    }
    void this.view?.webview.postMessage({ type: "render", html: renderThread(this.thread) });
  }

  private async onMessage(message: FromChat): Promise<void> {
    switch (message.type) {
      case "ready":
        this.post();
        void this.restoreLatest();
        return;
      case "ask":
        await this.ask(message.question);
        return;
      case "openCitation": {
        const turn = this.thread.turns[message.turn];
        const citation = turn?.result?.citations.find((c) => c.number === message.number);
        // The chat is docked outside the editor area: the file opens in the active editor group.
        if (citation) this.lastOpened = await openCitation(citation);
        return;
      }
      case "copy": {
        const turn = this.thread.turns[message.turn];
        if (turn) await vscode.env.clipboard.writeText(copyText(turn));
        return;
      }
      case "rendered":
        this.lastRendered = { turns: message.turns, text: message.text, citationLinks: message.citationLinks };
        return;
    }
  }

  /** Test builds only: click an element of the chat as a user would. */
  async clickInWebview(selector: string): Promise<boolean> {
    if (!CODEQA_TEST_BUILD) return false;
    return (await this.view?.webview.postMessage({ type: "testClick", selector })) ?? false;
  }
}
