import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type * as vscode from "vscode";
import {
  PARTICIPANT_ID,
  participantHandler,
  registerChatParticipant,
  threadIdFromHistory,
  type ChatApi,
  type DeltaListeners,
  type ParticipantDeps,
} from "../src/chatParticipant";
import type { AnswerResult, Citation } from "../src/protocol";

const noCancel = { isCancellationRequested: false, onCancellationRequested: () => ({ dispose() {} }) } as unknown as vscode.CancellationToken;
const handler = participantHandler({
  execute: async () => {
    throw new Error("not called");
  },
  listeners: new Map(),
  reference: () => ({}) as vscode.Location,
  newRequestId: () => "r",
});

describe("@codeqa registration", () => {
  it("is skipped without VS Code's chat API, and nothing throws", () => {
    assert.equal(registerChatParticipant(undefined, handler, "icon"), undefined);
    assert.equal(registerChatParticipant({}, handler, "icon"), undefined);
  });

  it("is skipped when the API exists but this build has no chat (code-server)", () => {
    const chat: ChatApi = {
      createChatParticipant() {
        throw new Error("chat is not available");
      },
    };
    assert.equal(registerChatParticipant(chat, handler, "icon"), undefined);
  });

  it("registers the participant with its id, handler and icon when there is a chat", () => {
    const made: Array<{ id: string; handler: unknown }> = [];
    const participant = { iconPath: undefined as unknown, dispose() {} };
    const chat: ChatApi = {
      createChatParticipant(id, h) {
        made.push({ id, handler: h });
        return participant;
      },
    };
    assert.equal(registerChatParticipant(chat, handler, "icon"), participant);
    assert.deepEqual(made, [{ id: PARTICIPANT_ID, handler }]);
    assert.equal(participant.iconPath, "icon");
  });
});

describe("@codeqa handler", () => {
  const citation = { number: 1, path: "a.py", uri: "file:///w/a.py", startLine: 3, endLine: 5 } as Citation;

  function recorder(): { markdown: string[]; references: unknown[]; stream: { markdown(v: string): void; reference(v: unknown): void } } {
    const markdown: string[] = [];
    const references: unknown[] = [];
    return {
      markdown,
      references,
      stream: { markdown: (v) => void markdown.push(v), reference: (v) => void references.push(v) },
    };
  }

  function deps(answer: (args: Record<string, unknown>, listeners: DeltaListeners) => AnswerResult & { threadId?: string }): ParticipantDeps & { calls: Array<Record<string, unknown>> } {
    const listeners: DeltaListeners = new Map();
    const calls: Array<Record<string, unknown>> = [];
    return {
      calls,
      listeners,
      execute: async (command, argument) => {
        calls.push({ command, ...(argument as Record<string, unknown>) });
        return answer(argument as Record<string, unknown>, listeners);
      },
      reference: (c) => ({ cited: c.path, lines: [c.startLine, c.endLine] }) as unknown as vscode.Location,
      newRequestId: () => `req-${calls.length}`,
    };
  }

  const result = (answer: string, threadId: string): AnswerResult & { threadId: string } =>
    ({ requestId: "x", answer, citations: [citation], confident: true, provider: "openai", model: null, error: null, threadId }) as AnswerResult & { threadId: string };

  it("starts a thread, streams the deltas of its own request only, and attaches the citations", async () => {
    const d = deps((args, listeners) => {
      listeners.get(String(args.requestId))?.("Streamed ");
      listeners.get("someone-else")?.("not ours");
      listeners.get(String(args.requestId))?.("[1].");
      return result("Streamed [1].", "t1");
    });
    const r = recorder();
    const out = await participantHandler(d)({ prompt: "how?" }, { history: [] }, r.stream as never, noCancel);
    assert.deepEqual(d.calls, [{ command: "codeqa.conversation.continue", question: "how?", newThread: true, requestId: "req-0" }]);
    assert.deepEqual(r.markdown, ["Streamed ", "[1]."]);
    assert.deepEqual(r.references, [{ cited: "a.py", lines: [3, 5] }]);
    assert.deepEqual(out, { metadata: { threadId: "t1" } });
    assert.equal(d.listeners.size, 0);
  });

  it("continues the session's thread and writes an answer that did not stream in one piece", async () => {
    const d = deps(() => result("Quoted code [1].", "t1"));
    const r = recorder();
    const history = [
      { prompt: "how?", participant: PARTICIPANT_ID },
      { participant: "other.participant", result: { metadata: { threadId: "theirs" } } },
      { participant: PARTICIPANT_ID, result: { metadata: { threadId: "t1" } } },
    ];
    assert.equal(threadIdFromHistory(history), "t1");
    await participantHandler(d)({ prompt: "and where?" }, { history }, r.stream as never, noCancel);
    assert.equal(d.calls[0].threadId, "t1");
    assert.equal(d.calls[0].newThread, undefined);
    assert.deepEqual(r.markdown, ["Quoted code [1]."]);
  });

  it("drops its delta listener when the server fails", async () => {
    const d = deps(() => {
      throw new Error("server down");
    });
    await assert.rejects(participantHandler(d)({ prompt: "q" }, { history: [] }, recorder().stream as never, noCancel), /server down/);
    assert.equal(d.listeners.size, 0);
  });
});
