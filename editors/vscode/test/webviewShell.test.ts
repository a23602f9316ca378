import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { shellCsp, webviewShell } from "../src/webviewShell";

const source = "https://file+.vscode-resource.vscode-cdn.net";
const base = { cspSource: source, nonce: "bm9uY2Uxbm9uY2Uybm9uYw==", scriptUri: `${source}/dist/x.js`, styleUri: `${source}/media/answer.css`, title: "CodeQA" };

describe("webview shell", () => {
  it("gives the answer panel exactly its policy: nothing by default, extension styles, fonts, images, one nonce'd script", () => {
    assert.equal(
      shellCsp({ ...base, allowImages: true }),
      `default-src 'none'; style-src ${source}; font-src ${source}; img-src ${source}; script-src 'nonce-${base.nonce}'`,
    );
  });

  it("gives the chat no images", () => {
    assert.equal(shellCsp({ ...base, allowImages: false }), `default-src 'none'; style-src ${source}; font-src ${source}; script-src 'nonce-${base.nonce}'`);
  });

  it("puts the policy in the page, loads one script with the nonce and no inline script or style", () => {
    const html = webviewShell({ ...base, allowImages: false, bodyClass: "chat", afterMain: '<form id="ask"></form>' });
    assert.ok(html.includes(`<meta http-equiv="Content-Security-Policy" content="${shellCsp({ ...base, allowImages: false })}">`));
    assert.deepEqual(html.match(/<script[^>]*>/g), [`<script nonce="${base.nonce}" src="${base.scriptUri}">`]);
    assert.match(html, /<\/script>\n<\/body>/);
    assert.doesNotMatch(html, /<style|\sstyle=|\son\w+=/);
    assert.match(html, /<body class="chat">\n<main id="content" aria-live="polite"><\/main>\n<form id="ask"><\/form>\n<script/);
    assert.match(webviewShell({ ...base, allowImages: true }), /<body>\n<main id="content" aria-live="polite"><\/main>\n<script/);
  });
});
