/**
 * Entry point: wires the server connection, the answer panel, the docked chat, the `@codeqa`
 * participant, the status bar and the commands, and reacts to settings and secret changes.
 * The end-to-end scenario is not part of this bundle: the test build wraps `activate` in its
 * own entry (e2e/src/main.ts) and drives the API returned here.
 */

import * as crypto from "node:crypto";
import * as vscode from "vscode";
import { AnswerPanel } from "./answerPanel";
import { deltaRouter, participantHandler, registerChatParticipant, type ChatApi, type DeltaListeners, type ParticipantHandler } from "./chatParticipant";
import { CHAT_VIEW_ID, ChatView } from "./chatView";
import { selectionQuestionPrefix } from "./citations";
import { Commands } from "./commands";
import { Notifier } from "./notifier";
import { recordingChannel } from "./outputTail";
import { ServerCommands, type IndexStatus } from "./protocol";
import { CodeQaServer } from "./server";
import { requiresRestart } from "./settings";
import { StatusBar } from "./statusBar";

/** What `activate` returns: handles for other extensions and tests. */
export interface CodeQaApi {
  readonly server: CodeQaServer;
  readonly panel: AnswerPanel;
  readonly chat: ChatView;
  readonly commands: Commands;
  readonly statusBar: StatusBar;
  readonly notifier: Notifier;
  /** `@codeqa`'s request handler, and whether VS Code's chat took the participant. */
  readonly participant: { readonly handler: ParticipantHandler; readonly registered: boolean };
}

let server: CodeQaServer | undefined;

export function activate(context: vscode.ExtensionContext): CodeQaApi {
  const output = vscode.window.createOutputChannel("CodeQA");
  const recording = recordingChannel(output);
  const notifier = new Notifier(output);
  const panel = new AnswerPanel(context.extensionUri);
  // The chat needs the server and the server's delta listener needs the chat.
  const chatRef: { view?: ChatView } = {};
  const participantListeners: DeltaListeners = new Map();
  const toParticipant = deltaRouter(participantListeners);
  const statusBar = new StatusBar(async () =>
    server?.isRunning ? server.execute<IndexStatus>(ServerCommands.status) : undefined,
  );
  server = new CodeQaServer(
    context,
    recording,
    {
      onStateChange: (phase, detail) => statusBar.serverState(phase, detail),
      onProgress: (value) => statusBar.progress(value),
      onAnswerDelta: (delta) => {
        panel.delta(delta);
        chatRef.view?.delta(delta);
        toParticipant(delta);
      },
      onAnswer: (result) => panel.result(result),
      onShowAnswerStarted: (args) => panel.begin(showAnswerTitle(args), undefined),
    },
    notifier,
  );
  const commands = new Commands(context, server, panel, (status) => statusBar.showStatus(status));
  const running = server;
  const chatView = new ChatView(context.extensionUri, running);
  chatRef.view = chatView;
  const handler = participantHandler({
    execute: (command, argument, token) => running.execute(command, argument, token),
    listeners: participantListeners,
    reference: (citation) =>
      new vscode.Location(vscode.Uri.parse(citation.uri), new vscode.Range(citation.startLine - 1, 0, citation.endLine, 0)),
    newRequestId: () => `vscode-participant-${crypto.randomUUID()}`,
  });
  const chatApi = (vscode as { chat?: ChatApi }).chat;
  const participant = registerChatParticipant(chatApi, handler, vscode.Uri.joinPath(context.extensionUri, "media", "chat.svg"));
  if (participant) context.subscriptions.push(participant);

  context.subscriptions.push(
    output,
    panel,
    statusBar,
    ...commands.register(),
    chatView,
    vscode.window.registerWebviewViewProvider(CHAT_VIEW_ID, chatView, { webviewOptions: { retainContextWhenHidden: true } }),
    vscode.commands.registerCommand("codeqa.chat.ask", (question?: string) =>
      typeof question === "string" ? chatView.focus().then(() => chatView.ask(question)) : chatView.focus(""),
    ),
    vscode.commands.registerCommand("codeqa.chat.new", () => chatView.newChat()),
    vscode.commands.registerCommand("codeqa.chat.history", () => chatView.history()),
    vscode.commands.registerCommand("codeqa.chat.askSelection", () => {
      const editor = vscode.window.activeTextEditor;
      if (!editor) return chatView.focus("");
      const { start, end } = editor.selection;
      const endLine = end.character === 0 && end.line > start.line ? end.line : end.line + 1;
      const relative = vscode.workspace.asRelativePath(editor.document.uri, false);
      return chatView.focus(selectionQuestionPrefix(relative, start.line + 1, endLine));
    }),
    vscode.commands.registerCommand("codeqa.chat.askFile", () => {
      const editor = vscode.window.activeTextEditor;
      const relative = editor ? vscode.workspace.asRelativePath(editor.document.uri, false) : undefined;
      return chatView.focus(relative ? `About ${relative}: ` : "");
    }),
    vscode.commands.registerCommand("codeqa.showLogs", () => output.show(true)),
    vscode.commands.registerCommand("codeqa.restartServer", () => running.restart()),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (!event.affectsConfiguration("codeqa")) return;
      if (requiresRestart((section) => event.affectsConfiguration(section))) void running.restart();
      else void running.settingsChanged();
    }),
    context.secrets.onDidChange((event) => {
      if (event.key.startsWith("codeqa.apiKey.")) void running.restart();
    }),
    { dispose: () => void running.dispose() },
  );

  // Without a folder there is nothing to index: the server starts on the first command instead.
  if (vscode.workspace.workspaceFolders?.length) void running.start();
  else statusBar.serverState("stopped");
  context.subscriptions.push(
    vscode.workspace.onDidChangeWorkspaceFolders(() => {
      if (vscode.workspace.workspaceFolders?.length && !running.isRunning) void running.start();
    }),
  );

  return {
    server: running,
    panel,
    chat: chatView,
    commands,
    statusBar,
    notifier,
    participant: { handler, registered: participant !== undefined },
  };
}

export async function deactivate(): Promise<void> {
  await server?.dispose();
  server = undefined;
}

function showAnswerTitle(args: unknown): string {
  const target = args as { uri?: string; position?: { line?: number } } | undefined;
  if (!target?.uri) return "Explain";
  const relative = vscode.workspace.asRelativePath(vscode.Uri.parse(target.uri), false);
  const line = typeof target.position?.line === "number" ? `:${target.position.line + 1}` : "";
  return `Explain the code at ${relative}${line}`;
}
