/**
 * Error notifications with a "Show logs" action. Each one is also remembered (kind + text) so
 * the end-to-end test can assert that the user really was told, e.g. when the server cannot start.
 */

import * as vscode from "vscode";

export interface RecordedNotification {
  readonly kind: string;
  readonly message: string;
  readonly at: number;
}

export class Notifier {
  readonly shown: RecordedNotification[] = [];

  constructor(private readonly output: vscode.OutputChannel) {}

  /** Shows `message` with "Show logs" (and "Open settings" for start problems); never throws. */
  error(message: string, kind: string): void {
    this.shown.push({ kind, message, at: Date.now() });
    const actions = kind === "cannot-start" ? ["Show logs", "Open settings"] : ["Show logs"];
    void vscode.window.showErrorMessage(message, ...actions).then((choice) => {
      if (choice === "Show logs") this.output.show(true);
      if (choice === "Open settings") void vscode.commands.executeCommand("workbench.action.openSettings", "codeqa.server.path");
    });
  }
}
