/**
 * The user memory: one USER.md beside no workspace (`$XDG_CONFIG_HOME/metis-memory/USER.md` on
 * Linux), read in every workspace. Where it is, and whether it is there, is the server's to
 * say (`metis.openUserMemory`); nothing here writes it. **Metis: Open User Memory** opens it,
 * or, before anything wrote it, asks for a first entry, which the server's store writes (its
 * folder and file made the user's alone): a file the editor saved would be made by the editor,
 * with the editor's permissions.
 */

import * as vscode from 'vscode';
import { sentenceName, userMemoryDoc, type MemoryDoc } from '../folders';
import { ServerCommand, type UserMemoryLocation } from '../protocol';
import { MetisCommandError } from '../server/commandError';
import type { MetisServer } from '../server/server';

/** Where the user memory is, as the server finds it from its environment. */
export async function locateUserMemory(srv: MetisServer): Promise<UserMemoryLocation> {
  const where = await srv.command(ServerCommand.openUserMemory, {});
  userMemoryDoc(where.uri); // remembered: a document there is no workspace's
  return where;
}

/** The user memory as a file an action is about; undefined (and said why) when it is there
 * but may not be used (another user's folder, not a regular file). */
export async function userMemory(srv: MetisServer): Promise<MemoryDoc | undefined> {
  const where = await locateUserMemory(srv);
  if (where.error !== undefined) throw new MetisCommandError(where.error, 'user_memory_unusable', where.error);
  return userMemoryDoc(where.uri);
}

/**
 * Open the user memory. Before anything wrote it, ask for its first entry instead of opening
 * an empty editor: the server writes it (`addFirst`), and then it opens.
 */
export async function openUserMemory(
  srv: MetisServer,
  addFirst: (doc: MemoryDoc, where: UserMemoryLocation) => Promise<boolean>,
): Promise<void> {
  const where = await locateUserMemory(srv);
  if (where.error !== undefined) throw new MetisCommandError(where.error, 'user_memory_unusable', where.error);
  const doc = userMemoryDoc(where.uri);
  if (!where.exists && !(await addFirst(doc, where))) return;
  await showDoc(doc);
}

export async function showDoc(doc: MemoryDoc): Promise<void> {
  const text = await vscode.workspace.openTextDocument(doc.uri);
  await vscode.window.showTextDocument(text, { preview: false });
}

/** The input box's words for a first entry of the user memory (nothing there yet). */
export function firstEntryPrompt(doc: MemoryDoc, where: UserMemoryLocation): vscode.InputBoxOptions {
  return {
    title: `${sentenceName(doc)} is empty: add its first entry`,
    prompt:
      `One fact about you that holds in every workspace, such as how you like answers. It is ` +
      `written to ${where.path}, which your agents read in every workspace, and opened.`,
    placeHolder: 'e.g. Answer in British English; I review diffs in unified form',
  };
}
