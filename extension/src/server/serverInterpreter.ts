/**
 * Which Python runs the server, as it stands now: resolved on demand (the setting, the Python
 * extension, PATH, in interpreter.ts's order), remembered, and announced when it changes.
 */

import * as vscode from 'vscode';
import { findOnPath, resolveInterpreter, type ResolvedInterpreter } from './interpreter';
import { pythonExtensionInterpreter } from './pythonExtension';

export class ServerInterpreter implements vscode.Disposable {
  private interpreter: ResolvedInterpreter | undefined;
  private resolving: Promise<ResolvedInterpreter | undefined> | undefined;
  private resolutions = 0;
  private readonly changed = new vscode.EventEmitter<ResolvedInterpreter | undefined>();
  /** Fires when the interpreter that runs the server changes (a setting, a selection). */
  readonly onDidChange = this.changed.event;

  constructor(private readonly log: vscode.LogOutputChannel) {}

  /**
   * Look again (settings may have just changed) and remember the answer. Calls may overlap;
   * only the latest call's answer is kept, and earlier callers get it too.
   */
  resolve(): Promise<ResolvedInterpreter | undefined> {
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
      if (changed) this.changed.fire(interp);
      return interp;
    })();
    this.resolving = resolving;
    return resolving;
  }

  /** The interpreter in use (or about to be), resolving it if nobody has yet. */
  async inUse(): Promise<ResolvedInterpreter | undefined> {
    if (this.resolving) return this.resolving;
    return this.interpreter ?? this.resolve();
  }

  /** The last answer, without looking again. */
  get current(): ResolvedInterpreter | undefined {
    return this.interpreter;
  }

  dispose(): void {
    this.changed.dispose();
  }
}
