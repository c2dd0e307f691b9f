/**
 * Which memory workspace an action is about: the active editor's, else the only folder.
 *
 * A memory workspace is the directory holding a `.metis/`. It is known by the window's
 * folder that is it (or that is its `.metis/`), else, for a memory file opened outside every
 * folder (no folder, a monorepo's root, an unrelated folder), by a folder made up for it with
 * `index` -1: the server adopts such a directory too, and reports it under that URI.
 */

import { createHash } from 'node:crypto';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { MemoryFileName } from './protocol';

/** Virtual documents (prompt, proposal) carry their folder's URI in the query. */
export const VIRTUAL_SCHEMES = new Set(['metis-prompt', 'metis-proposal']);

export function folderKey(uri: vscode.Uri | string): string {
  return (typeof uri === 'string' ? vscode.Uri.parse(uri) : uri).toString();
}

/** The directory a folder stands for: a folder opened at `.metis/` stands for its parent. */
export function memoryRoot(uri: vscode.Uri): vscode.Uri {
  const trimmed = uri.path.replace(/\/+$/, '');
  return path.posix.basename(trimmed) === '.metis' ? uri.with({ path: path.posix.dirname(trimmed) }) : uri;
}

/** `<dir>/.metis/MEMORY.md` or `USER.md` (a local file) -> `<dir>`; anything else -> undefined. */
export function memoryWorkspaceDir(uri: vscode.Uri): vscode.Uri | undefined {
  if (uri.scheme !== 'file') return undefined;
  const m = /^(.*)\/\.metis\/(?:MEMORY|USER)\.md$/.exec(uri.path);
  return m ? uri.with({ path: m[1] || '/', query: '', fragment: '' }) : undefined;
}

/** The window's folder for a memory workspace directory, else one made up for it. */
export function folderForDir(dir: vscode.Uri): vscode.WorkspaceFolder {
  const key = dir.toString();
  const known = vscode.workspace.workspaceFolders?.find((f) => memoryRoot(f.uri).toString() === key);
  return known ?? { uri: dir, name: path.posix.basename(dir.path) || dir.path, index: -1 };
}

export function folderFromKey(key: string | undefined): vscode.WorkspaceFolder | undefined {
  if (!key) return undefined;
  const wanted = folderKey(key);
  const known = vscode.workspace.workspaceFolders?.find((f) => f.uri.toString() === wanted);
  if (known) return known;
  // A workspace the server adopted (its URI came from the server or a code action).
  const uri = vscode.Uri.parse(wanted);
  return uri.scheme === 'file' ? folderForDir(uri) : undefined;
}

export function folderOfUri(uri: vscode.Uri): vscode.WorkspaceFolder | undefined {
  if (VIRTUAL_SCHEMES.has(uri.scheme)) return folderFromKey(uri.query);
  const dir = memoryWorkspaceDir(uri);
  return dir ? folderForDir(dir) : vscode.workspace.getWorkspaceFolder(uri);
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
  const editor = vscode.window.activeTextEditor;
  const fromEditor = editor ? folderOfUri(editor.document.uri) : undefined;
  if (fromEditor) return fromEditor;
  if (folders.length === 0) {
    void vscode.window.showWarningMessage(
      'Metis Memory works on a folder holding .metis/: open that folder, or one of its .metis/MEMORY.md or .metis/USER.md files.',
    );
    return undefined;
  }
  if (folders.length === 1) return folders[0];
  return vscode.window.showWorkspaceFolderPick({ placeHolder: 'Which workspace folder’s memory?' });
}

/** For an agent's tool call (no UI): the active editor's folder or the only folder. */
export function toolFolder(): vscode.WorkspaceFolder | string {
  const folders = vscode.workspace.workspaceFolders ?? [];
  const editor = vscode.window.activeTextEditor;
  const fromEditor = editor ? folderOfUri(editor.document.uri) : undefined;
  if (fromEditor) return fromEditor;
  if (folders.length === 0) return 'No workspace folder or memory file is open, so there is no .metis/ memory to use.';
  const only = folders.length === 1 ? folders[0] : undefined;
  if (only) return only;
  return (
    `This window has ${folders.length} workspace folders (${folders.map((f) => f.name).join(', ')}) and ` +
    'no file of one of them is active; ask the user to open a file in the folder whose memory to use.'
  );
}

export function memoryUri(folder: vscode.WorkspaceFolder, file: MemoryFileName): vscode.Uri {
  return vscode.Uri.joinPath(memoryRoot(folder.uri), '.metis', file);
}

/** Whether a document is a memory file, saved or about to be ("Open USER.md" of a new one). */
export function isMemoryDocument(uri: vscode.Uri): boolean {
  return memoryWorkspaceDir(uri.scheme === 'untitled' ? uri.with({ scheme: 'file' }) : uri) !== undefined;
}

export async function readDisk(uri: vscode.Uri): Promise<string | undefined> {
  try {
    return new TextDecoder('utf-8').decode(await vscode.workspace.fs.readFile(uri));
  } catch (err) {
    if (err instanceof vscode.FileSystemError && err.code === 'FileNotFound') return undefined;
    throw err;
  }
}

/** A file's text and the sha256 of its bytes (what `expectedHash` compares); "" when missing. */
export async function readDiskVersion(uri: vscode.Uri): Promise<{ text: string; sha256: string }> {
  let bytes: Uint8Array;
  try {
    bytes = await vscode.workspace.fs.readFile(uri);
  } catch (err) {
    if (err instanceof vscode.FileSystemError && err.code === 'FileNotFound') bytes = new Uint8Array();
    else throw err;
  }
  return { text: new TextDecoder('utf-8').decode(bytes), sha256: createHash('sha256').update(bytes).digest('hex') };
}
