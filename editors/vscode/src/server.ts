/**
 * Owns the `codeqa-lsp` process through vscode-languageclient: resolves the command, passes the
 * settings (and the API key from SecretStorage), answers `workspace/configuration`, watches
 * `$/progress` for the status bar, routes `codeqa/answerDelta` / `codeqa/answer` to listeners,
 * and turns start failures into one clear notification with "Show logs".
 */

import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as vscode from "vscode";
import {
  CloseAction,
  DidChangeConfigurationNotification,
  ErrorAction,
  ExecuteCommandRequest,
  LanguageClient,
  MessageType,
  ShowMessageNotification,
  State,
  type LanguageClientOptions,
  type ServerOptions,
  type WorkDoneProgressBegin,
  type WorkDoneProgressEnd,
  type WorkDoneProgressReport,
} from "vscode-languageclient/node";
import { Notifications, ServerCommands, type AnswerDelta, type AnswerResult } from "./protocol";
import {
  API_KEY_ENV,
  cannotStartMessage,
  configurationItem,
  describeCommand,
  findOnPath,
  initializationOptions,
  resolveServerCommand,
  toWireSettings,
  type ServerCommand,
  type WireSettings,
} from "./settings";
import type { Notifier } from "./notifier";
import type { RecordingChannel } from "./outputTail";

export type ProgressValue = WorkDoneProgressBegin | WorkDoneProgressReport | WorkDoneProgressEnd;

export interface ServerEvents {
  onStateChange(phase: "starting" | "running" | "failed" | "stopped", detail?: string): void;
  onProgress(value: ProgressValue): void;
  onAnswerDelta(delta: AnswerDelta): void;
  onAnswer(result: AnswerResult): void;
  /** A code lens ran `codeqa.showAnswer`: the answer will arrive as deltas + `codeqa/answer`. */
  onShowAnswerStarted(args: unknown): void;
}

/** Secret names in SecretStorage, one per provider: never written to settings.json. */
export function apiKeySecretName(provider: string): string {
  return `codeqa.apiKey.${provider}`;
}

const RESTART_WINDOW_MS = 3 * 60 * 1000;
const MAX_RESTARTS = 3;
/** How long a command waits for a (re)starting server before giving up. */
const START_WAIT_MS = 60_000;

export class CodeQaServer implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private wire: WireSettings = {};
  private userWire: WireSettings = {};
  private restarting: Promise<boolean> | undefined;
  private restartAgain = false;
  private crashes: number[] = [];
  private starting: Promise<boolean> | undefined;
  /** The command last used, for the "cannot start" notification and the e2e report. */
  command: ServerCommand | undefined;
  lastStartError: string | undefined;
  /** How many times a server process was started (restarts after setting changes included). */
  starts = 0;
  /** `window/showMessage` from the server (e.g. invalid settings), kept for the e2e report. */
  readonly serverMessages: Array<{ type: number; message: string }> = [];
  /** The server registered for didChangeConfiguration: the client feature pushes changes then. */
  private configurationRegistered = false;
  /** True once the current client completed `initialize`: only then do crashes restart it. */
  private initialized = false;
  /** Why the last `initialize` failed, when it did. */
  private initializeError: string | undefined;

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly output: RecordingChannel,
    private readonly events: ServerEvents,
    private readonly notifier: Notifier,
  ) {}

  get isRunning(): boolean {
    return this.client?.state === State.Running;
  }

  get serverInfo(): { name: string; version?: string } | undefined {
    return this.client?.initializeResult?.serverInfo;
  }

  /** Starts the server; resolves to false (after notifying the user) when it cannot start. */
  start(): Promise<boolean> {
    if (!this.starting) {
      this.starting = this.doStart().finally(() => {
        this.starting = undefined;
      });
    }
    return this.starting;
  }

  /**
   * Restarts with the settings as they are when the new process starts. Settings changes
   * arrive in bursts (provider, baseUrl, then the key): a restart asked for while one is
   * running (or while the first start is still reading settings) runs again after it, so the
   * last server always has the last settings instead of coalescing into a stale start.
   */
  restart(): Promise<boolean> {
    if (this.restarting) {
      this.restartAgain = true;
      return this.restarting;
    }
    this.restarting = (async () => {
      let ok = false;
      do {
        this.restartAgain = false;
        if (this.starting) await this.starting.catch(() => false);
        await this.stop();
        this.crashes = [];
        ok = await this.start();
      } while (this.restartAgain);
      return ok;
    })().finally(() => {
      this.restarting = undefined;
    });
    return this.restarting;
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (!client) return;
    try {
      if (client.state !== State.Stopped) await client.stop(5000);
      await client.dispose();
    } catch (error) {
      this.output.channel.appendLine(`[codeqa] stopping the server failed: ${String(error)}`);
    }
  }

  async dispose(): Promise<void> {
    await this.stop();
  }

  /** Runs a server command with one argument object; throws when the server is not running. */
  async execute<T>(command: string, argument?: object, token?: vscode.CancellationToken): Promise<T> {
    const client = await this.runningClient();
    const params = { command, arguments: argument === undefined ? [] : [argument] };
    return (await client.sendRequest(ExecuteCommandRequest.type, params, token)) as T;
  }

  /**
   * The running client: waits while it starts or restarts after a crash (never spawning a second
   * server), starts it when there is none, and restarts it when it gave up after crashes.
   */
  private async runningClient(): Promise<LanguageClient> {
    if (this.client?.state === State.Stopped && !this.starting) await this.restart();
    else if (!this.client) await this.start();
    const client = this.client;
    if (client && client.state !== State.Running) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          subscription.dispose();
          resolve();
        }, START_WAIT_MS);
        const subscription = client.onDidChangeState((event) => {
          if (event.newState === State.Starting) return;
          clearTimeout(timer);
          subscription.dispose();
          resolve();
        });
      });
    }
    if (!this.client || this.client.state !== State.Running) throw new Error("the CodeQA language server is not running");
    return this.client;
  }

  /** Pushes changed settings; the server re-pulls `workspace/configuration` on this notification. */
  async settingsChanged(): Promise<void> {
    this.wire = await this.readSettings();
    if (this.isRunning && !this.configurationRegistered) await this.pushSettings();
  }

  /**
   * Sends `workspace/didChangeConfiguration` with the *wire* settings. The client library would
   * send the raw `codeqa` section, which nests client-only keys (`server.path`) the server does
   * not know, so the middleware routes its pushes here instead.
   */
  private async pushSettings(): Promise<void> {
    await this.client?.sendNotification(DidChangeConfigurationNotification.type, { settings: { codeqa: this.wire } });
  }

  private showServerMessage(type: MessageType, message: string): void {
    this.serverMessages.push({ type, message });
    if (type === MessageType.Error) void vscode.window.showErrorMessage(message);
    else if (type === MessageType.Warning) void vscode.window.showWarningMessage(message);
    else void vscode.window.showInformationMessage(message);
  }

  private async doStart(): Promise<boolean> {
    this.events.onStateChange("starting");
    this.starts += 1;
    this.wire = await this.readSettings();
    this.userWire = await this.readUserSettings();
    const command = await this.resolveCommand();
    this.command = command;
    this.lastStartError = undefined;
    this.output.channel.appendLine(`[codeqa] starting ${describeCommand(command)} (from ${command.source})`);
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    const serverOptions: ServerOptions = {
      command: command.command,
      args: command.args,
      options: { cwd: folder, env: { ...process.env, PYTHONUNBUFFERED: "1" } },
    };
    const client = new LanguageClient("codeqa", "CodeQA", serverOptions, this.clientOptions());
    client.onNotification(Notifications.answerDelta, (delta: AnswerDelta) => this.events.onAnswerDelta(delta));
    client.onNotification(Notifications.answer, (result: AnswerResult) => this.events.onAnswer(result));
    client.onNotification(ShowMessageNotification.type, (params) => this.showServerMessage(params.type, params.message));
    this.configurationRegistered = false;
    this.initialized = false;
    this.initializeError = undefined;
    this.client = client;
    let failure: string | undefined;
    try {
      await client.start();
      // With initializationFailedHandler returning false, start() can resolve on a failed start.
      if (client.state !== State.Running) failure = this.initializeError ?? "the server exited while starting";
    } catch (error) {
      failure = error instanceof Error ? error.message : String(error);
    }
    if (failure !== undefined) {
      const message = failure;
      this.client = undefined;
      void client.dispose().catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 200)); // let the last stderr lines arrive
      this.cannotStart(command, message);
      return false;
    }
    this.initialized = true;
    this.events.onStateChange("running");
    const info = client.initializeResult?.serverInfo;
    this.output.channel.appendLine(`[codeqa] server running: ${info?.name ?? "?"} ${info?.version ?? ""}`);
    return true;
  }

  private clientOptions(): LanguageClientOptions {
    return {
      documentSelector: [{ scheme: "file" }],
      outputChannel: this.output.channel,
      initializationOptions: () => initializationOptions(this.wire, this.userWire),
      initializationFailedHandler: (error) => {
        this.initializeError = error instanceof Error ? error.message : String(error);
        this.output.channel.appendLine(`[codeqa] initialize failed: ${this.initializeError}`);
        return false;
      },
      errorHandler: {
        error: () => ({ action: ErrorAction.Continue }),
        closed: () => this.onClosed(),
      },
      middleware: {
        workspace: {
          didChangeConfiguration: async () => {
            this.configurationRegistered = true;
            this.wire = await this.readSettings();
            await this.pushSettings();
          },
          configuration: async (params, token, next) => {
            const fallback = await next(params, token);
            if (fallback instanceof Error || !Array.isArray(fallback)) return fallback;
            return params.items.map((item, index) => configurationItem(item.section, this.wire) ?? fallback[index]);
          },
        },
        handleWorkDoneProgress: (token, params, next) => {
          this.events.onProgress(params);
          next(token, params);
        },
        executeCommand: async (command, args, next) => {
          if (command === ServerCommands.showAnswer) this.events.onShowAnswerStarted(args[0]);
          return next(command, args);
        },
      },
    };
  }

  private onClosed(): { action: CloseAction; handled: boolean } {
    // Died before answering `initialize`: start() fails and reports it; restarting would loop.
    if (!this.initialized) return { action: CloseAction.DoNotRestart, handled: true };
    const now = Date.now();
    this.crashes = [...this.crashes.filter((t) => now - t < RESTART_WINDOW_MS), now];
    if (this.crashes.length <= MAX_RESTARTS) {
      this.output.channel.appendLine(`[codeqa] the server exited; restarting (${this.crashes.length}/${MAX_RESTARTS})`);
      this.events.onStateChange("starting");
      return { action: CloseAction.Restart, handled: true };
    }
    this.events.onStateChange("failed", "the server keeps exiting");
    this.notifier.error(
      `CodeQA: the language server exited ${this.crashes.length} times in 3 minutes and was not restarted. ` +
        "See the logs for its error output.",
      "crashed",
    );
    return { action: CloseAction.DoNotRestart, handled: true };
  }

  private cannotStart(command: ServerCommand, message: string): void {
    this.lastStartError = message;
    this.output.channel.appendLine(`[codeqa] cannot start ${describeCommand(command)}: ${message}`);
    this.events.onStateChange("failed", "cannot start");
    this.notifier.error(cannotStartMessage(command, message, this.output.recent()), "cannot-start");
  }

  private async readSettings(): Promise<WireSettings> {
    const config = vscode.workspace.getConfiguration("codeqa");
    return toWireSettings((key) => config.get(key));
  }

  /** What the user set in *user* scope (never a workspace file), plus the stored API key. */
  private async readUserSettings(): Promise<WireSettings> {
    const config = vscode.workspace.getConfiguration("codeqa");
    const provider = String(config.inspect("provider")?.globalValue ?? config.get("provider") ?? "extractive");
    const apiKey = API_KEY_ENV[provider] ? await this.context.secrets.get(apiKeySecretName(provider)) : undefined;
    return toWireSettings((key) => config.inspect(key)?.globalValue, apiKey);
  }

  private async resolveCommand(): Promise<ServerCommand> {
    const config = vscode.workspace.getConfiguration("codeqa");
    const configuredPath = config.get<string>("server.path") ?? "";
    const folder = vscode.workspace.workspaceFolders?.[0];
    const onPath = configuredPath.trim()
      ? undefined
      : findOnPath(process.platform === "win32" ? "codeqa-lsp.exe" : "codeqa-lsp", process.env.PATH, path.delimiter, isExecutable);
    const pythonInterpreter = configuredPath.trim() || onPath ? undefined : await selectedPythonInterpreter(folder?.uri);
    return resolveServerCommand({
      configuredPath,
      workspaceFolder: folder?.uri.fsPath,
      homeDir: os.homedir(),
      onPath,
      pythonInterpreter,
    });
  }
}

function isExecutable(candidate: string): boolean {
  try {
    fs.accessSync(candidate, fs.constants.X_OK);
    return fs.statSync(candidate).isFile();
  } catch {
    return false;
  }
}

interface PythonExtensionApi {
  environments?: {
    getActiveEnvironmentPath(resource?: vscode.Uri): { path: string } | undefined;
    resolveEnvironment(env: { path: string }): Promise<{ executable?: { uri?: vscode.Uri } } | undefined>;
  };
  settings?: {
    getExecutionDetails(resource?: vscode.Uri): { execCommand?: string[] };
  };
}

/** The interpreter selected in the Python extension, when it is installed; never throws. */
async function selectedPythonInterpreter(resource: vscode.Uri | undefined): Promise<string | undefined> {
  const extension = vscode.extensions.getExtension<PythonExtensionApi>("ms-python.python");
  if (!extension) return undefined;
  try {
    const api = extension.isActive ? extension.exports : await extension.activate();
    const active = api.environments?.getActiveEnvironmentPath(resource);
    if (active && api.environments) {
      const resolved = await api.environments.resolveEnvironment(active);
      const executable = resolved?.executable?.uri?.fsPath;
      if (executable) return executable;
    }
    return api.settings?.getExecutionDetails(resource).execCommand?.[0];
  } catch {
    return undefined;
  }
}
