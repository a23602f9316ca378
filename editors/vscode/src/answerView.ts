/**
 * The answer panel's state and its HTML, as pure functions: the extension host keeps one
 * `AnswerState`, feeds it deltas and the final result, and posts `renderAnswer(state)` to the
 * webview, which only inserts it. Rendering on the host keeps the webview script trivial and
 * lets the unit tests check exactly what the user sees (escaping, citation links, sources).
 */

import { citationRefs, sourceLabel } from "./citations";
import { escapeHtml, renderMarkdown } from "./markdown";
import type { AnswerResult, Citation } from "./protocol";

export type AnswerPhase = "waiting" | "streaming" | "done" | "error";

export interface AnswerState {
  /** The request this panel shows; deltas for other requests are ignored. */
  readonly requestId: string | undefined;
  /** What was asked ("Explain `Session.send`", the question text, ...). */
  readonly title: string;
  readonly phase: AnswerPhase;
  /** The markdown received so far (the final answer once done). */
  readonly text: string;
  readonly result?: AnswerResult;
  readonly error?: string;
  /** Show the one-line "no model configured" notice (only on the first extractive answer). */
  readonly showExtractiveNotice?: boolean;
}

/** The server opens an extractive answer with a paragraph saying no model is configured (or
 * remote providers are off). Said on every answer it is noise: the panel shows it once as one
 * line and the provider label says "extractive" on the others. */
const EXTRACTIVE_NOTE = /^\s*\*(?:No language model is configured|`allowRemote` is false)[^*]*(?:\*\*[^*]*)*\*\s*(?:\n|$)/;

export function splitExtractiveNote(text: string): { note: string | undefined; body: string } {
  const match = EXTRACTIVE_NOTE.exec(text);
  if (!match) return { note: undefined, body: text };
  return { note: match[0].trim(), body: text.slice(match[0].length).replace(/^\s*\n/, "") };
}

export const EXTRACTIVE_NOTICE =
  "No language model is configured: answers quote the most relevant code. Set <code>codeqa.provider</code> for written answers.";

export function startAnswer(title: string, requestId: string | undefined): AnswerState {
  return { requestId, title, phase: "waiting", text: "" };
}

/** Appends a streamed piece if it belongs to this answer; returns the same state otherwise. */
export function applyDelta(state: AnswerState, requestId: string, text: string): AnswerState {
  if (state.phase === "done" || state.phase === "error") return state;
  if (state.requestId === undefined) {
    // Adopt the server-generated id (code lens path: the server chose the id).
    return { ...state, requestId, phase: "streaming", text: state.text + text };
  }
  if (state.requestId !== requestId) return state;
  return { ...state, phase: "streaming", text: state.text + text };
}

/** The final AnswerResult replaces whatever was streamed: it is the authoritative text. */
export function applyResult(state: AnswerState, result: AnswerResult): AnswerState {
  if (state.requestId !== undefined && result.requestId && state.requestId !== result.requestId) return state;
  if (result.error) {
    return { ...state, requestId: result.requestId, phase: "error", result, text: result.answer, error: result.error };
  }
  return { ...state, requestId: result.requestId, phase: "done", result, text: result.answer };
}

export function applyError(state: AnswerState, message: string): AnswerState {
  return { ...state, phase: "error", error: message };
}

/** The panel body. Every string that came from the server or the model is escaped. */
export function renderAnswer(state: AnswerState): string {
  const citations = state.result?.citations ?? [];
  const parts: string[] = [];
  parts.push(`<header><h1 class="question">${escapeHtml(state.title)}</h1>${renderMeta(state)}</header>`);
  if (state.result && !state.result.confident && state.phase === "done") {
    parts.push(
      '<div class="notice low-confidence">Low confidence: the retrieved code may not answer this question. Check the sources.</div>',
    );
  }
  if (state.error) {
    parts.push(`<div class="notice error" role="alert">${escapeHtml(state.error)}</div>`);
  }
  const { note, body } = splitExtractiveNote(state.text);
  if (note && state.showExtractiveNotice) parts.push(`<div class="notice extractive">${EXTRACTIVE_NOTICE}</div>`);
  if (body) {
    parts.push(`<article class="answer">${renderMarkdown(body, { citations: citationRefs(citations) })}</article>`);
  } else if (state.phase === "waiting") {
    parts.push('<p class="pending">Searching the index…</p>');
  }
  if (state.phase === "streaming") parts.push('<p class="pending">Generating…</p>');
  if (citations.length > 0) parts.push(renderSources(citations));
  return parts.join("\n");
}

function renderMeta(state: AnswerState): string {
  const result = state.result;
  if (!result) return "";
  const model = result.model ? ` · ${escapeHtml(result.model)}` : "";
  return `<div class="meta">${escapeHtml(result.provider)}${model}</div>`;
}

function renderSources(citations: readonly Citation[]): string {
  const items = citations.map((c) => {
    const stale = c.stale ? ' <span class="badge stale" title="The file changed since it was indexed">changed</span>' : "";
    const cls = c.stale ? "source stale" : "source";
    return (
      `<li class="${cls}"><a href="#" class="cite-source" data-citation="${c.number}">` +
      `<span class="num">[${c.number}]</span> ${escapeHtml(sourceLabel(c))}</a>${stale}</li>`
    );
  });
  return `<section class="sources"><h2>Sources</h2><ol>${items.join("")}</ol></section>`;
}
