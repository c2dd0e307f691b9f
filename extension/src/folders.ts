/**
 * Which memory workspace an action is about, and what it is shown as. What a workspace is
 * the server decides: a command's `workspace` is the active document's URI (or a chosen
 * folder's), which the server resolves (a folder, its `.metis/`, a memory file outside every
 * folder, any document inside a workspace). What it reports names each workspace by a URI (a
 * window folder's, or the directory of a memory file it adopted): the key of what is shown.
 */

import { createHash } from 'node:crypto';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { USER_MEMORY, type MemoryFileName, type MemoryTarget } from './protocol';

/** Virtual documents (prompt, proposal, a write's or a staged change's sides) carry their
 * workspace's key in the query. */
export const VIRTUAL_SCHEMES = new Set(['metis-prompt', 'metis-proposal', 'metis-history', 'metis-review']);

export interface MemoryWorkspace {
  /** The URI the server names it by: what its usage, prompt and proposals are keyed by. */
  readonly uri: vscode.Uri;
  readonly name: string;
  /** What a command sends as `workspace`: the document the action is about (the server
   * resolves it), else `uri`. */
  readonly target: string;
}

export function workspaceKey(uri: vscode.Uri | string): string {
  return (typeof uri === 'string' ? vscode.Uri.parse(uri) : uri).toString();
}

/** Workspaces the server has reported, by key: a document inside one is shown as it. */
const reported = new Set<string>();

/** The user memory's USER.md and its folder, as the server last said where they are (its
 * usage, `metis.openUserMemory`): no workspace, whatever folder holds them. */
let userMemory: { file: vscode.Uri; folder: vscode.Uri } | undefined;

export function userMemoryReported(fileUri: string): void {
  const file = vscode.Uri.parse(fileUri);
  userMemory = { file, folder: vscode.Uri.joinPath(file, '..') };
}

/** Whether a key (a URI the server or a virtual document names) is the user memory's folder
 * or its USER.md. */
export function isUserMemoryKey(key: string): boolean {
  if (!userMemory) return false;
  const uri = workspaceKey(key);
  return uri === userMemory.folder.toString() || uri === userMemory.file.toString();
}

export function workspaceReported(key: string): void {
  reported.add(workspaceKey(key));
}

/** A workspace by the key the server (or a code action's argument) names it by; one that is
 * not a window folder (a memory file's directory) is named after its directory. */
export function workspaceFromKey(key: string): MemoryWorkspace {
  const uri = vscode.Uri.parse(key);
  const folder = vscode.workspace.workspaceFolders?.find((f) => f.uri.toString() === uri.toString());
  return { uri, name: folder?.name ?? (path.posix.basename(uri.path) || uri.path), target: uri.toString() };
}

function windowFolder(folder: vscode.WorkspaceFolder): MemoryWorkspace {
  return { uri: folder.uri, name: folder.name, target: folder.uri.toString() };
}

function holds(dir: vscode.Uri, doc: vscode.Uri): boolean {
  if (dir.scheme !== doc.scheme || dir.authority !== doc.authority) return false;
  const prefix = dir.path.replace(/\/+$/, '');
  return doc.path === prefix || doc.path.startsWith(`${prefix}/`);
}

/**
 * The workspace a document is shown as: a virtual document's own; else the innermost one the
 * server reported that holds it; else its window folder. Undefined for documents of none.
 */
export function workspaceOf(doc: vscode.Uri): MemoryWorkspace | undefined {
  // The user memory (and a proposal for it) is no workspace's: an action then asks, or takes
  // the only folder.
  if (VIRTUAL_SCHEMES.has(doc.scheme)) {
    return doc.query && !isUserMemoryKey(doc.query) ? workspaceFromKey(doc.query) : undefined;
  }
  if (isUserMemoryKey(doc.with({ scheme: 'file' }).toString())) return undefined;
  // An unsaved `.metis/USER.md` ("Open USER.md" of a new file) is about the file it will be.
  const file = doc.scheme === 'untitled' && doc.path.startsWith('/') ? doc.with({ scheme: 'file' }) : doc;
  if (file.scheme !== 'file') return undefined;
  const target = file.toString();
  const inner = [...reported]
    .map((key) => vscode.Uri.parse(key))
    .filter((dir) => holds(dir, file))
    .sort((a, b) => b.path.length - a.path.length)[0];
  if (inner) return { ...workspaceFromKey(inner.toString()), target };
  const folder = vscode.workspace.getWorkspaceFolder(file);
  return folder ? { ...windowFolder(folder), target } : undefined;
}

/** The active editor's workspace, else the only (or first) folder; undefined with no folder. */
export function activeWorkspace(): MemoryWorkspace | undefined {
  const editor = vscode.window.activeTextEditor;
  const fromEditor = editor ? workspaceOf(editor.document.uri) : undefined;
  const first = vscode.workspace.workspaceFolders?.[0];
  return fromEditor ?? (first && windowFolder(first));
}

/** For a command: the active editor's workspace, the only folder, or ask. */
export async function chooseWorkspace(): Promise<MemoryWorkspace | undefined> {
  const folders = vscode.workspace.workspaceFolders ?? [];
  const editor = vscode.window.activeTextEditor;
  const fromEditor = editor ? workspaceOf(editor.document.uri) : undefined;
  if (fromEditor) return fromEditor;
  if (folders.length === 0) {
    void vscode.window.showWarningMessage(
      'Metis Memory works on a folder holding .metis/: open that folder, or one of its .metis/MEMORY.md or .metis/USER.md files.',
    );
    return undefined;
  }
  const picked =
    folders.length === 1
      ? folders[0]
      : await vscode.window.showWorkspaceFolderPick({ placeHolder: 'Which workspace folder’s memory?' });
  return picked && windowFolder(picked);
}

/** For an agent's tool call (no UI): the active editor's workspace or the only folder. */
export function toolWorkspace(): MemoryWorkspace | string {
  const folders = vscode.workspace.workspaceFolders ?? [];
  const editor = vscode.window.activeTextEditor;
  const fromEditor = editor ? workspaceOf(editor.document.uri) : undefined;
  if (fromEditor) return fromEditor;
  if (folders.length === 0) return 'No workspace folder or memory file is open, so there is no .metis/ memory to use.';
  const only = folders.length === 1 ? folders[0] : undefined;
  if (only) return windowFolder(only);
  return (
    `This window has ${folders.length} workspace folders (${folders.map((f) => f.name).join(', ')}) and ` +
    'no file of one of them is active; ask the user to open a file in the folder whose memory to use.'
  );
}

/** The `.metis/` directory of a workspace named by `uri`: a window opened on `.metis/` itself
 * is named by that folder (the server reports it so), the files directly in it. */
export function metisDir(uri: vscode.Uri): vscode.Uri {
  return path.posix.basename(uri.path.replace(/\/+$/, '')) === '.metis' ? uri : vscode.Uri.joinPath(uri, '.metis');
}

export function memoryFileUri(workspace: MemoryWorkspace, file: MemoryFileName): vscode.Uri {
  return vscode.Uri.joinPath(metisDir(workspace.uri), file);
}

/** Whether a document is a memory file, saved or about to be ("Open USER.md" of a new one):
 * worth starting the server for. The user memory is one wherever the platform keeps it
 * (`…/metis-memory/USER.md`); which one it is, is the server's to say. */
export function isMemoryDocument(uri: vscode.Uri): boolean {
  return (
    (uri.scheme === 'file' || uri.scheme === 'untitled') &&
    /\/(?:\.metis\/(?:MEMORY|USER)|metis-memory\/USER)\.md$/.test(uri.path)
  );
}

/**
 * One memory file an action is about: a workspace's MEMORY.md or USER.md, or the user memory
 * (`workspace` undefined). `file` is what the server's commands take; `name` is how a message
 * names it ("MEMORY.md", "your user memory").
 */
export interface MemoryDoc {
  readonly file: MemoryTarget;
  readonly uri: vscode.Uri;
  readonly workspace?: MemoryWorkspace;
  readonly name: string;
}

export const USER_MEMORY_NAME = 'your user memory';

export function workspaceDoc(workspace: MemoryWorkspace, file: MemoryFileName): MemoryDoc {
  return { file, uri: memoryFileUri(workspace, file), workspace, name: file };
}

/** The user memory's USER.md at `fileUri` (the server's `uri` for it). */
export function userMemoryDoc(fileUri: string): MemoryDoc {
  userMemoryReported(fileUri);
  return { file: USER_MEMORY, uri: vscode.Uri.parse(fileUri), name: USER_MEMORY_NAME };
}

/** "Your user memory" / "MEMORY.md": `name` to begin a sentence. */
export function sentenceName(doc: MemoryDoc): string {
  return doc.name.charAt(0).toUpperCase() + doc.name.slice(1);
}

/** `{file, workspace}` of a command about `doc` (the user memory needs no workspace). */
export function docArgs(doc: MemoryDoc): { file: MemoryTarget; workspace?: string } {
  return doc.workspace ? { file: doc.file, workspace: doc.workspace.uri.toString() } : { file: doc.file };
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
