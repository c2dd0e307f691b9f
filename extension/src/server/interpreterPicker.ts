/** "Metis: Select Python Interpreter…": the interpreters on PATH that run, or browse. */

import { execFile } from 'node:child_process';
import * as vscode from 'vscode';
import { findOnPath } from './interpreter';

export async function selectInterpreter(): Promise<void> {
  const names = [
    'python3.15',
    'python3.14',
    'python3.14t',
    'python3.13',
    'python3.12',
    'python3.11',
    'python3.10',
    'python3',
    'python',
  ];
  const paths = [...new Set(names.map((name) => findOnPath([name])).filter((p): p is string => p !== undefined))];
  // Offer only interpreters that run, with their version (pyenv shims, for one, may not).
  const checked = await Promise.all(paths.map(async (p) => ({ path: p, version: await pythonVersion(p) })));
  const items: (vscode.QuickPickItem & { value?: string })[] = [
    ...checked
      .filter((c): c is { path: string; version: string } => c.version !== undefined)
      .map((c) => ({ label: c.path, description: `Python ${c.version}`, value: c.path })),
    { label: '$(folder-opened) Browse…', value: '<browse>' },
    {
      label: '$(clear-all) Automatic',
      description: 'the Python extension’s interpreter, else python3 on PATH',
      value: '',
    },
  ];
  const picked = await vscode.window.showQuickPick(items, {
    placeHolder: 'Python (CPython 3.10–3.15) for the Metis Memory server',
  });
  if (!picked) return;
  let value = picked.value ?? '';
  if (value === '<browse>') {
    const chosen = await vscode.window.showOpenDialog({ canSelectMany: false, title: 'Python interpreter' });
    if (!chosen?.[0]) return;
    value = chosen[0].fsPath;
  }
  // Saving the setting restarts the server (see onDidChangeConfiguration).
  await vscode.workspace.getConfiguration('metis').update('interpreter', value, vscode.ConfigurationTarget.Global);
}

function pythonVersion(exe: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile(exe, ['-c', 'import platform; print(platform.python_version())'], { timeout: 10_000 }, (err, stdout) => {
      resolve(err ? undefined : stdout.trim() || undefined);
    });
  });
}
