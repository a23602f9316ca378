/**
 * The output channel the language client writes to, remembering the end of the server's stderr
 * so a "cannot start" notification can say *why* the server died ("No module named
 * codeqa_lsp") instead of "connection got disposed". vscode-languageclient forwards the
 * server's stderr with `append` (in arbitrary chunks) and writes its own log with `appendLine`,
 * so only `append` is recorded.
 */

import type * as vscode from "vscode";

export interface RecordingChannel {
  readonly channel: vscode.OutputChannel;
  /** The last non-blank lines of the server's stderr, oldest first. */
  recent(): string[];
}

const KEEP_CHARS = 4096;

export function recordingChannel(inner: vscode.OutputChannel): RecordingChannel {
  let tail = "";
  const channel = new Proxy(inner, {
    get(target, property, receiver) {
      if (property === "append") {
        return (value: string) => {
          tail = (tail + value).slice(-KEEP_CHARS);
          target.append(value);
        };
      }
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { channel, recent: () => tail.split(/\r?\n/).filter((line) => line.trim()) };
}
