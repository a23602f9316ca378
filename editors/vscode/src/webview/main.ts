/**
 * The answer webview's only script (loaded with the CSP nonce). It inserts the HTML the host
 * rendered (already escaped by the safe markdown renderer), and turns clicks on citation and
 * file links into messages: the page itself never navigates anywhere.
 */

interface VsCodeApi {
  postMessage(message: unknown): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

type ToWebview = { type: "render"; generation: number; phase: string; html: string } | { type: "testClick"; selector: string };

const vscode = acquireVsCodeApi();
const content = document.getElementById("content") as HTMLElement;
let renders = 0;
const UNSAFE = "script, img, iframe, object, embed, style, link, form, [onerror], [onload], [onclick], [href]:not([href='#'])";

window.addEventListener("message", (event: MessageEvent<ToWebview>) => {
  const message = event.data;
  if (message.type === "render") {
    const atBottom = window.innerHeight + window.scrollY >= document.body.scrollHeight - 40;
    content.innerHTML = message.html;
    content.dataset.phase = message.phase;
    if (message.phase === "streaming" && atBottom) window.scrollTo(0, document.body.scrollHeight);
    renders += 1;
    const articleText = content.querySelector("article")?.textContent ?? "";
    vscode.postMessage({
      type: "rendered",
      generation: message.generation,
      phase: message.phase,
      citationLinks: content.querySelectorAll("article a.cite").length,
      sources: content.querySelectorAll(".sources li").length,
      staleSources: content.querySelectorAll(".sources li.stale").length,
      textLength: articleText.length,
      text: articleText.slice(0, 4000),
      renders,
      // Safety self-check: what the rendered answer must never contain, and the page's policy.
      unsafeElements: content.querySelectorAll(UNSAFE).length,
      csp: document.querySelector('meta[http-equiv="Content-Security-Policy"]')?.getAttribute("content") ?? "",
    });
  } else if (CODEQA_TEST_BUILD && message.type === "testClick") {
    // Test builds only (scripts/build.mjs --test): the e2e clicks as a user would.
    const target = content.querySelector(message.selector);
    if (target instanceof HTMLElement) target.click();
  }
});

content.addEventListener("click", (event) => {
  const link = (event.target as Element).closest("a");
  if (!link) return;
  event.preventDefault();
  const citation = link.getAttribute("data-citation");
  if (citation) {
    vscode.postMessage({ type: "openCitation", number: Number(citation) });
    return;
  }
  const uri = link.getAttribute("data-uri");
  if (uri) vscode.postMessage({ type: "openUri", uri });
});

vscode.postMessage({ type: "ready" });
