/**
 * The docked chat's thread as pure data and HTML: a list of turns, each an `AnswerState` (the
 * answer panel's state, so streaming, citations and escaping behave exactly the same), rendered
 * one under the other. Each turn is a `<section data-turn=i>` so a click on its `[n]` opens that
 * turn's citation, and the "no model configured" notice shows on the first turn only.
 */

import { applyDelta, applyError, applyResult, renderAnswer, splitExtractiveNote, startAnswer, type AnswerState } from "./answerView";
import type { AnswerResult, Citation } from "./protocol";

export interface ChatThread {
  readonly threadId: string | undefined;
  readonly turns: readonly AnswerState[];
}

/** A turn of `codeqa.conversation.get`. */
export interface StoredTurn {
  readonly question: string;
  readonly answer: string;
  readonly citations: ReadonlyArray<{ number: number; path: string; startLine: number; endLine: number; symbol?: string | null }>;
  readonly provider?: string;
}

export interface StoredThread {
  readonly id: string;
  readonly title: string;
  readonly root?: string;
  readonly turns: readonly StoredTurn[];
}

export interface ThreadSummary {
  readonly id: string;
  readonly title: string;
  readonly turns: number;
  readonly updated: number;
}

export const emptyThread: ChatThread = { threadId: undefined, turns: [] };

export function askInThread(thread: ChatThread, question: string, requestId: string): ChatThread {
  return { ...thread, turns: [...thread.turns, startAnswer(question, requestId)] };
}

function mapLast(thread: ChatThread, fn: (turn: AnswerState) => AnswerState): ChatThread {
  if (thread.turns.length === 0) return thread;
  const turns = [...thread.turns];
  turns[turns.length - 1] = fn(turns[turns.length - 1]);
  return { ...thread, turns };
}

export function threadDelta(thread: ChatThread, requestId: string, text: string): ChatThread {
  const last = thread.turns[thread.turns.length - 1];
  if (!last || last.requestId !== requestId) return thread;
  return mapLast(thread, (turn) => applyDelta(turn, requestId, text));
}

export function threadResult(thread: ChatThread, result: AnswerResult & { threadId?: string }): ChatThread {
  const next = mapLast(thread, (turn) => applyResult(turn, result));
  return { ...next, threadId: result.threadId ?? thread.threadId };
}

export function threadError(thread: ChatThread, message: string): ChatThread {
  return mapLast(thread, (turn) => applyError(turn, message));
}

/** A stored thread (after a reload, or picked from the history) as finished turns. */
export function threadFromStored(stored: StoredThread): ChatThread {
  const root = stored.root ?? "";
  const turns = stored.turns.map((turn, i): AnswerState => {
    const citations: Citation[] = turn.citations.map((c) => ({
      number: c.number,
      path: c.path,
      startLine: c.startLine,
      endLine: c.endLine,
      symbol: c.symbol ?? null,
      uri: fileUri(root, c.path),
      range: { start: { line: c.startLine - 1, character: 0 }, end: { line: c.endLine, character: 0 } },
      stale: false,
    }));
    const result: AnswerResult = {
      requestId: `stored-${stored.id}-${i}`, answer: turn.answer, citations, confident: true,
      provider: turn.provider ?? "", model: null, error: null,
    };
    return applyResult(startAnswer(turn.question, result.requestId), result);
  });
  return { threadId: stored.id, turns };
}

function fileUri(root: string, path: string): string {
  const full = `${root.replace(/\/+$/, "")}/${path}`;
  return "file://" + full.split("/").map((part) => encodeURIComponent(part)).join("/");
}

/** The whole thread; the first turn carrying the extractive note shows the notice once. */
export function renderThread(thread: ChatThread): string {
  if (thread.turns.length === 0) {
    return '<p class="pending empty">Ask a question about your code. Follow-ups keep the context: "and where is it called from?"</p>';
  }
  let noticeShown = false;
  return thread.turns
    .map((turn, i) => {
      const hasNote = splitExtractiveNote(turn.text).note !== undefined;
      const show = hasNote && !noticeShown;
      if (hasNote) noticeShown = true;
      const copy = turn.phase === "done" ? `<a href="#" class="copy" data-copy="${i}" title="Copy the answer">Copy</a>` : "";
      return `<section class="turn" data-turn="${i}">${renderAnswer({ ...turn, showExtractiveNotice: show })}${copy}</section>`;
    })
    .join("\n");
}

/** What "Copy" puts on the clipboard: the answer's markdown without the extractive note. */
export function copyText(turn: AnswerState): string {
  return splitExtractiveNote(turn.text).body.trim();
}
