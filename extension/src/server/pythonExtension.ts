/**
 * The Python extension's active interpreter, through its published API facade
 * (`@vscode/python-extension`, as the python-tools extension template does). The Python
 * extension is an optional companion, never a dependency: absent, disabled, slow to activate
 * or failing, it means "no interpreter from there", and the PATH is tried next.
 */

import { PythonExtension } from '@vscode/python-extension';
import * as vscode from 'vscode';

export const PYTHON_EXTENSION_ID = 'ms-python.python';
const ACTIVATE_TIMEOUT_MS = 10_000;

function withTimeout<T>(promise: Thenable<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => {
      resolve(undefined);
    }, ms);
  });
  return Promise.race([Promise.resolve(promise), timeout]).finally(() => {
    clearTimeout(timer);
  });
}

/** The facade, or undefined when the Python extension is not installed or does not activate. */
async function pythonApi(log: vscode.LogOutputChannel): Promise<PythonExtension | undefined> {
  if (!vscode.extensions.getExtension(PYTHON_EXTENSION_ID)) return undefined;
  try {
    const api = await withTimeout(PythonExtension.api(), ACTIVATE_TIMEOUT_MS);
    if (!api) log.warn(`the Python extension did not activate within ${ACTIVATE_TIMEOUT_MS / 1000} s`);
    return api;
  } catch (err) {
    log.warn(`the Python extension's API is unavailable: ${String(err)}`);
    return undefined;
  }
}

/** The executable of the environment the Python extension has selected for `resource`. */
export async function pythonExtensionInterpreter(
  resource: vscode.Uri | undefined,
  log: vscode.LogOutputChannel,
): Promise<string | undefined> {
  const api = await pythonApi(log);
  if (!api) return undefined;
  try {
    const active = api.environments.getActiveEnvironmentPath(resource);
    const resolved = await withTimeout(api.environments.resolveEnvironment(active), ACTIVATE_TIMEOUT_MS);
    const exe = resolved?.executable.uri?.fsPath;
    if (exe) return exe;
    return active.path || undefined;
  } catch (err) {
    log.warn(`the Python extension gave no interpreter: ${String(err)}`);
    return undefined;
  }
}

/**
 * Call `listener` whenever the user selects another interpreter in the Python extension.
 * Resolves to undefined (and listens to nothing) when that extension is absent.
 */
export async function onDidChangePythonInterpreter(
  listener: () => void,
  log: vscode.LogOutputChannel,
): Promise<vscode.Disposable | undefined> {
  const api = await pythonApi(log);
  return api?.environments.onDidChangeActiveEnvironmentPath(() => {
    listener();
  });
}
