/** Which workspace folder an action is about: the active editor's, else the only one. */

import * as vscode from 'vscode';
import type { MemoryFileName } from './protocol';

/** Virtual documents (prompt, proposal) carry their folder's URI in the query. */
export const VIRTUAL_SCHEMES = new Set(['metis-prompt', 'metis-proposal']);

export function folderKey(uri: vscode.Uri | string): string {
  return (typeof uri === 'string' ? vscode.Uri.parse(uri) : uri).toString();
}

export function folderFromKey(key: string | undefined): vscode.WorkspaceFolder | undefined {
  if (!key) return undefined;
  const wanted = folderKey(key);
  return vscode.workspace.workspaceFolders?.find((f) => f.uri.toString() === wanted);
}

export function folderOfUri(uri: vscode.Uri): vscode.WorkspaceFolder | undefined {
  if (VIRTUAL_SCHEMES.has(uri.scheme)) return folderFromKey(uri.query);
  return vscode.workspace.getWorkspaceFolder(uri);
}

/** The active editor's folder, else the only (or first) folder; undefined with no folder. */
export function activeFolder(): vscode.WorkspaceFolder | undefined {
  const editor = vscode.window.activeTextEditor;
  const fromEditor = editor ? folderOfUri(editor.document.uri) : undefined;
  return fromEditor ?? vscode.workspace.workspaceFolders?.[0];
}

/** For a command: the active editor's folder, the only folder, or ask. */
export async function chooseFolder(): Promise<vscode.WorkspaceFolder | undefined> {
  const folders = vscode.workspace.workspaceFolders ?? [];
  if (folders.length === 0) {
    void vscode.window.showWarningMessage('Metis Memory works on a workspace folder: open a folder first.');
    return undefined;
  }
  const editor = vscode.window.activeTextEditor;
  const fromEditor = editor ? folderOfUri(editor.document.uri) : undefined;
  if (fromEditor) return fromEditor;
  if (folders.length === 1) return folders[0];
  return vscode.window.showWorkspaceFolderPick({ placeHolder: 'Which workspace folder’s memory?' });
}

/** For an agent's tool call (no UI): the active editor's folder or the only folder. */
export function toolFolder(): vscode.WorkspaceFolder | string {
  const folders = vscode.workspace.workspaceFolders ?? [];
  if (folders.length === 0) return 'No workspace folder is open, so there is no .metis/ memory to use.';
  const editor = vscode.window.activeTextEditor;
  const fromEditor = editor ? folderOfUri(editor.document.uri) : undefined;
  if (fromEditor) return fromEditor;
  if (folders.length === 1) return folders[0]!;
  return (
    `This window has ${folders.length} workspace folders (${folders.map((f) => f.name).join(', ')}) and ` +
    'no file of one of them is active; ask the user to open a file in the folder whose memory to use.'
  );
}

export function memoryUri(folder: vscode.WorkspaceFolder, file: MemoryFileName): vscode.Uri {
  return vscode.Uri.joinPath(folder.uri, '.metis', file);
}

export async function readDisk(uri: vscode.Uri): Promise<string | undefined> {
  try {
    return new TextDecoder('utf-8').decode(await vscode.workspace.fs.readFile(uri));
  } catch (err) {
    if (err instanceof vscode.FileSystemError && err.code === 'FileNotFound') return undefined;
    throw err;
  }
}
