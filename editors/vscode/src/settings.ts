/**
 * Mapping between VS Code settings (`codeqa.*`) and the server's wire settings (camelCase,
 * PROTOCOL.md), and resolution of the command that starts the server. Pure: the `vscode`
 * configuration is passed in as a getter so this is unit-tested under plain Node.
 */

/** The VS Code settings (below `codeqa.`) that are server settings, sent under the same name. */
export const SERVER_SETTING_KEYS = [
  "embedder",
  "embeddingModel",
  "embeddingBaseUrl",
  "provider",
  "model",
  "baseUrl",
  "allowRemote",
  "requestTimeout",
  "topK",
  "minScore",
  "include",
  "exclude",
  "hoverExplanations",
  "logQuestions",
  "store",
] as const;

export type ServerSettingKey = (typeof SERVER_SETTING_KEYS)[number];
export type WireSettings = Partial<Record<ServerSettingKey | "apiKey", unknown>>;

/** The providers that need an API key, and the environment variable their SDK reads. */
export const API_KEY_ENV: Readonly<Record<string, string>> = {
  anthropic: "ANTHROPIC_API_KEY",
  openai: "OPENAI_API_KEY",
};

/**
 * Builds the wire settings from `get(key)` (a `WorkspaceConfiguration.get` for section `codeqa`).
 * Unset values (null, undefined, blank strings) are left out so the server applies its own
 * defaults; everything else is passed through unchanged, because the server validates and
 * reports bad values itself (one place for validation). `apiKey` comes from SecretStorage and
 * is only added when there is one.
 */
export function toWireSettings(get: (key: string) => unknown, apiKey?: string): WireSettings {
  const wire: WireSettings = {};
  for (const key of SERVER_SETTING_KEYS) {
    const value = get(key);
    if (value === undefined || value === null) continue;
    if (typeof value === "string" && value.trim() === "") continue;
    wire[key] = typeof value === "string" ? value.trim() : value;
  }
  if (apiKey) wire.apiKey = apiKey;
  return wire;
}

/**
 * `initializationOptions`: the effective settings, the values the user set in *user* scope
 * under the reserved `userSettings` key, and `clientFeatures`. The server treats top-level keys
 * as workspace-scoped (a repository's `.vscode/settings.json` may have put them there), so an
 * endpoint or key only counts as the user's when it arrives under `userSettings`
 * (PROTOCOL.md "Trust"). The API key is the user's secret and travels only there.
 */
export function initializationOptions(wire: WireSettings, user: WireSettings = {}): Record<string, unknown> {
  return { ...wire, userSettings: { ...user }, clientFeatures: { answerNotification: true } };
}

/**
 * The settings whose provenance decides where code and keys may go: they reach the server as
 * user settings only in `initialize`, so a change restarts the server.
 */
export const TRUST_SENSITIVE_KEYS = ["provider", "baseUrl", "embedder", "embeddingBaseUrl", "store"] as const;

/**
 * Answers one `workspace/configuration` item. The server asks for section `codeqa` (the whole
 * settings object) and may ask for `codeqa.<key>`; other sections are not ours (undefined lets
 * the caller fall back to VS Code's default answer).
 */
export function configurationItem(section: string | undefined, wire: WireSettings): unknown {
  if (section === "codeqa") return { ...wire };
  if (section?.startsWith("codeqa.")) {
    const key = section.slice("codeqa.".length) as ServerSettingKey;
    return wire[key] ?? null;
  }
  return undefined;
}

/** True when a change to these settings needs a server restart rather than a config push. */
export function requiresRestart(affects: (section: string) => boolean): boolean {
  return affects("codeqa.server.path") || TRUST_SENSITIVE_KEYS.some((key) => affects(`codeqa.${key}`));
}

export interface ServerCommand {
  readonly command: string;
  readonly args: string[];
  /** Where the command came from, for logs and the "cannot start" notification. */
  readonly source: "setting" | "path" | "python-extension" | "python3";
}

export interface ServerCommandInputs {
  /** `codeqa.server.path`; blank = discover. */
  readonly configuredPath: string;
  readonly workspaceFolder?: string;
  readonly homeDir: string;
  /** Full path of `codeqa-lsp` on PATH, if there is one. */
  readonly onPath?: string;
  /** The Python extension's selected interpreter, if the extension is installed. */
  readonly pythonInterpreter?: string;
}

const PYTHON_EXECUTABLE = /(^|[\\/])python(\d+(\.\d+)?)?(\.exe)?$/i;

/**
 * Which command starts the server: the setting (an executable path; `~` and
 * `${workspaceFolder}` are expanded, and a Python interpreter gets `-m codeqa_lsp`), else
 * `codeqa-lsp` on PATH, else the Python extension's interpreter, else `python3 -m codeqa_lsp`.
 */
export function resolveServerCommand(inputs: ServerCommandInputs): ServerCommand {
  const configured = inputs.configuredPath.trim();
  if (configured) {
    let command = configured.replace(/\$\{workspaceFolder\}/g, inputs.workspaceFolder ?? "");
    if (command === "~" || command.startsWith("~/")) command = inputs.homeDir + command.slice(1);
    const args = PYTHON_EXECUTABLE.test(command) ? ["-m", "codeqa_lsp"] : [];
    return { command, args, source: "setting" };
  }
  if (inputs.onPath) return { command: inputs.onPath, args: [], source: "path" };
  if (inputs.pythonInterpreter) {
    return { command: inputs.pythonInterpreter, args: ["-m", "codeqa_lsp"], source: "python-extension" };
  }
  return { command: "python3", args: ["-m", "codeqa_lsp"], source: "python3" };
}

/** Finds `name` in a PATH string; `isExecutable` is injected (fs access) for testability. */
export function findOnPath(
  name: string,
  pathVariable: string | undefined,
  separator: string,
  isExecutable: (candidate: string) => boolean,
): string | undefined {
  for (const dir of (pathVariable ?? "").split(separator)) {
    if (!dir) continue;
    const candidate = dir.replace(/[\\/]+$/, "") + "/" + name;
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

/** A one-line description of the server command for logs and notifications. */
export function describeCommand(command: ServerCommand): string {
  const quoted = [command.command, ...command.args].map((part) => (/\s/.test(part) ? `"${part}"` : part));
  return quoted.join(" ");
}

/**
 * The "cannot start" notification text: what was run, why it failed in plain words, and what to
 * do about it. The launcher's raw error ("Launching server using command X failed. Error: spawn X
 * ENOENT", or "Pending response rejected since connection got disposed" when the process died
 * during `initialize`) is reduced to its cause, with the server's last error output line when
 * it died (e.g. "No module named codeqa_lsp"); the full text goes to the log.
 */
export function cannotStartMessage(command: ServerCommand, rawError: string, serverOutput: readonly string[] = []): string {
  const described = describeCommand(command);
  let cause = rawError.split("\n")[0].replace(/\.$/, "");
  if (/ENOENT/.test(rawError)) cause = `\`${command.command}\` was not found`;
  else if (/EACCES/.test(rawError)) cause = `\`${command.command}\` is not executable`;
  else if (/connection got disposed|connection (got )?closed|exited|EPIPE|ECONNRESET/i.test(rawError)) {
    const last = lastServerErrorLine(serverOutput);
    cause = last ? `it exited while starting: ${last.replace(/\.$/, "")}` : "it exited while starting";
  }
  const hint =
    command.source === "setting"
      ? "Check the `codeqa.server.path` setting."
      : "Install the server (`pip install codeqa-lsp`) or set `codeqa.server.path`.";
  return `CodeQA: cannot start the language server (${described}): ${cause}. ${hint}`;
}

/**
 * The last line the server wrote to stderr, clipped for a notification. Lines starting with `[`
 * are log records of the client, not the server's own words, and are skipped.
 */
export function lastServerErrorLine(lines: readonly string[]): string | undefined {
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i].trim();
    if (line && !line.startsWith("[")) return line.length > 200 ? line.slice(0, 197) + "..." : line;
  }
  return undefined;
}
