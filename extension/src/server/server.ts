/**
 * The language server's lifecycle: find Python, launch the bundled server and read whether it
 * runs, connect vscode-languageclient over its stdio, restart on request, and say clearly
 * (once) when it cannot.
 */

import type { ChildProcess } from 'node:child_process';
import * as vscode from 'vscode';
import { ExecuteCommandRequest, LanguageClient, ResponseError, State } from 'vscode-languageclient/node';
import { describeSource } from './interpreter';
import { errorText, launchServer, reap } from './serverProcess';
import { createLanguageClient } from './languageClient';
import {
  isToolErrorData,
  type ServerCommandArgs,
  type ServerCommandName,
  type ServerCommandResults,
} from '../protocol';
import { MetisCommandError } from './commandError';
import { ServerFailure } from './serverFailure';
import { ServerInterpreter } from './serverInterpreter';

type NotificationHandler = (params: unknown) => void;

export class MetisServer implements vscode.Disposable {
  private client: LanguageClient | undefined;
  /** The process the client talks to now. */
  private process: ChildProcess | undefined;
  private pending: Promise<boolean> | undefined;
  private readonly crashes: number[] = [];
  private readonly handlers = new Map<string, NotificationHandler>();
  private readonly startedEmitter = new vscode.EventEmitter<void>();
  /** Fires each time the server has (re)started and answers requests. */
  readonly onDidStart = this.startedEmitter.event;
  /** Which Python runs the server. */
  readonly interpreter: ServerInterpreter;
  /** Why it cannot run, when it cannot. */
  readonly failure: ServerFailure;

  constructor(
    private readonly context: vscode.ExtensionContext,
    readonly log: vscode.LogOutputChannel,
  ) {
    this.interpreter = new ServerInterpreter(log);
    this.failure = new ServerFailure(log);
  }

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
    this.failure.rearm();
    this.crashes.length = 0;
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
    // A client given streams leaves the process alone: it exits on `exit`, else it is ended.
    if (this.process) reap(this.process);
    this.process = undefined;
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
        if (!isToolErrorData(data)) throw new MetisCommandError(err.message, `rpc_${err.code}`);
        const person = typeof data.person_text === 'string' ? data.person_text : undefined;
        throw new MetisCommandError(err.message, data.code, person);
      }
      throw err;
    }
  }

  /** The bundled launcher (`server.py [lsp] | mcp WORKSPACE | hook | --check`). */
  get launcher(): string {
    return this.context.asAbsolutePath('dist/bundled/tool/server.py');
  }

  /**
   * The Python extension selected another interpreter. When that changes the one the server
   * would run with (no metis.interpreter setting overrides it) and the server has been started
   * (or is starting, or failed to), restart on the new one; otherwise only remember it.
   */
  async pythonInterpreterChanged(): Promise<void> {
    const before = this.interpreter.current?.path;
    // Starting counts: a selection made while the server launches must not be lost.
    const tried = this.client !== undefined || this.pending !== undefined || this.failure.text !== undefined;
    const now = await this.interpreter.resolve();
    if (!tried || !now) return;
    if (now.path === before) {
      this.log.info(
        `the Python extension changed its interpreter; the server keeps ${now.path} (from ${describeSource(now.source)})`,
      );
      return;
    }
    this.log.info(`the Python extension selected ${now.path}: restarting the server with it`);
    await this.restart();
  }

  private async doStart(): Promise<boolean> {
    const interp = await this.interpreter.resolve();
    if (!interp) {
      this.failure.report(undefined, 'no interpreter found');
      return false;
    }
    this.log.info(`Python interpreter: ${interp.path} (from ${describeSource(interp.source)})`);

    const launcher = this.launcher;
    const launch = await launchServer(interp.path, launcher, this.log);
    if ('problem' in launch) {
      this.failure.report(interp, launch.problem);
      return false;
    }

    const client = createLanguageClient(launch.process, interp.path, launcher, {
      log: this.log,
      fail: (what) => {
        this.failure.report(interp, what);
      },
      crashes: this.crashes,
      serving: (process) => {
        this.process = process;
      },
    });
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
      this.failure.report(interp, `the server did not start: ${errorText(err)}`);
      return false;
    }
    this.failure.clear();
    this.log.info('language server running');
    return true;
  }

  dispose(): void {
    void this.stop();
    this.startedEmitter.dispose();
    this.failure.dispose();
    this.interpreter.dispose();
  }
}
