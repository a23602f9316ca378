/**
 * The extension entry of the e2e test build only (scripts/build.mjs --test, packaged by
 * scripts/package_e2e.mjs): the real `activate`, plus the scenario when the harness set
 * `CODEQA_E2E_OUT`. The published bundle's entry is src/extension.ts, which knows nothing of it.
 */

import type * as vscode from "vscode";
import { activate as activateExtension, deactivate, type CodeQaApi } from "../../src/extension";
import { runE2e } from "./scenario";

export { deactivate };

export function activate(context: vscode.ExtensionContext): CodeQaApi {
  const api = activateExtension(context);
  const out = process.env.CODEQA_E2E_OUT;
  if (out) void runE2e(out, api, context.secrets);
  return api;
}
