/**
 * Citation and search-result presentation: labels, `file:` link parsing and editor selections.
 * Pure (no `vscode` import) so the exact ranges we select are unit-tested.
 */

import type { CitationRef } from "./markdown";
import type { Citation, LspRange, SearchHit } from "./protocol";

/** `symbol — path:start-end` (or `path:start-end` when the chunk has no symbol). */
export function sourceLabel(citation: Pick<Citation, "symbol" | "path" | "startLine" | "endLine">): string {
  const location = `${citation.path}:${lineSpan(citation.startLine, citation.endLine)}`;
  return citation.symbol ? `${citation.symbol} — ${location}` : location;
}

export function lineSpan(startLine: number, endLine: number): string {
  return endLine > startLine ? `${startLine}-${endLine}` : `${startLine}`;
}

/** The lookup the markdown renderer uses to turn `[n]` into citation links. */
export function citationRefs(citations: readonly Citation[]): Map<number, CitationRef> {
  const refs = new Map<number, CitationRef>();
  for (const citation of citations) {
    refs.set(citation.number, { title: sourceLabel(citation), stale: citation.stale === true });
  }
  return refs;
}

export interface FileTarget {
  /** The URI without its fragment. */
  readonly uri: string;
  /** 1-based inclusive line span from a `#L10-L20` / `#L10` fragment, if any. */
  readonly startLine?: number;
  readonly endLine?: number;
}

/** Splits `file:///a.py#L10-L20` into the file URI and its 1-based line span. */
export function parseFileTarget(target: string): FileTarget {
  const hash = target.indexOf("#");
  if (hash < 0) return { uri: target };
  const uri = target.slice(0, hash);
  const match = /^L(\d+)(?:-L?(\d+))?$/.exec(target.slice(hash + 1));
  if (!match) return { uri };
  const startLine = Number(match[1]);
  const endLine = match[2] !== undefined ? Math.max(startLine, Number(match[2])) : startLine;
  return { uri, startLine, endLine };
}

/** The LSP range (0-based, end = start of the line after) covering 1-based lines start..end. */
export function rangeForLines(startLine: number, endLine: number): LspRange {
  return {
    start: { line: Math.max(0, startLine - 1), character: 0 },
    end: { line: Math.max(0, endLine), character: 0 },
  };
}

/**
 * The selection to show for a citation range. The server's ranges end at the start of the line
 * after the cited code; selecting up to there would put the cursor on an uncited line, so a
 * range ending at column 0 is pulled back to the end of its last cited line.
 * `lineLength(n)` gives the length of line n of the document (0-based); `lineCount` bounds it.
 */
export function selectionForRange(
  range: LspRange,
  lineCount: number,
  lineLength: (line: number) => number,
): LspRange {
  const last = Math.max(0, lineCount - 1);
  const startLine = Math.min(range.start.line, last);
  const start = { line: startLine, character: Math.min(range.start.character, lineLength(startLine)) };
  let endLine = Math.min(range.end.line, last);
  let endCharacter = range.end.character;
  if (range.end.line > range.start.line && range.end.character === 0) {
    endLine = Math.min(range.end.line - 1, last);
    endCharacter = lineLength(endLine);
  } else if (range.end.line > last) {
    endCharacter = lineLength(last);
  }
  endCharacter = Math.min(endCharacter, lineLength(endLine));
  if (endLine < startLine) return { start, end: start };
  return { start, end: { line: endLine, character: endCharacter } };
}

export interface SearchItemView {
  readonly label: string;
  readonly description: string;
  readonly detail: string;
}

const KIND_ICONS: Record<string, string> = {
  function: "symbol-function",
  method: "symbol-method",
  class: "symbol-class",
  module: "symbol-module",
  struct: "symbol-struct",
  interface: "symbol-interface",
  enum: "symbol-enum",
  type: "symbol-class",
  variable: "symbol-variable",
  constant: "symbol-constant",
};

/** QuickPick rows for a search result: symbol, `path:lines` (the call's line for a use),
 * score and the preview line. */
export function searchItemView(hit: SearchHit): SearchItemView {
  const icon = KIND_ICONS[(hit.kind ?? "").toLowerCase()] ?? "symbol-file";
  const name = hit.symbol || hit.path.split("/").pop() || hit.path;
  const preview = (hit.preview ?? "").trim();
  const clipped = preview.length > 120 ? preview.slice(0, 117) + "..." : preview;
  const call = hit.useLines?.[0];
  return {
    label: `$(${icon}) ${name}`,
    description: `${hit.path}:${call ?? lineSpan(hit.startLine, hit.endLine)}`,
    detail: `${hit.score.toFixed(3)}  ${clipped}`.trimEnd(),
  };
}

/** Where opening a search result goes: the call, for a use ("who calls f?"); else the hit. */
export function hitRange(hit: SearchHit): LspRange {
  const call = hit.useLines?.[0];
  return call !== undefined ? rangeForLines(call, call) : hit.range;
}

/** How "Ask about the selection" prefills the question: where the selected code is. */
export function selectionQuestionPrefix(relativePath: string, startLine: number, endLine: number): string {
  return `About ${relativePath}:${lineSpan(startLine, endLine)}: `;
}

/**
 * The editor group a cited file opens in: the active editor's (or any visible editor's) group
 * unless that is the group showing the answer, else the group right of the answer (VS Code
 * creates it). Without an answer group (search results), the first group as before.
 */
export function targetColumn(avoid: number | undefined, active: number | undefined, visible: readonly number[]): number {
  if (avoid === undefined) return active ?? 1;
  if (active !== undefined && active !== avoid) return active;
  const other = visible.find((c) => c !== avoid);
  if (other !== undefined) return other;
  return avoid + 1;
}

/** The ask box's hint: about the user's project (the open file when there is one), never
 * about this tool. */
export function questionPlaceholder(activeRelativePath: string | undefined): string {
  if (activeRelativePath) return `e.g. what calls the code in ${activeRelativePath}? (Enter to ask)`;
  return "e.g. where is the configuration loaded? (Enter to ask)";
}
