/** The small prompts behind Open, Add Entry… and Replace entry…: pick a file (a workspace's two,
 * or the user memory), ask for the text, and let the server write it (its message is what the
 * user sees). */

import * as vscode from 'vscode';
import {
  activeWorkspace,
  chooseWorkspace,
  isUserMemoryKey,
  readDisk,
  workspaceDoc,
  workspaceFromKey,
  type MemoryDoc,
} from '../folders';
import { inertLinks } from '../plainText';
import { offerToCreate } from './firstRun';
import { ownWrite } from './notifications';
import { firstEntryPrompt, locateUserMemory, openUserMemory, showDoc, userMemory } from './userMemory';
import {
  ClientCommand,
  isMemoryTarget,
  ServerCommand,
  USER_MEMORY,
  type MemoryFileName,
  type MemoryTarget,
  type ReplaceEntryPromptArgs,
  type UserMemoryLocation,
  type WriteResult,
} from '../protocol';
import type { MetisServer } from '../server/server';

/** The three memory files, each with what it is for in one line. */
export async function pickTarget(placeHolder: string): Promise<MemoryTarget | undefined> {
  const here = activeWorkspace()?.name;
  const items: (vscode.QuickPickItem & { target: MemoryTarget })[] = [
    { label: 'MEMORY.md', description: `facts about ${here ?? 'this workspace'}`, target: 'MEMORY.md' },
    { label: 'USER.md', description: `facts about you, in ${here ?? 'this workspace'} only`, target: 'USER.md' },
    { label: 'Your user memory', description: 'facts about you, in every workspace', target: USER_MEMORY },
  ];
  const picked = await vscode.window.showQuickPick(items, { placeHolder });
  return picked?.target;
}

/** The memory file a command names (`file`, `workspace`: a code action's), else the one asked
 * for; undefined when the person cancelled. */
export async function docFor(
  srv: MetisServer,
  placeHolder: string,
  file?: unknown,
  workspace?: string,
): Promise<MemoryDoc | undefined> {
  const target = isMemoryTarget(file) ? file : await pickTarget(placeHolder);
  if (target === undefined) return undefined;
  if (target === USER_MEMORY || (workspace !== undefined && isUserMemoryKey(workspace))) return userMemory(srv);
  const folder = workspace !== undefined ? workspaceFromKey(workspace) : await chooseWorkspace();
  return folder && workspaceDoc(folder, target);
}

/** Open a memory file; a missing one is offered to be created from the template (firstRun.ts). */
export async function openMemoryFile(file: MemoryFileName): Promise<void> {
  const folder = await chooseWorkspace();
  if (!folder) return;
  const doc = workspaceDoc(folder, file);
  if ((await readDisk(doc.uri)) === undefined) return offerToCreate(folder, file);
  await showDoc(doc);
}

/** **Metis: Open User Memory**: the file, or (none yet) its first entry, then the file. */
export function openUserMemoryFile(srv: MetisServer): Promise<void> {
  return openUserMemory(srv, async (doc, where) => (await askAndAdd(srv, doc, where)) !== undefined);
}

/** A typed fact as the memory files hold their entries, a Markdown list item: "- " goes before
 * text that does not already start with a list marker (-, *, + or 1. / 1) and a space). The
 * agents' tools add an entry as given (the spec); this is the Add Entry prompt's promise. */
export function asListItem(text: string): string {
  const fact = text.trim();
  return /^(?:[-*+]|\d{1,9}[.)])(?:\s|$)/.test(fact) ? fact : `- ${fact}`;
}

/**
 * **Metis: Add Entry…**: which file (this workspace's two, or the user memory; in a window with
 * no workspace, the user memory alone), then the fact.
 */
export async function addEntry(srv: MetisServer): Promise<void> {
  const noWorkspace = !activeWorkspace();
  const doc = noWorkspace ? await userMemory(srv) : await docFor(srv, 'Add an entry to which file?');
  if (!doc) return;
  const where = doc.file === USER_MEMORY ? await locateUserMemory(srv) : undefined;
  await askAndAdd(srv, doc, where);
}

/** Ask for one fact and have the server add it to `doc` (the user memory's first entry says
 * where it goes); the result shown as the server words it. */
async function askAndAdd(
  srv: MetisServer,
  doc: MemoryDoc,
  where?: UserMemoryLocation,
): Promise<WriteResult | undefined> {
  const options: vscode.InputBoxOptions =
    where && !where.exists
      ? firstEntryPrompt(doc, where)
      : {
          title: `Add an entry to ${doc.name}`,
          prompt: 'One short, specific fact. It is added as a "- " list item unless it starts with one.',
        };
  const entry = await vscode.window.showInputBox({
    ...options,
    validateInput: (v) => (v.trim() === '' ? 'An entry cannot be empty.' : undefined),
  });
  if (entry === undefined) return undefined;
  // The active document stands for the workspace: the server resolves it (folders.ts).
  const workspace = doc.workspace?.target;
  const result = await ownWrite(doc.file, () =>
    srv.command(ServerCommand.memoryAdd, {
      file: doc.file,
      entry: asListItem(entry),
      ...(workspace !== undefined ? { workspace } : {}),
    }),
  );
  showWritten(doc, result);
  return result;
}

/** One message for a write this window made: its result, and over the soft cap the way to
 * shorten the file (the server's eviction notification for it is not shown: `ownWrite`). */
export function showWritten(doc: MemoryDoc, result: WriteResult): void {
  const text = inertLinks(result.person_text ?? result.message); // it may quote an entry
  if (!result.over_soft_cap) {
    void vscode.window.showInformationMessage(text);
    return;
  }
  const consolidate = 'Consolidate…';
  void vscode.window.showWarningMessage(text, consolidate).then((choice) => {
    if (choice !== consolidate) return;
    void vscode.commands.executeCommand(ClientCommand.openConsolidation, {
      file: doc.file,
      ...(doc.workspace ? { workspace: doc.workspace.uri.toString() } : {}),
    });
  });
}

export async function replaceEntry(srv: MetisServer, args?: ReplaceEntryPromptArgs): Promise<void> {
  const doc = await docFor(srv, 'Replace text in which file?', args?.file, args?.workspace);
  if (!doc) return;
  const old =
    typeof args?.old === 'string'
      ? args.old
      : await vscode.window.showInputBox({
          title: `Text to replace in ${doc.name}`,
          prompt: 'It must occur exactly once.',
          validateInput: (v) => (v === '' ? 'Give the text to replace, as it is in the file.' : undefined),
        });
  if (old === undefined) return;
  const replacement = await vscode.window.showInputBox({
    title: `Replace entry in ${doc.name}`,
    prompt: 'The new text (empty removes the entry).',
    value: old,
  });
  if (replacement === undefined) return;
  const workspace = doc.workspace?.target;
  const result = await ownWrite(doc.file, () =>
    srv.command(ServerCommand.memoryReplace, {
      file: doc.file,
      old,
      new: replacement,
      ...(workspace !== undefined ? { workspace } : {}),
    }),
  );
  showWritten(doc, result);
}
