/**
 * Why the server cannot run, said once: one notification per failure episode (with a way to
 * pick another interpreter or read the log), the details in the log every time, and an event
 * for what shows the state (the status bar).
 */

import * as vscode from 'vscode';
import { startFailureMessage, type ResolvedInterpreter } from './interpreter';

const SELECT_INTERPRETER = 'Select Interpreter…';
const SHOW_LOG = 'Show Log';

export class ServerFailure implements vscode.Disposable {
  private shown = false;
  private message: string | undefined;
  private readonly changed = new vscode.EventEmitter<string | undefined>();
  /** Fires with the failure message when the server cannot run, and undefined once it does. */
  readonly onDidChange = this.changed.event;

  constructor(private readonly log: vscode.LogOutputChannel) {}

  report(interp: ResolvedInterpreter | undefined, what: string): void {
    const message = startFailureMessage(interp, what);
    this.log.error(message);
    this.message = message;
    this.changed.fire(message);
    if (this.shown) return;
    this.shown = true;
    void vscode.window.showErrorMessage(message, SELECT_INTERPRETER, SHOW_LOG).then((choice) => {
      if (choice === SELECT_INTERPRETER) void vscode.commands.executeCommand('metis.selectInterpreter');
      if (choice === SHOW_LOG) this.log.show();
    });
  }

  /** The server runs: the episode is over. */
  clear(): void {
    this.shown = false;
    this.message = undefined;
    this.changed.fire(undefined);
  }

  /** A restart asked for by the user: a new failure deserves a new notification. */
  rearm(): void {
    this.shown = false;
  }

  /** Why the server is not running, or undefined when it runs (or has not been tried). */
  get text(): string | undefined {
    return this.message;
  }

  dispose(): void {
    this.changed.dispose();
  }
}
