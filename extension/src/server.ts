/**
 * The language server's lifecycle: find Python, check it can run the bundled server, start
 * vscode-languageclient over stdio, restart on request, and say clearly (once) when it cannot.
 */

import * as fs from 'node:fs';
import * as vscode from 'vscode';
import {
  CloseAction,
  ErrorAction,
  ExecuteCommandRequest,
  LanguageClient,
  ResponseError,
  RevealOutputChannelOn,
  State,
  type LanguageClientOptions,
  type ServerOptions,
} from 'vscode-languageclient/node';
import {
  describeSource,
  findOnPath,
  resolveInterpreter,
  startFailureMessage,
  type ResolvedInterpreter,
} from './interpreter';
import { checkInterpreter, errorText } from './interpreterCheck';
import { pythonExtensionInterpreter } from './pythonExtension';
import {
  ClientCommand,
  type InitializationOptions,
  isToolErrorData,
  type ServerCommandArgs,
  type ServerCommandName,
  type ServerCommandResults,
} from './protocol';

/** A server command failed; `message` is the user-visible text, `code` the machine one. */
export class MetisCommandError extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
    this.name = 'MetisCommandError';
  }
}

type NotificationHandler = (params: unknown) => void;

const SELECT_INTERPRETER = 'Select Interpreter…';
const SHOW_LOG = 'Show Log';

export class MetisServer implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private pending: Promise<boolean> | undefined;
  private interpreter: ResolvedInterpreter | undefined;
  private failureShown = false;
  private crashes: number[] = [];
  private readonly handlers = new Map<string, NotificationHandler>();
  private readonly startedEmitter = new vscode.EventEmitter<void>();
  /** Fires each time the server has (re)started and answers requests. */
  readonly onDidStart = this.startedEmitter.event;
  private readonly failedEmitter = new vscode.EventEmitter<string | undefined>();
  /** Fires with the failure message when the server cannot run, and undefined once it does. */
  readonly onDidChangeFailure = this.failedEmitter.event;
  private failureText: string | undefined;
  private resolving: Promise<ResolvedInterpreter | undefined> | undefined;
  private resolutions = 0;
  private readonly interpreterEmitter = new vscode.EventEmitter<ResolvedInterpreter | undefined>();
  /** Fires when the interpreter that runs the server changes (a setting, a restart). */
  readonly onDidChangeInterpreter = this.interpreterEmitter.event;

  constructor(
    private readonly context: vscode.ExtensionContext,
    readonly log: vscode.LogOutputChannel,
  ) {}

  /** Register before start; kept across restarts. */
  onNotification(method: string, handler: NotificationHandler): void {
    this.handlers.set(method, handler);
  }

  get running(): boolean {
    return this.client?.state === State.Running;
  }

  /** Start unless started or starting; resolves to whether the server runs. */
  start(): Promise<boolean> {
    if (this.running) return Promise.resolve(true);
    this.pending ??= this.doStart().finally(() => {
      this.pending = undefined;
    });
    return this.pending;
  }

  /** Stop and start again (a second call while one is under way joins it). */
  async restart(): Promise<boolean> {
    if (this.pending) await this.pending;
    await this.stop();
    this.failureShown = false;
    this.crashes = [];
    return this.start();
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (!client) return;
    try {
      if (client.state !== State.Stopped) await client.stop(5000);
    } catch (err) {
      this.log.warn(`stopping the server: ${String(err)}`);
    }
    await client.dispose().catch(() => undefined);
  }

  /** Run a server command (workspace/executeCommand) with one JSON object argument. */
  async command<C extends ServerCommandName>(
    command: C,
    argument: ServerCommandArgs[C],
  ): Promise<ServerCommandResults[C]> {
    if (!this.running && !(await this.start())) {
      throw new MetisCommandError(
        "Metis Memory's language server is not running, so nothing was read or written. " +
          'See the Metis Memory log, pick another interpreter, or run "Metis: Restart Server".',
        'server_unavailable',
      );
    }
    const client = this.client;
    if (!client) throw new MetisCommandError('The Metis Memory server stopped.', 'server_unavailable');
    try {
      return (await client.sendRequest(ExecuteCommandRequest.type, {
        command,
        arguments: [argument],
      })) as ServerCommandResults[C];
    } catch (err) {
      if (err instanceof ResponseError) {
        const data: unknown = err.data;
        throw new MetisCommandError(err.message, isToolErrorData(data) ? data.code : `rpc_${err.code}`);
      }
      throw err;
    }
  }

  /** The bundled launcher (`server.py [lsp] | mcp WORKSPACE | --check`). */
  get launcher(): string {
    return this.context.asAbsolutePath('dist/bundled/tool/server.py');
  }

  /**
   * Find the Python that runs the server (setting, Python extension, PATH) and remember it.
   * Each call looks again (settings may have just changed); only the latest call's answer is kept.
   */
  resolveInterpreter(): Promise<ResolvedInterpreter | undefined> {
    const seq = ++this.resolutions;
    const resolving = (async () => {
      const config = vscode.workspace.getConfiguration('metis');
      const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
      let interp: ResolvedInterpreter | undefined;
      try {
        interp = await resolveInterpreter({
          setting: () => config.get<string>('interpreter'),
          pythonExtension: () => pythonExtensionInterpreter(folder, this.log),
          onPath: (names) => Promise.resolve(findOnPath(names)),
        });
      } finally {
        if (seq === this.resolutions) this.resolving = undefined;
      }
      if (seq !== this.resolutions) return this.resolving ?? this.interpreter;
      const changed = interp?.path !== this.interpreter?.path;
      this.interpreter = interp;
      if (changed) this.interpreterEmitter.fire(interp);
      return interp;
    })();
    this.resolving = resolving;
    return resolving;
  }

  /** The interpreter the server runs with (or is about to), resolving it if nobody has yet. */
  async interpreterInUse(): Promise<ResolvedInterpreter | undefined> {
    if (this.resolving) return this.resolving;
    return this.interpreter ?? this.resolveInterpreter();
  }

  private async doStart(): Promise<boolean> {
    const interp = await this.resolveInterpreter();
    if (!interp) {
      this.fail(undefined, 'no interpreter found');
      return false;
    }
    this.log.info(`Python interpreter: ${interp.path} (from ${describeSource(interp.source)})`);

    const launcher = this.launcher;
    if (!fs.existsSync(launcher)) {
      this.fail(interp, `this installation has no bundled server (${launcher} is missing); reinstall the extension`);
      return false;
    }
    const check = await checkInterpreter(interp.path, launcher, this.log);
    if (check !== undefined) {
      this.fail(interp, check);
      return false;
    }

    const serverOptions: ServerOptions = {
      command: interp.path,
      args: [launcher, 'lsp'],
      options: { env: { ...process.env, PYTHONUNBUFFERED: '1', PYTHONNOUSERSITE: '1' } },
    };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [
        { scheme: 'file', pattern: '**/.metis/MEMORY.md' },
        { scheme: 'file', pattern: '**/.metis/USER.md' },
        // Consolidation proposals: the server analyses them as the file they are for.
        { scheme: 'metis-proposal' },
      ],
      initializationOptions: {
        clientCommands: Object.values(ClientCommand),
      } satisfies InitializationOptions,
      outputChannel: this.log,
      traceOutputChannel: this.log,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      initializationFailedHandler: (error: unknown) => {
        this.fail(interp, `the server failed to initialise: ${errorText(error)}`);
        return false;
      },
      errorHandler: {
        error: (_error, _message, count) => ({
          action: (count ?? 0) <= 3 ? ErrorAction.Continue : ErrorAction.Shutdown,
          handled: true,
        }),
        closed: () => {
          const now = Date.now();
          this.crashes = [...this.crashes.filter((t) => now - t < 180_000), now];
          if (this.crashes.length <= 3) {
            this.log.warn(`the server stopped unexpectedly; restarting (${this.crashes.length} of 3)`);
            return { action: CloseAction.Restart, handled: true };
          }
          this.fail(interp, 'the server stopped 4 times in 3 minutes (the log shows why)');
          return { action: CloseAction.DoNotRestart, handled: true };
        },
      },
    };
    const client = new LanguageClient('metis', 'Metis Memory', serverOptions, clientOptions);
    for (const [method, handler] of this.handlers) {
      client.onNotification(method, (params: unknown) => {
        handler(params);
      });
    }
    client.onDidChangeState((e) => {
      if (e.newState === State.Running) this.startedEmitter.fire();
    });
    this.client = client;
    try {
      await client.start();
    } catch (err) {
      this.fail(interp, `the server did not start: ${errorText(err)}`);
      return false;
    }
    this.failureShown = false;
    this.failureText = undefined;
    this.failedEmitter.fire(undefined);
    this.log.info('language server running');
    return true;
  }

  /** One notification per failure episode; the log gets the details every time. */
  private fail(interp: ResolvedInterpreter | undefined, what: string): void {
    const message = startFailureMessage(interp, what);
    this.log.error(message);
    this.failureText = message;
    this.failedEmitter.fire(message);
    if (this.failureShown) return;
    this.failureShown = true;
    void vscode.window.showErrorMessage(message, SELECT_INTERPRETER, SHOW_LOG).then((choice) => {
      if (choice === SELECT_INTERPRETER) void vscode.commands.executeCommand('metis.selectInterpreter');
      if (choice === SHOW_LOG) this.log.show();
    });
  }

  /** Why the server is not running, or undefined when it runs (or has not been tried). */
  get failure(): string | undefined {
    return this.failureText;
  }

  get currentInterpreter(): ResolvedInterpreter | undefined {
    return this.interpreter;
  }

  dispose(): void {
    void this.stop();
    this.startedEmitter.dispose();
    this.failedEmitter.dispose();
    this.interpreterEmitter.dispose();
  }
}
