import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, it } from "node:test";
import {
  SERVER_SETTING_KEYS,
  cannotStartMessage,
  lastServerErrorLine,
  configurationItem,
  describeCommand,
  findOnPath,
  initializationOptions,
  requiresRestart,
  resolveServerCommand,
  toWireSettings,
} from "../src/settings";

const packageJson = JSON.parse(fs.readFileSync(path.join(__dirname, "..", "..", "package.json"), "utf8")) as {
  contributes: { configuration: { properties: Record<string, { default: unknown; description?: string; markdownDescription?: string }> } };
};
const contributed = packageJson.contributes.configuration.properties;
const trust = (JSON.parse(fs.readFileSync(path.join(__dirname, "..", "..", "package.json"), "utf8")) as {
  capabilities: { untrustedWorkspaces: { supported: boolean | string; restrictedConfigurations?: string[] } };
}).capabilities.untrustedWorkspaces;

describe("workspace trust", () => {
  it("takes every setting that decides what runs or where code goes from user settings only", () => {
    assert.equal(trust.supported, "limited");
    for (const key of ["server.path", "provider", "baseUrl", "embedder", "embeddingBaseUrl", "model", "embeddingModel", "allowRemote"]) {
      assert.ok(trust.restrictedConfigurations?.includes(`codeqa.${key}`), `codeqa.${key} is not restricted`);
      assert.ok(contributed[`codeqa.${key}`], `codeqa.${key} is not a contributed setting`);
    }
  });
});

describe("settings mapping", () => {
  it("contributes every server setting with a description, plus codeqa.server.path", () => {
    for (const key of [...SERVER_SETTING_KEYS, "server.path"]) {
      const property = contributed[`codeqa.${key}`];
      assert.ok(property, `codeqa.${key} is not contributed`);
      assert.ok(property.description || property.markdownDescription, `codeqa.${key} has no description`);
    }
  });

  it("mirrors the server's defaults (PROTOCOL.md)", () => {
    const defaults: Record<string, unknown> = { embedder: "auto", provider: "extractive", allowRemote: true, topK: 8, requestTimeout: 60, include: [], exclude: [], hoverExplanations: false, minScore: null, model: null, baseUrl: null };
    for (const [key, value] of Object.entries(defaults)) assert.deepEqual(contributed[`codeqa.${key}`].default, value, key);
  });

  it("sends the contributed defaults as wire settings, leaving out unset values", () => {
    const get = (key: string): unknown => contributed[`codeqa.${key}`]?.default;
    assert.deepEqual(toWireSettings(get), {
      embedder: "auto",
      provider: "extractive",
      allowRemote: true,
      requestTimeout: 60,
      topK: 8,
      include: [],
      exclude: [],
      hoverExplanations: false,
      logQuestions: false,
    });
  });

  it("passes user values through, trims strings, drops blanks and adds the API key", () => {
    const values: Record<string, unknown> = { embedder: "hash", model: "  claude-x  ", baseUrl: "   ", minScore: 0.25, exclude: ["dist/**"], server: { path: "/x" } };
    const wire = toWireSettings((key) => values[key], "sk-secret");
    assert.deepEqual(wire, { embedder: "hash", model: "claude-x", minScore: 0.25, exclude: ["dist/**"], apiKey: "sk-secret" });
    assert.ok(!("server" in wire), "server.path is a client setting, never sent");
  });

  it("marks our client in initializationOptions", () => {
    assert.deepEqual(initializationOptions({ topK: 3 }), { topK: 3, userSettings: {}, clientFeatures: { answerNotification: true } });
  });

  it("sends user-scope values and the key under userSettings, apart from the effective settings", () => {
    const effective = toWireSettings((key) => ({ baseUrl: "https://evil.example/v1", topK: 3 })[key]);
    const user = toWireSettings((key) => ({ baseUrl: "https://api.mine.example/v1" })[key], "sk-user");
    const options = initializationOptions(effective, user);
    assert.deepEqual(options.userSettings, { baseUrl: "https://api.mine.example/v1", apiKey: "sk-user" });
    assert.ok(!("apiKey" in effective), "the key never travels as a workspace-scoped setting");
    assert.equal(options.baseUrl, "https://evil.example/v1");
  });

  it("answers workspace/configuration for codeqa and codeqa.<key> only", () => {
    const wire = { topK: 3, embedder: "hash" };
    assert.deepEqual(configurationItem("codeqa", wire), wire);
    assert.equal(configurationItem("codeqa.topK", wire), 3);
    assert.equal(configurationItem("codeqa.model", wire), null);
    assert.equal(configurationItem("python", wire), undefined);
    assert.equal(configurationItem(undefined, wire), undefined);
  });

  it("restarts for the server path and the settings that decide where code and keys go", () => {
    assert.equal(requiresRestart((s) => s === "codeqa.server.path"), true);
    for (const key of ["provider", "baseUrl", "embedder", "embeddingBaseUrl", "store"]) assert.equal(requiresRestart((s) => s === `codeqa.${key}`), true, key);
    assert.equal(requiresRestart((s) => s === "codeqa.topK"), false);
  });
});

describe("server command", () => {
  const base = { configuredPath: "", homeDir: "/home/u", workspaceFolder: "/w" };

  it("uses the setting, expanding ~ and ${workspaceFolder}", () => {
    assert.deepEqual(resolveServerCommand({ ...base, configuredPath: "~/venv/bin/codeqa-lsp", onPath: "/usr/bin/codeqa-lsp" }), {
      command: "/home/u/venv/bin/codeqa-lsp",
      args: [],
      source: "setting",
    });
    assert.equal(resolveServerCommand({ ...base, configuredPath: "${workspaceFolder}/.venv/bin/codeqa-lsp" }).command, "/w/.venv/bin/codeqa-lsp");
  });

  it("runs a configured Python interpreter with -m codeqa_lsp", () => {
    assert.deepEqual(resolveServerCommand({ ...base, configuredPath: "/opt/py/bin/python3.11" }).args, ["-m", "codeqa_lsp"]);
  });

  it("prefers codeqa-lsp on PATH, then the Python extension's interpreter, then python3", () => {
    assert.equal(resolveServerCommand({ ...base, onPath: "/usr/bin/codeqa-lsp", pythonInterpreter: "/py" }).source, "path");
    assert.deepEqual(resolveServerCommand({ ...base, pythonInterpreter: "/env/bin/python" }), {
      command: "/env/bin/python",
      args: ["-m", "codeqa_lsp"],
      source: "python-extension",
    });
    assert.deepEqual(resolveServerCommand(base), { command: "python3", args: ["-m", "codeqa_lsp"], source: "python3" });
  });

  it("finds an executable on PATH", () => {
    const seen: string[] = [];
    const found = findOnPath("codeqa-lsp", "/a::/b/", ":", (candidate) => {
      seen.push(candidate);
      return candidate === "/b/codeqa-lsp";
    });
    assert.equal(found, "/b/codeqa-lsp");
    assert.deepEqual(seen, ["/a/codeqa-lsp", "/b/codeqa-lsp"]);
    assert.equal(findOnPath("codeqa-lsp", undefined, ":", () => true), undefined);
  });

  it("describes commands with quoting", () => {
    assert.equal(describeCommand({ command: "/my env/python", args: ["-m", "codeqa_lsp"], source: "setting" }), '"/my env/python" -m codeqa_lsp');
  });
});

describe("cannot-start message", () => {
  it("names the command, says it was not found and points at the setting", () => {
    const command = { command: "/nope/codeqa-lsp", args: [], source: "setting" as const };
    assert.equal(
      cannotStartMessage(command, "Launching server using command /nope/codeqa-lsp failed. Error: spawn /nope/codeqa-lsp ENOENT"),
      "CodeQA: cannot start the language server (/nope/codeqa-lsp): `/nope/codeqa-lsp` was not found. Check the `codeqa.server.path` setting.",
    );
  });
  it("quotes the server's last error line when it died during initialize", () => {
    const command = { command: "python3", args: ["-m", "codeqa_lsp"], source: "python3" as const };
    const output = ["[codeqa] starting python3 -m codeqa_lsp (from python3)", "/usr/bin/python3: No module named codeqa_lsp", "[Error - 10:00:00] Server process exited with code 1."];
    assert.equal(
      cannotStartMessage(command, "Pending response rejected since connection got disposed", output),
      "CodeQA: cannot start the language server (python3 -m codeqa_lsp): it exited while starting: /usr/bin/python3: No module named codeqa_lsp. Install the server (`pip install codeqa-lsp`) or set `codeqa.server.path`.",
    );
    assert.match(cannotStartMessage(command, "Pending response rejected since connection got disposed"), /: it exited while starting\. Install/);
    // Died before the client could even write `initialize`.
    assert.match(cannotStartMessage(command, "write EPIPE", output), /it exited while starting: \/usr\/bin\/python3: No module named codeqa_lsp\./);
  });
  it("picks the server's own last line, skipping client log lines and clipping long ones", () => {
    assert.equal(lastServerErrorLine(["Traceback (most recent call last):", "ValueError: bad", "[Error] exited", "  "]), "ValueError: bad");
    assert.equal(lastServerErrorLine(["[Info] only client lines"]), undefined);
    assert.equal(lastServerErrorLine(["x".repeat(300)])?.length, 200);
  });
  it("suggests installing when the command was discovered, and keeps other errors' first line", () => {
    const command = { command: "python3", args: ["-m", "codeqa_lsp"], source: "python3" as const };
    const message = cannotStartMessage(command, "Server initialization failed.\nTraceback ...");
    assert.equal(message, "CodeQA: cannot start the language server (python3 -m codeqa_lsp): Server initialization failed. Install the server (`pip install codeqa-lsp`) or set `codeqa.server.path`.");
  });
});
