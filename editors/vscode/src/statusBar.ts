/** The status bar item: server state, indexing progress, then "CodeQA: N chunks". */

import * as vscode from "vscode";
import type { IndexStatus } from "./protocol";
import type { ProgressValue } from "./server";
import { statusBarView, type StatusBarState } from "./statusView";

export interface ProgressRecord {
  readonly kind: string;
  readonly title?: string;
  readonly message?: string;
  readonly percentage?: number;
}

export class StatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private state: StatusBarState = { phase: "starting" };
  /** Every indexing progress value seen (the e2e test asserts begin → report → end). */
  readonly progressLog: ProgressRecord[] = [];
  private indexing = false;

  constructor(private readonly refreshStatus: () => Promise<IndexStatus | undefined>) {
    this.item = vscode.window.createStatusBarItem("codeqa.status", vscode.StatusBarAlignment.Left, 10);
    this.item.name = "CodeQA";
    this.item.command = "codeqa.showStatus";
    this.render();
    this.item.show();
  }

  get text(): string {
    return this.item.text;
  }

  get phase(): string {
    return this.state.phase;
  }

  serverState(phase: "starting" | "running" | "failed" | "stopped", detail?: string): void {
    if (phase === "running") {
      this.state = { phase: "ready" };
      void this.refresh();
    } else {
      this.state = { phase: phase === "failed" ? "failed" : phase, message: detail };
      this.item.command = phase === "failed" ? "codeqa.showLogs" : "codeqa.showStatus";
    }
    this.render();
  }

  progress(value: ProgressValue): void {
    if (value.kind === "begin") {
      if (!value.title.startsWith("Indexing")) return;
      this.indexing = true;
      this.progressLog.push({ kind: value.kind, title: value.title, message: value.message, percentage: value.percentage });
      this.state = { phase: "indexing", percentage: value.percentage ?? 0, message: value.message };
    } else if (this.indexing && value.kind === "report") {
      this.progressLog.push({ kind: value.kind, message: value.message, percentage: value.percentage });
      this.state = { phase: "indexing", percentage: value.percentage ?? this.state.percentage, message: value.message ?? this.state.message };
    } else if (this.indexing && value.kind === "end") {
      this.indexing = false;
      this.progressLog.push({ kind: value.kind, message: value.message });
      this.state = { ...this.state, phase: "ready" };
      void this.refresh();
    } else {
      return;
    }
    this.render();
  }

  /** Shows a fresh `codeqa.status` (after indexing, or when the user asked for it). */
  showStatus(status: IndexStatus): void {
    if (this.state.phase === "failed" || this.state.phase === "starting") return;
    this.state = status.indexing && this.indexing ? { ...this.state, status } : { phase: "ready", status };
    this.item.command = "codeqa.showStatus";
    this.render();
  }

  dispose(): void {
    this.item.dispose();
  }

  private async refresh(): Promise<void> {
    const status = await this.refreshStatus().catch(() => undefined);
    if (status) this.showStatus(status);
  }

  private render(): void {
    const view = statusBarView(this.state);
    this.item.text = view.text;
    this.item.tooltip = view.tooltip;
  }
}
