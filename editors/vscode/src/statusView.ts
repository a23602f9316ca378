/**
 * What the status bar item and "Show index status" say, as pure functions of the server state
 * (LSP `$/progress` values and the `codeqa.status` result).
 */

import type { IndexStatus } from "./protocol";

export type ServerPhase = "starting" | "indexing" | "ready" | "failed" | "stopped";

export interface StatusBarState {
  readonly phase: ServerPhase;
  readonly percentage?: number;
  readonly message?: string;
  readonly status?: IndexStatus;
}

export interface StatusBarView {
  readonly text: string;
  readonly tooltip: string;
}

export function statusBarView(state: StatusBarState): StatusBarView {
  switch (state.phase) {
    case "starting":
      return { text: "$(loading~spin) CodeQA", tooltip: "CodeQA: starting the language server" };
    case "indexing": {
      const pct = state.percentage !== undefined ? ` ${Math.round(state.percentage)}%` : "";
      // The phase with its counts and ETA ("embedding chunks 1200/5000, about 40 s left"), so a
      // long embedding run never reads as a finished "100%".
      const message = state.message ? `: ${state.message}` : "";
      return { text: `$(sync~spin) CodeQA${pct}${message || ": indexing"}`, tooltip: `CodeQA: indexing${message}. Click for status.` };
    }
    case "ready": {
      const status = state.status;
      if (!status) return { text: "$(database) CodeQA", tooltip: "CodeQA: ready. Click for status." };
      const partial = status.coverage < 0.995 ? ` (${formatPercent(status.coverage)})` : "";
      return {
        text: `$(database) CodeQA: ${status.chunks} chunks${partial}`,
        tooltip: `CodeQA: ${statusSummary(status)}. Click for details.`,
      };
    }
    case "failed":
      return { text: "$(error) CodeQA", tooltip: `CodeQA: the server is not running${state.message ? ` (${state.message})` : ""}. Click for logs.` };
    case "stopped":
      return { text: "$(circle-slash) CodeQA", tooltip: "CodeQA: stopped" };
  }
}

export function formatPercent(fraction: number): string {
  const pct = Math.max(0, Math.min(1, fraction)) * 100;
  return `${pct >= 99.95 || pct === 0 ? pct.toFixed(0) : pct.toFixed(1)}%`;
}

/** One line for the status notification: files, chunks, coverage, embedder, provider/model. */
export function statusSummary(status: IndexStatus, now: number = Date.now() / 1000): string {
  const model = status.model ? ` (${status.model})` : "";
  const parts = [
    `${status.files} files`,
    `${status.chunks} chunks`,
    `${formatPercent(status.coverage)} embedded`,
    `embedder ${status.embedder}`,
    `provider ${status.provider}${model}`,
  ];
  if (status.indexing) parts.push(status.progress?.message ? `indexing now (${status.progress.message})` : "indexing now");
  else if (status.lastIndexed) parts.push(`indexed ${formatAge(now - status.lastIndexed)}`);
  const skipped = Object.entries(status.skipped ?? {}).filter(([, n]) => n > 0);
  if (skipped.length > 0) parts.push(`skipped ${skipped.map(([why, n]) => `${n} ${why}`).join(", ")}`);
  return parts.join(", ");
}

export function formatAge(seconds: number): string {
  if (seconds < 60) return "just now";
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  if (seconds < 86400) return `${Math.floor(seconds / 3600)} h ago`;
  return `${Math.floor(seconds / 86400)} d ago`;
}
