/**
 * The docked chat's script: inserts the thread HTML the host rendered, sends questions from the
 * box (Enter sends, Shift+Enter is a new line), and turns clicks on `[n]`, sources and "Copy"
 * into messages; the page never navigates anywhere.
 */

interface VsCodeApi {
  postMessage(message: unknown): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

type ToChat = { type: "render"; html: string } | { type: "prefill"; text: string } | { type: "testClick"; selector: string };

const vscode = acquireVsCodeApi();
const content = document.getElementById("content") as HTMLElement;
const form = document.getElementById("ask") as HTMLFormElement;
const box = document.getElementById("question") as HTMLTextAreaElement;

function send(): void {
  const question = box.value.trim();
  if (!question) return;
  box.value = "";
  vscode.postMessage({ type: "ask", question });
}

form.addEventListener("submit", (event) => {
  event.preventDefault();
  send();
});
box.addEventListener("keydown", (event) => {
  if (event.key === "Enter" && !event.shiftKey) {
    event.preventDefault();
    send();
  }
});

window.addEventListener("message", (event: MessageEvent<ToChat>) => {
  const message = event.data;
  if (message.type === "render") {
    content.innerHTML = message.html;
    window.scrollTo(0, document.body.scrollHeight);
    const last = content.querySelector("section.turn:last-of-type article");
    vscode.postMessage({
      type: "rendered",
      turns: content.querySelectorAll("section.turn").length,
      text: (last?.textContent ?? "").slice(0, 4000),
      citationLinks: content.querySelectorAll("article a.cite").length,
    });
  } else if (message.type === "prefill") {
    box.value = message.text;
    box.focus();
    box.setSelectionRange(box.value.length, box.value.length);
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
  const turn = Number(link.closest("section.turn")?.getAttribute("data-turn") ?? "-1");
  const copy = link.getAttribute("data-copy");
  if (copy !== null) {
    vscode.postMessage({ type: "copy", turn: Number(copy) });
    return;
  }
  const citation = link.getAttribute("data-citation");
  if (citation && turn >= 0) vscode.postMessage({ type: "openCitation", turn, number: Number(citation) });
});

vscode.postMessage({ type: "ready" });
export {};
