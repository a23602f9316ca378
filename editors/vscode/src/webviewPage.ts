/**
 * The webviews' page for a real `vscode.Webview`: a fresh nonce, the script from `dist/` and the
 * shared stylesheet, through the one shell (webviewShell.ts) so both pages keep the same policy.
 */

import * as crypto from "node:crypto";
import * as vscode from "vscode";
import { webviewShell, type ShellParts } from "./webviewShell";

/** Where the pages may load files from: the stylesheet (media/) and the scripts (dist/). */
export function webviewRoots(extensionUri: vscode.Uri): vscode.Uri[] {
  return [vscode.Uri.joinPath(extensionUri, "media"), vscode.Uri.joinPath(extensionUri, "dist")];
}

export function webviewPage(
  webview: vscode.Webview,
  extensionUri: vscode.Uri,
  page: { readonly script: string } & Pick<ShellParts, "title" | "allowImages" | "bodyClass" | "afterMain">,
): string {
  return webviewShell({
    ...page,
    cspSource: webview.cspSource,
    nonce: crypto.randomBytes(16).toString("base64"),
    scriptUri: webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, "dist", page.script)).toString(),
    styleUri: webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, "media", "answer.css")).toString(),
  });
}
