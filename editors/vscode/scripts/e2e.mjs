// End-to-end test in real VS Code: code-server 4.100.3 opened by headless Chromium.
//
// Installs the e2e test build of the extension (out/codeqa-e2e.vsix from scripts/package_e2e.mjs:
// the real extension plus e2e/src/) into a throw-away code-server profile, opens a copy of the
// fixture workspace (settings: hash embedder, our server), and lets the scenario
// (CODEQA_E2E_OUT, e2e/src/scenario.ts) drive Search, Explain, the code lens, Ask, citation
// clicks, a streamed model answer, the docked chat, `@codeqa`'s handler and a real window reload.
// This script only polls the scenario's JSON, takes screenshots of the answer panel and the chat
// over the Chrome DevTools protocol, asserts on what the scenario saw, and cleans up.
//
// Usage: node --experimental-websocket scripts/e2e.mjs --code-server BIN --chromium BIN
//          --vsix FILE --server BIN [--screenshot PNG (default out/answer-panel.png)] [--keep]
// Prints one "PASS name" / "FAIL name: why" line per check and a last line
// "E2E_RESULT passed=N failed=M". Exit status 0 only when every check passed.

import { spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as http from "node:http";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const extensionRoot = path.resolve(here, "..");
const OVERALL_TIMEOUT_MS = 450_000;

const args = parseArgs(process.argv.slice(2));
const started = Date.now();
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "codeqa-e2e-"));
const children = [];
const checks = [];
const fakes = [];

function parseArgs(argv) {
  const out = { screenshot: path.join(extensionRoot, "out", "answer-panel.png"), keep: false };
  for (let i = 0; i < argv.length; i++) {
    const key = argv[i].replace(/^--/, "");
    if (key === "keep") out.keep = true;
    else out[key.replace(/-(\w)/g, (_, c) => c.toUpperCase())] = argv[++i];
  }
  for (const required of ["codeServer", "chromium", "vsix", "server"]) {
    if (!out[required]) throw new Error(`missing --${required}`);
  }
  return out;
}

function log(message) {
  console.log(`[e2e +${((Date.now() - started) / 1000).toFixed(1)}s] ${message}`);
}

function check(name, ok, detail = "") {
  checks.push({ name, ok: Boolean(ok) });
  console.log(ok ? `PASS ${name}` : `FAIL ${name}${detail ? `: ${detail}` : ""}`);
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Starts `command` in its own process group (so cleanup kills its whole tree). */
function startGroup(name, command, argv, env) {
  const logFile = fs.openSync(path.join(tmp, `${name}.log`), "a");
  const child = spawn(command, argv, { env, detached: true, stdio: ["ignore", logFile, logFile] });
  children.push({ name, child });
  return child;
}

function killGroups() {
  for (const { child } of children) {
    for (const signal of ["SIGTERM", "SIGKILL"]) {
      try {
        process.kill(-child.pid, signal);
      } catch {
        // already gone
      }
    }
  }
}

async function waitFor(what, condition, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      const value = await condition();
      if (value) return value;
    } catch {
      // not ready yet
    }
    await sleep(300);
  }
  throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`);
}

/** Captures a PNG of the page over the DevTools protocol (Node 20: --experimental-websocket). */
async function screenshot(debugPort, file) {
  // The DevTools HTTP endpoint sometimes answers "Not found." for a moment: retry briefly.
  const page = await waitFor(
    "a page target in Chromium's DevTools",
    async () => ((await (await fetch(`http://127.0.0.1:${debugPort}/json/list`)).json()) ?? []).find((t) => t.type === "page"),
    15_000,
  );
  const socket = new WebSocket(page.webSocketDebuggerUrl);
  await new Promise((resolve, reject) => {
    socket.onopen = resolve;
    socket.onerror = () => reject(new Error("DevTools websocket failed"));
  });
  const data = await new Promise((resolve, reject) => {
    socket.onmessage = (event) => {
      const message = JSON.parse(event.data);
      if (message.id !== 1) return;
      if (message.error) reject(new Error(message.error.message));
      else resolve(message.result.data);
    };
    socket.send(JSON.stringify({ id: 1, method: "Page.captureScreenshot", params: { format: "png" } }));
  });
  socket.close();
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, Buffer.from(data, "base64"));
}

function findFiles(dir, pattern) {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { recursive: true }).map((f) => path.join(dir, String(f))).filter((f) => pattern.test(f));
}

/**
 * A loopback OpenAI-compatible server (Chat Completions, streamed as SSE) standing in for a
 * model: it answers from the numbered excerpts in the prompt, citing the excerpt numbers it
 * finds for apply_discount and DISCOUNT_CODES, in small pieces so the panel streams.
 */
function startFakeModel(apiKey) {
  const requests = [];
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", async () => {
      let payload = {};
      try {
        payload = JSON.parse(body);
      } catch {
        // recorded as is below
      }
      const user = (payload.messages ?? []).filter((m) => m.role === "user").map((m) => String(m.content)).join("\n");
      requests.push({ path: req.url, authorization: req.headers.authorization, model: payload.model, stream: payload.stream, user: user.slice(0, 4000) });
      if (req.url !== "/v1/chat/completions" || req.headers.authorization !== `Bearer ${apiKey}`) {
        res.writeHead(401, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { message: "bad key or path", type: "invalid_request_error" } }));
        return;
      }
      const excerpt = (pattern) => (new RegExp(`^\\[(\\d+)\\] [^\\n]*${pattern}`, "m").exec(user) ?? [])[1];
      const a = excerpt("`apply_discount`") ?? "1";
      const b = excerpt("DISCOUNT_CODES") ?? excerpt("shop/cart.py:1-") ?? a;
      const answer =
        `Discount codes are applied by \`apply_discount\` [${a}]: it normalises the code with ` +
        `\`code.strip().upper()\`, looks its rate up in \`DISCOUNT_CODES\` [${b}] and returns the ` +
        `total reduced by that rate, rounded to whole cents [${a}].\n\n` +
        `- **Unknown codes** leave the total unchanged [${a}].\n` +
        `- \`WELCOME10\` takes 10% off and \`VIP25\` takes 25% [${b}].\n\n` +
        "```python\napply_discount(10_000, \"vip25\")  # 7500\n```\n";
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      const send = (delta, finish = null) =>
        res.write(`data: ${JSON.stringify({ id: "chatcmpl-e2e", object: "chat.completion.chunk", created: 0, model: payload.model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`);
      send({ role: "assistant", content: "" });
      for (const piece of answer.match(/[^ ]+ ?/g)) {
        send({ content: piece });
        await sleep(15);
      }
      send({}, "stop");
      res.write(`data: ${JSON.stringify({ id: "chatcmpl-e2e", object: "chat.completion.chunk", created: 0, model: payload.model, choices: [], usage: { prompt_tokens: 100, completion_tokens: 80, total_tokens: 180 } })}\n\n`);
      res.end("data: [DONE]\n\n");
    });
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve({ server, requests, port: server.address().port })));
}

/** A "server" that fails the way `python3 -m codeqa_lsp` does without the package. */
function writeCrashingServer() {
  const file = path.join(tmp, "crashing-server");
  fs.writeFileSync(file, "#!/bin/sh\necho \"/usr/bin/python3: No module named codeqa_lsp\" >&2\nexit 1\n", { mode: 0o755 });
  return file;
}

function readReport(file) {
  try {
    return JSON.parse(fs.readFileSync(file, "utf8"));
  } catch {
    return undefined;
  }
}

function prepareWorkspace() {
  const workspace = path.join(tmp, "workspace");
  fs.cpSync(path.join(extensionRoot, "e2e", "fixture"), workspace, { recursive: true });
  fs.mkdirSync(path.join(workspace, ".vscode"), { recursive: true });
  fs.writeFileSync(
    path.join(workspace, ".vscode", "settings.json"),
    JSON.stringify({ "codeqa.embedder": "hash", "codeqa.server.path": args.server }, null, 2),
  );
  const user = path.join(tmp, "user-data", "User");
  fs.mkdirSync(user, { recursive: true });
  fs.writeFileSync(
    path.join(user, "settings.json"),
    JSON.stringify(
      {
        "workbench.startupEditor": "none",
        "workbench.tips.enabled": false,
        "workbench.welcomePage.walkthroughs.openOnInstall": false,
        "security.workspace.trust.enabled": false,
        "extensions.autoUpdate": false,
        "extensions.autoCheckUpdates": false,
        "telemetry.telemetryLevel": "off",
        "update.mode": "none",
        "editor.minimap.enabled": false,
        "window.commandCenter": false,
        "chat.commandCenter.enabled": false,
        "workbench.secondarySideBar.defaultVisibility": "hidden",
      },
      null,
      2,
    ),
  );
  return workspace;
}

/** The assertions: what a user would have seen, checked against the fixture's known code. */
function assertReport(report, workspace, model) {
  const errors = report.errors ?? [];
  check("hook finished without errors", report.phase === "done" && errors.length === 0, errors.join(" | ").slice(0, 2000));

  const warnings = (report.serverMessages ?? []).filter((m) => m.type <= 2);
  check("the server reported no errors or warnings (settings were valid)", warnings.length === 0, JSON.stringify(warnings));

  const server = report.server ?? {};
  check("server started (initialize answered)", server.running === true && Boolean(server.serverInfo?.name), JSON.stringify(server));

  const indexing = report.indexing ?? {};
  const status = indexing.status ?? {};
  const kinds = (indexing.progress ?? []).map((p) => p.kind);
  check("indexing progress begin → end seen via $/progress", kinds[0] === "begin" && kinds.includes("end"), JSON.stringify(kinds));
  const messages = (indexing.progress ?? []).map((p) => p.message ?? "");
  check(
    "the status bar's progress named each phase with counts (chunking files, embedding chunks)",
    messages.some((m) => /^chunking files \d+\/\d+/.test(m)) && messages.some((m) => /^embedding chunks \d+\/\d+/.test(m)),
    JSON.stringify(messages),
  );
  check("indexing finished with chunks from all 4 fixture files", status.indexing === false && status.files === 4 && status.chunks >= 8, JSON.stringify(status));
  check("settings reached the server (embedder hash)", status.embedder === "hash", `embedder=${status.embedder}`);
  check("status bar shows the chunk count", new RegExp(`CodeQA: ${status.chunks} chunks`).test(indexing.statusBarText ?? ""), indexing.statusBarText);

  const search = report.search ?? {};
  const top = search.hits?.[0];
  check("search returned results, best first", (search.hits ?? []).length > 0 && search.hits.every((h, i, a) => i === 0 || a[i - 1].score >= h.score), JSON.stringify(search.hits?.map((h) => [h.symbol, h.score])));
  check("search ranks slugify first", top?.symbol === "slugify" && top?.path === "util/slug.js", JSON.stringify(top));
  check(
    "accepting the QuickPick opens the hit with its range selected",
    search.opened?.symbol === top?.symbol &&
      search.editor?.path === top?.path &&
      search.editor?.selection.start.line === top?.range.start.line &&
      search.editor?.selection.end.line === top?.range.end.line - 1,
    JSON.stringify({ opened: search.opened?.range, editor: search.editor?.selection }),
  );

  const explain = report.explain ?? {};
  const explainCites = explain.result?.citations ?? [];
  check("explain answered about charge_card", /charge_card/.test(explain.result?.answer ?? "") && explainCites.some((c) => c.symbol === "charge_card"), JSON.stringify(explain.result)?.slice(0, 600));
  check("explain rendered in the answer panel", explain.rendered?.phase === "done" && explain.rendered.textLength > 0 && explain.rendered.sources === explainCites.length, JSON.stringify(explain.rendered));

  const lens = report.codeLens ?? {};
  check("code lenses offer Explain (codeqa.showAnswer)", lens.lenses >= 1 && /Explain/.test(lens.title ?? ""), JSON.stringify({ lenses: lens.lenses, title: lens.title }));
  check(
    "code lens answer (codeqa.showAnswer → codeqa/answer) rendered in the same panel, about charge_card",
    lens.rendered?.phase === "done" && lens.rendered.sources > 0 && (lens.answer?.citations ?? []).some((c) => c.symbol === "charge_card"),
    JSON.stringify({ rendered: lens.rendered, panelTitle: lens.panelTitle, citations: lens.answer?.citations?.map((c) => c.symbol) }),
  );

  const injection = report.injection ?? {};
  const shown = injection.rendered?.text ?? "";
  check(
    "markup quoted from the code is shown as text in the panel, never run",
    (injection.result?.citations ?? []).some((c) => c.symbol === "notFoundPage") &&
      shown.includes("<h1>Not found</h1><script>reportMissing()</script><img src=x onerror=alert(1)>") &&
      injection.rendered?.unsafeElements === 0,
    JSON.stringify({ cites: injection.result?.citations?.map((c) => c.symbol), unsafe: injection.rendered?.unsafeElements, text: shown.slice(0, 300) }),
  );
  const renders = ["explain", "codeLens", "injection", "askSelection", "ask", "llm"].map((name) => report[name]?.rendered).filter(Boolean);
  check(
    "every render ran under the strict CSP with no script, image or handler from the answer",
    renders.length === 6 &&
      renders.every((r) => r.unsafeElements === 0 && /default-src 'none'/.test(r.csp) && /script-src 'nonce-[^']+'(;|$)/.test(r.csp) && !/unsafe-inline|unsafe-eval/.test(r.csp)),
    JSON.stringify(renders.map((r) => [r.unsafeElements, r.csp])),
  );

  const selection = report.askSelection ?? {};
  check(
    "Ask about the selection prefills the question box with the selection's location",
    selection.prompt?.value === "About shop/cart.py:31-39: " && selection.prompt.items?.[0] === "About shop/cart.py:31-39:",
    JSON.stringify(selection.prompt),
  );
  check(
    "accepting the prefilled question answers it in the panel",
    selection.panelTitle === "About shop/cart.py:31-39:" && selection.rendered?.phase === "done" && (selection.result?.citations ?? []).some((c) => c.path === "shop/cart.py"),
    JSON.stringify({ title: selection.panelTitle, rendered: selection.rendered, cites: selection.result?.citations?.map((c) => c.path) }),
  );

  const ask = report.ask ?? {};
  const askCites = ask.result?.citations ?? [];
  check("ask answered with citations", (ask.result?.answer ?? "").length > 0 && askCites.length > 0 && !ask.result.error, JSON.stringify(ask.result)?.slice(0, 600));
  check("ask cites apply_discount in shop/cart.py", askCites.some((c) => c.symbol === "apply_discount" && c.path === "shop/cart.py"), JSON.stringify(askCites.map((c) => [c.symbol, c.path])));
  check("answer streamed into the panel (codeqa/answerDelta)", ask.deltas >= 1, `deltas=${ask.deltas}`);
  check(
    "panel rendered the final answer, citation links and the Sources list",
    ask.rendered?.phase === "done" && ask.rendered.sources === askCites.length && ask.rendered.citationLinks >= 1 && ask.panelVisible === true,
    JSON.stringify(ask.rendered),
  );

  const click = report.citationClick ?? {};
  const cited = click.citation;
  const cwd = cited ? path.relative(workspace, fileURLToPath(cited.uri)).split(path.sep).join("/") : undefined;
  check(
    "clicking a citation in the webview opens the file with the cited lines selected",
    Boolean(cited) &&
      click.editor?.path === cwd &&
      click.editor.selection.start.line === cited.startLine - 1 &&
      click.editor.selection.start.character === 0 &&
      click.editor.selection.end.line === cited.endLine - 1 &&
      (click.editor.visibleRanges ?? []).some(([a, b]) => a <= cited.startLine - 1 && cited.startLine - 1 <= b),
    JSON.stringify({ citation: cited && [cited.path, cited.startLine, cited.endLine], editor: click.editor && [click.editor.path, click.editor.selection] }),
  );
  const firstCitedLine = cited ? fs.readFileSync(fileURLToPath(cited.uri), "utf8").split("\n")[cited.startLine - 1] : undefined;
  check("the selection holds the cited code", Boolean(firstCitedLine) && (click.editor?.selectedText ?? "").startsWith(firstCitedLine), JSON.stringify((click.editor?.selectedText ?? "").slice(0, 80)));

  const reindex = report.reindex ?? {};
  check(
    "Reindex workspace runs a new indexing pass; Show index status returns the index",
    (reindex.progress ?? []).at(-1)?.kind === "end" && reindex.status?.chunks === status.chunks && reindex.status?.files === 4 && /CodeQA: \d+ chunks/.test(reindex.statusBarText ?? ""),
    JSON.stringify(reindex),
  );

  const llm = report.llm ?? {};
  const chat = model.requests.filter((r) => r.path === "/v1/chat/completions");
  check(
    "the API key from SecretStorage reached the model (server restarted with apiKey)",
    llm.restarts >= 1 && chat.length >= 1 && chat.every((r) => r.authorization === `Bearer ${model.apiKey}` && r.stream === true && r.model === "fake-e2e-model"),
    JSON.stringify({ restarts: llm.restarts, requests: model.requests.map((r) => [r.path, r.authorization === `Bearer ${model.apiKey}`, r.model, r.stream]) }),
  );
  check("the prompt carried the retrieved code", chat.some((r) => /`apply_discount`/.test(r.user)), chat[0]?.user?.slice(0, 300));

  const docked = report.chat ?? {};
  const followCites = docked.followUp?.citations ?? [];
  check(
    "docked chat: a question and a follow-up in one thread, both rendered",
    docked.threadIds?.[0] && docked.threadIds[0] === docked.threadIds[1] && docked.rendered?.turns === 2 && !docked.followUp?.error,
    JSON.stringify({ threadIds: docked.threadIds, rendered: docked.rendered }),
  );
  check(
    "docked chat: the follow-up was retrieved and prompted with the first turn's subject",
    followCites.some((c) => c.symbol === "apply_discount") &&
      chat.some((r) => /Earlier in this conversation/.test(r.user) && /How are discount codes applied\?/.test(r.user) && /and where is it called from\?/.test(r.user)),
    JSON.stringify(followCites.map((c) => c.symbol)),
  );
  const firstFollow = followCites[0];
  const followLines = firstFollow ? fs.readFileSync(path.join(workspace, firstFollow.path), "utf8").split("\n").slice(firstFollow.startLine - 1, firstFollow.endLine) : [];
  check(
    "docked chat: clicking a source opens it beside the chat with the cited lines selected",
    docked.opened?.chatVisible === true && docked.opened?.editor?.path === firstFollow?.path &&
      followLines.length > 0 && (docked.opened?.editor?.selectedText ?? "").startsWith(followLines[0]),
    JSON.stringify({ editor: docked.opened?.editor && { ...docked.opened.editor, selectedText: docked.opened.editor.selectedText?.slice(0, 60) }, visible: docked.opened?.chatVisible }),
  );
  const reload = report.afterReload ?? {};
  const before = docked.questions ?? [];
  const pids = report.extensionHostPids ?? [];
  check(
    "docked chat: after a real window reload the chat shows the earlier thread, read from the server's history",
    pids.length === 2 && pids[0] !== pids[1] && reload.activatedAfterReload === true && reload.sameThread === true && reload.chatVisible === true &&
      before.length === 2 && JSON.stringify(reload.questions) === JSON.stringify(before) &&
      reload.citations?.every((n) => n > 0) && reload.rendered?.turns === 2 && (reload.rendered?.text ?? "").length > 0,
    JSON.stringify({ extensionHostPids: pids, before, reload }),
  );

  const participant = report.participant ?? {};
  const pFirst = participant.first ?? {};
  const pFollow = participant.followUp ?? {};
  const citedPaths = (refs) => (refs ?? []).filter((r) => r.isLocation).map((r) => r.path);
  check(
    "@codeqa handler: the model's answer streamed into the response in pieces, with the cited code as references",
    pFirst.markdown?.length >= 10 && (pFirst.text ?? "").includes("Unknown codes") && /\[\d+\]/.test(pFirst.text ?? "") &&
      citedPaths(pFirst.references).includes("shop/cart.py") &&
      (pFirst.references ?? []).every((r) => r.isLocation && r.endLine > r.startLine) && typeof pFirst.metadata?.threadId === "string",
    JSON.stringify({ pieces: pFirst.markdown?.length, text: pFirst.text?.slice(0, 200), references: pFirst.references, metadata: pFirst.metadata, registered: participant.registered }),
  );
  check(
    "@codeqa handler: a follow-up in the same chat session continues the thread with the earlier subject",
    pFollow.metadata?.threadId === pFirst.metadata?.threadId && (pFollow.references ?? []).length > 0 &&
      model.requests.some((r) => /Earlier in this conversation/.test(r.user) && /What does apply_discount do with a discount code\?/.test(r.user) && /and where is it called from\?/.test(r.user)),
    JSON.stringify({ first: pFirst.metadata, followUp: pFollow.metadata, references: pFollow.references }),
  );
  const saved = ["workspace/.vscode/settings.json", "user-data/User/settings.json"]
    .map((f) => path.join(path.dirname(workspace), f))
    .filter((f) => fs.existsSync(f))
    .map((f) => fs.readFileSync(f, "utf8"));
  check("the API key is not in any settings.json", saved.length === 2 && saved.every((text) => !text.includes(model.apiKey)), `${saved.length} files`);
  check(
    "a model answer streamed into the panel in many deltas, then rendered with its citations",
    llm.result?.provider === "openai" && llm.model === "fake-e2e-model" && llm.deltas >= 10 && llm.streamingRenders >= 2 &&
      llm.rendered?.phase === "done" && llm.rendered.citationLinks >= 4 && (llm.rendered.text ?? "").includes("Unknown codes leave the total unchanged") &&
      (llm.result?.citations ?? []).some((c) => c.symbol === "apply_discount"),
    JSON.stringify({ provider: llm.result?.provider, model: llm.model, deltas: llm.deltas, streamingRenders: llm.streamingRenders, rendered: llm.rendered && { ...llm.rendered, text: undefined, csp: undefined }, error: llm.result?.error }),
  );
  const llmClick = report.llmCitationClick ?? {};
  check(
    "clicking the model answer's citation selects the cited lines",
    Boolean(llmClick.citation) && llmClick.editor?.selection.start.line === llmClick.citation.startLine - 1 && llmClick.editor?.selection.end.line === llmClick.citation.endLine - 1,
    JSON.stringify({ citation: llmClick.citation && [llmClick.citation.path, llmClick.citation.startLine, llmClick.citation.endLine], editor: llmClick.editor?.selection }),
  );

  const failure = report.cannotStart ?? {};
  const missing = failure.missing ?? {};
  const missingNote = (missing.notifications ?? []).find((n) => n.kind === "cannot-start");
  check(
    "a codeqa.server.path that does not exist gives one clear cannot-start notification",
    (missing.notifications ?? []).length === 1 && Boolean(missingNote) && missingNote.message.includes("`/nonexistent/codeqa-e2e/codeqa-lsp` was not found") &&
      missing.running === false && missing.statusBarPhase === "failed",
    JSON.stringify(missing),
  );
  const crashing = failure.crashing ?? {};
  check(
    "a server that dies while starting gives one notification and no restart loop",
    (crashing.notifications ?? []).length === 1 &&
      (crashing.notifications?.[0]?.message ?? "").includes("it exited while starting: /usr/bin/python3: No module named codeqa_lsp") &&
      crashing.running === false && crashing.statusBarPhase === "failed" && crashing.starts === 1,
    JSON.stringify(crashing),
  );
}

async function main() {
  const workspace = prepareWorkspace();
  const out = path.join(tmp, "e2e-report.json");
  const xdg = {
    XDG_CONFIG_HOME: path.join(tmp, "xdg-config"),
    XDG_DATA_HOME: path.join(tmp, "xdg-data"),
    XDG_CACHE_HOME: path.join(tmp, "xdg-cache"),
    XDG_STATE_HOME: path.join(tmp, "xdg-state"),
  };
  const env = { ...process.env, ...xdg, HOME: process.env.HOME ?? tmp };
  const userData = path.join(tmp, "user-data");
  const extensions = path.join(tmp, "extensions");

  log(`installing ${path.basename(args.vsix)} into code-server`);
  const install = spawnSync(args.codeServer, ["--user-data-dir", userData, "--extensions-dir", extensions, "--install-extension", args.vsix], {
    env,
    encoding: "utf8",
    timeout: 120_000,
  });
  check("the .vsix installs into code-server", install.status === 0 && /successfully installed/i.test(install.stdout + install.stderr), (install.stdout + install.stderr).slice(-800));
  if (install.status !== 0) return;

  const port = await freePort();
  const debugPort = await freePort();
  const apiKey = `sk-e2e-${Math.random().toString(36).slice(2)}-not-a-real-key`;
  const fakeModel = await startFakeModel(apiKey);
  fakes.push(fakeModel.server);
  const scenario = {
    search: "convert a title into a url slug",
    ask: "How is a discount code applied to the cart total?",
    explain: { path: "shop/payments.py", line: 15, character: 8 },
    selection: { path: "shop/cart.py", startLine: 30, endLine: 38 },
    injection: "What HTML does the not found page render?",
    participant: "What does apply_discount do with a discount code?",
    crashingServer: writeCrashingServer(),
    llm: { baseUrl: `http://127.0.0.1:${fakeModel.port}/v1`, apiKey, model: "fake-e2e-model", question: "How are discount codes applied?" },
  };
  startGroup(
    "code-server",
    args.codeServer,
    ["--user-data-dir", userData, "--extensions-dir", extensions, "--auth", "none", "--bind-addr", `127.0.0.1:${port}`, "--disable-telemetry", "--disable-update-check", "--disable-workspace-trust", workspace],
    { ...env, CODEQA_E2E_OUT: out, CODEQA_E2E_SCENARIO: JSON.stringify(scenario) },
  );
  await waitFor("code-server /healthz", async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).ok, 60_000);
  log(`code-server listening on ${port}`);
  startGroup(
    "chromium",
    args.chromium,
    ["--no-sandbox", "--disable-gpu", "--headless", `--remote-debugging-port=${debugPort}`, "--window-size=1600,1000", `--user-data-dir=${path.join(tmp, "chromium")}`, `http://127.0.0.1:${port}/?folder=${encodeURIComponent(workspace)}`],
    env,
  );

  let report = await waitFor("the extension to activate (hook report)", () => readReport(out), 90_000);
  log("extension activated; scenario running");
  report = await waitFor("the answer panel (hook phase 'screenshot')", () => {
    const r = readReport(out);
    return r && (r.phase === "screenshot" || r.phase === "done") ? r : undefined;
  }, 150_000);
  if (report.phase === "screenshot") {
    await sleep(1500); // let the webview paint the final render
    try {
      await screenshot(debugPort, args.screenshot);
      log(`screenshot saved to ${args.screenshot}`);
      check("screenshot of the answer panel taken", fs.statSync(args.screenshot).size > 10_000);
    } catch (error) {
      check("screenshot of the answer panel taken", false, String(error));
    }
    fs.writeFileSync(out + ".screenshot-done", "");
  }
  report = await waitFor("the chat (hook phase 'chatScreenshot')", () => {
    const r = readReport(out);
    return r && (r.phase === "chatScreenshot" || r.phase === "done") ? r : undefined;
  }, 150_000);
  if (report.phase === "chatScreenshot") {
    await sleep(1500);
    const chatShot = path.join(path.dirname(args.screenshot), "chat-view.png");
    try {
      await screenshot(debugPort, chatShot);
      log(`chat screenshot saved to ${chatShot}`);
      check("screenshot of the chat view taken", fs.statSync(chatShot).size > 10_000);
    } catch (error) {
      check("screenshot of the chat view taken", false, String(error));
    }
    fs.writeFileSync(out + ".chat-screenshot-done", "");
  }
  // The scenario reloads the window now: a new extension host resumes it from the report.
  report = await waitFor("the scenario to reload the window, resume and finish", () => {
    const r = readReport(out);
    return r?.phase === "done" ? r : undefined;
  }, 150_000);
  fs.copyFileSync(out, path.join(extensionRoot, "out", "e2e-report.json"));
  log(`hook finished; timings ${JSON.stringify(report.timings)}`);
  assertReport(report, workspace, { apiKey, requests: fakeModel.requests, userData });
}

const watchdog = setTimeout(() => {
  check("e2e finished in time", false, `no result after ${OVERALL_TIMEOUT_MS / 1000} s`);
  finish(1);
}, OVERALL_TIMEOUT_MS);

function finish(code) {
  clearTimeout(watchdog);
  for (const server of fakes) server.close();
  killGroups();
  const failed = checks.filter((c) => !c.ok).length;
  const passed = checks.length - failed;
  if (failed > 0 || code !== 0) {
    for (const name of ["code-server", "chromium"]) {
      const file = path.join(tmp, `${name}.log`);
      if (fs.existsSync(file)) console.log(`--- last lines of ${name}.log ---\n${fs.readFileSync(file, "utf8").split("\n").slice(-25).join("\n")}`);
    }
    // The extension's output channel (server stderr and client log), as code-server saved it.
    for (const file of findFiles(path.join(tmp, "user-data", "logs"), /CodeQA\.log$/)) {
      console.log(`--- last lines of ${path.basename(file)} ---\n${fs.readFileSync(file, "utf8").split("\n").slice(-40).join("\n")}`);
    }
  }
  if (!args.keep) fs.rmSync(tmp, { recursive: true, force: true });
  else console.log(`kept ${tmp}`);
  console.log(`E2E_RESULT passed=${passed} failed=${failed}`);
  process.exit(failed > 0 || code !== 0 ? 1 : 0);
}

fs.mkdirSync(path.join(extensionRoot, "out"), { recursive: true });
main().then(
  () => finish(0),
  (error) => {
    check("e2e harness", false, error instanceof Error ? error.message : String(error));
    finish(1);
  },
);
