/**
 * The Python extension's active interpreter, read through its public API loosely: it is an
 * optional companion, never a dependency, and any shape we do not recognise means "none".
 */

import * as vscode from 'vscode';

const PYTHON_EXTENSION_ID = 'ms-python.python';
const ACTIVATE_TIMEOUT_MS = 10_000;

interface EnvironmentPath {
  path?: unknown;
}
interface ResolvedEnvironment {
  executable?: { uri?: { fsPath?: unknown } };
}
interface PythonApiShape {
  environments?: {
    getActiveEnvironmentPath?: (resource?: vscode.Uri) => EnvironmentPath | undefined;
    resolveEnvironment?: (env: EnvironmentPath) => Promise<ResolvedEnvironment | undefined>;
  };
}

function withTimeout<T>(promise: Thenable<T>, ms: number): Promise<T | undefined> {
  return Promise.race([
    Promise.resolve(promise),
    new Promise<undefined>((resolve) =>
      setTimeout(() => {
        resolve(undefined);
      }, ms),
    ),
  ]);
}

export async function pythonExtensionInterpreter(
  resource: vscode.Uri | undefined,
  log: vscode.LogOutputChannel,
): Promise<string | undefined> {
  const ext = vscode.extensions.getExtension<unknown>(PYTHON_EXTENSION_ID);
  if (!ext) return undefined;
  try {
    const api = (ext.isActive ? ext.exports : await withTimeout(ext.activate(), ACTIVATE_TIMEOUT_MS)) as
      PythonApiShape | undefined;
    const envs = api?.environments;
    const active = envs?.getActiveEnvironmentPath?.(resource);
    if (!active) return undefined;
    const resolved = envs?.resolveEnvironment
      ? await withTimeout(envs.resolveEnvironment(active), ACTIVATE_TIMEOUT_MS)
      : undefined;
    const exe = resolved?.executable?.uri?.fsPath;
    if (typeof exe === 'string' && exe) return exe;
    return typeof active.path === 'string' && active.path ? active.path : undefined;
  } catch (err) {
    log.warn(`the Python extension gave no interpreter: ${String(err)}`);
    return undefined;
  }
}
