/**
 * The output channel the language client writes to (its own log lines and the server's stderr),
 * remembering the last lines so a "cannot start" notification can say *why* the server died
 * (e.g. "No module named codeqa_lsp") instead of "connection got disposed".
 */

import type * as vscode from "vscode";

export interface RecordingChannel {
  readonly channel: vscode.OutputChannel;
  /** The most recent non-blank lines, oldest first. */
  recent(): string[];
}

export function recordingChannel(inner: vscode.OutputChannel, keep = 40): RecordingChannel {
  const lines: string[] = [];
  const record = (text: string): void => {
    for (const line of text.split(/\r?\n/)) if (line.trim()) lines.push(line);
    if (lines.length > keep) lines.splice(0, lines.length - keep);
  };
  const channel = new Proxy(inner, {
    get(target, property, receiver) {
      if (property === "append" || property === "appendLine") {
        return (value: string) => {
          record(value);
          target[property](value);
        };
      }
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { channel, recent: () => [...lines] };
}
