/**
 * `@codeqa` in VS Code's own chat, when this VS Code has the chat participant API and a chat
 * UI (not in code-server, where the docked chat view is the way in). It answers through the
 * same server commands as the docked chat, one conversation per chat session: follow-ups in
 * the same session continue the thread, and the cited code is attached as references.
 */

import * as crypto from "node:crypto";
import * as vscode from "vscode";
import type { AnswerDelta, AnswerResult } from "./protocol";
import type { CodeQaServer } from "./server";

type DeltaListeners = Map<string, (text: string) => void>;

export function registerChatParticipant(
  context: vscode.ExtensionContext,
  server: CodeQaServer,
  listeners: DeltaListeners,
): vscode.Disposable | undefined {
  const chat = (vscode as { chat?: typeof vscode.chat }).chat;
  if (!chat || typeof chat.createChatParticipant !== "function") return undefined;
  const handler: vscode.ChatRequestHandler = async (request, chatContext, stream, token) => {
    // The thread of this chat session: the id our earlier result carried.
    const previous = [...chatContext.history].reverse().find((turn): turn is vscode.ChatResponseTurn => turn instanceof vscode.ChatResponseTurn && turn.participant === "codeqa.chat-participant");
    const threadId = (previous?.result.metadata as { threadId?: string } | undefined)?.threadId;
    const requestId = `vscode-participant-${crypto.randomUUID()}`;
    let streamed = false;
    listeners.set(requestId, (text) => {
      streamed = true;
      stream.markdown(text);
    });
    const cancellation = new vscode.CancellationTokenSource();
    token.onCancellationRequested(() => cancellation.cancel());
    try {
      const result = await server.execute<AnswerResult & { threadId?: string }>(
        "codeqa.conversation.continue",
        threadId ? { question: request.prompt, threadId, requestId } : { question: request.prompt, newThread: true, requestId },
        cancellation.token,
      );
      if (!streamed) stream.markdown(result.answer);
      for (const citation of result.citations) {
        const start = new vscode.Position(citation.startLine - 1, 0);
        stream.reference(new vscode.Location(vscode.Uri.parse(citation.uri), new vscode.Range(start, new vscode.Position(citation.endLine, 0))));
      }
      return { metadata: { threadId: result.threadId } };
    } finally {
      listeners.delete(requestId);
    }
  };
  try {
    const participant = chat.createChatParticipant("codeqa.chat-participant", handler);
    participant.iconPath = vscode.Uri.joinPath(context.extensionUri, "media", "chat.svg");
    return participant;
  } catch {
    return undefined; // the API exists but this build has no chat (code-server)
  }
}

/** Routes streamed pieces to the participant request they belong to. */
export function deltaRouter(listeners: DeltaListeners): (delta: AnswerDelta) => void {
  return (delta) => listeners.get(delta.requestId)?.(delta.text);
}
