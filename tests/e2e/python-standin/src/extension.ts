/**
 * Test-only stand-in for the Python extension (ms-python.python): the part of its API that
 * `@vscode/python-extension` declares and Metis Memory uses — `environments.
 * getActiveEnvironmentPath`, `resolveEnvironment`, `onDidChangeActiveEnvironmentPath` — with
 * the active interpreter taken from METIS_E2E_ACTIVE_PYTHON and changed by the
 * `metisE2e.selectPython` command, as the user would with "Python: Select Interpreter".
 */

import type { ActiveEnvironmentPathChangeEvent, EnvironmentPath } from '@vscode/python-extension';
import * as vscode from 'vscode';

/** The fields of a resolved environment that a caller of the real API may rely on being set. */
interface Resolved extends EnvironmentPath {
  executable: { uri: vscode.Uri | undefined };
}

interface Environments {
  getActiveEnvironmentPath(resource?: vscode.Uri): EnvironmentPath;
  resolveEnvironment(env: EnvironmentPath | string): Promise<Resolved | undefined>;
  onDidChangeActiveEnvironmentPath: vscode.Event<ActiveEnvironmentPathChangeEvent>;
}

export function activate(context: vscode.ExtensionContext): { environments: Environments } {
  let active = process.env.METIS_E2E_ACTIVE_PYTHON ?? '';
  const changed = new vscode.EventEmitter<ActiveEnvironmentPathChangeEvent>();
  const current = (): EnvironmentPath => ({ id: active, path: active });
  context.subscriptions.push(
    changed,
    vscode.commands.registerCommand('metisE2e.selectPython', (path: string) => {
      active = path;
      changed.fire({ ...current(), resource: undefined });
    }),
  );
  const environments: Environments = {
    getActiveEnvironmentPath: current,
    resolveEnvironment: (env) => {
      const path = typeof env === 'string' ? env : env.path;
      return Promise.resolve(path ? { id: path, path, executable: { uri: vscode.Uri.file(path) } } : undefined);
    },
    onDidChangeActiveEnvironmentPath: changed.event,
  };
  return { environments };
}

export function deactivate(): void {}
