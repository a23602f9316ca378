/**
 * `@codeqa` in VS Code's own chat, when this VS Code has the chat participant API and a chat
 * UI (not in code-server, where the docked chat view is the way in). It answers through the
 * same server command as the docked chat (`codeqa.conversation.continue`), one conversation per
 * chat session: follow-ups in the same session continue the thread, the answer streams as it is
 * generated, and the cited code is attached as references.
 *
 * The handler is a plain function of a request, the session's history and a response stream,
 * built from what it needs (a way to run server commands, the delta listeners, how to turn a
 * citation into a location), so the e2e test calls it in the real extension host against the
 * real server with a recording stream. Nothing here needs `vscode` at run time, so the unit
 * tests check the registration decision (no chat API: not registered, nothing thrown).
 */

import type * as vscode from "vscode";
import type { AnswerDelta, AnswerResult, Citation } from "./protocol";

export const PARTICIPANT_ID = "codeqa.chat-participant";

/** Streamed pieces of an answer, routed by request id to the request that asked for it. */
export type DeltaListeners = Map<string, (text: string) => void>;

/** What the handler reads of a chat request and writes to a response stream. */
export type ParticipantRequest = Pick<vscode.ChatRequest, "prompt">;
export interface ParticipantContext {
  readonly history: readonly unknown[];
}
export type ParticipantStream = Pick<vscode.ChatResponseStream, "markdown" | "reference">;
export type ParticipantHandler = (
  request: ParticipantRequest,
  context: ParticipantContext,
  stream: ParticipantStream,
  token: vscode.CancellationToken,
) => Promise<vscode.ChatResult>;

export interface ParticipantDeps {
  /** Runs a server command (CodeQaServer.execute). */
  execute(command: string, argument: object, token: vscode.CancellationToken): Promise<AnswerResult & { threadId?: string }>;
  readonly listeners: DeltaListeners;
  /** The cited lines as a location VS Code's chat can show and open. */
  reference(citation: Citation): vscode.Location;
  newRequestId(): string;
}

/**
 * The thread of this chat session: the id our last answer in it carried. Response turns are
 * recognised by shape (participant + result), which is what VS Code passes and what a test can
 * build without the `ChatResponseTurn` constructor (private in the API's types).
 */
export function threadIdFromHistory(history: readonly unknown[]): string | undefined {
  for (let i = history.length - 1; i >= 0; i--) {
    const turn = history[i] as { participant?: unknown; result?: { metadata?: { threadId?: unknown } } } | null;
    if (turn && turn.participant === PARTICIPANT_ID && turn.result) {
      const threadId = turn.result.metadata?.threadId;
      if (typeof threadId === "string") return threadId;
    }
  }
  return undefined;
}

export function participantHandler(deps: ParticipantDeps): ParticipantHandler {
  return async (request, context, stream, token) => {
    const threadId = threadIdFromHistory(context.history);
    const requestId = deps.newRequestId();
    let streamed = false;
    deps.listeners.set(requestId, (text) => {
      streamed = true;
      stream.markdown(text);
    });
    try {
      const result = await deps.execute(
        "codeqa.conversation.continue",
        threadId ? { question: request.prompt, threadId, requestId } : { question: request.prompt, newThread: true, requestId },
        token,
      );
      // A model streams its answer as deltas; the extractive answerer (and a cached answer) does not.
      if (!streamed) stream.markdown(result.answer);
      for (const citation of result.citations) stream.reference(deps.reference(citation));
      return { metadata: { threadId: result.threadId } };
    } finally {
      deps.listeners.delete(requestId);
    }
  };
}

/** The part of `vscode.chat` registration uses (absent on VS Code builds without chat). */
export interface ChatApi {
  createChatParticipant?(id: string, handler: vscode.ChatRequestHandler): { iconPath?: unknown } & vscode.Disposable;
}

/**
 * Registers `@codeqa` when this VS Code has a chat; otherwise returns undefined and the docked
 * chat view remains the only way in (nothing else depends on the participant).
 */
export function registerChatParticipant(
  chat: ChatApi | undefined,
  handler: ParticipantHandler,
  iconPath: unknown,
): vscode.Disposable | undefined {
  if (!chat || typeof chat.createChatParticipant !== "function") return undefined;
  try {
    const participant = chat.createChatParticipant(PARTICIPANT_ID, handler);
    participant.iconPath = iconPath;
    return participant;
  } catch {
    return undefined; // the API exists but this build has no chat
  }
}

/** Routes streamed pieces to the participant request they belong to. */
export function deltaRouter(listeners: DeltaListeners): (delta: AnswerDelta) => void {
  return (delta) => listeners.get(delta.requestId)?.(delta.text);
}
