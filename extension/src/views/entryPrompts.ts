/** The small prompts behind Open, Add Entry… and Replace entry…: pick a file, ask for the
 * text, and let the server write it (its message is what the user sees). */

import * as vscode from 'vscode';
import { chooseWorkspace, memoryFileUri, readDisk, workspaceFromKey, type MemoryWorkspace } from '../folders';
import { inertLinks } from '../plainText';
import { offerToCreate } from './firstRun';
import { ownWrite } from './notifications';
import {
  ClientCommand,
  isMemoryFileName,
  ServerCommand,
  type MemoryFileName,
  type ReplaceEntryPromptArgs,
  type WriteResult,
} from '../protocol';
import type { MetisServer } from '../server/server';

export async function pickFile(placeHolder: string): Promise<MemoryFileName | undefined> {
  const picked = await vscode.window.showQuickPick(
    [
      { label: 'MEMORY.md', description: 'facts about this workspace' },
      { label: 'USER.md', description: 'facts about the user' },
    ],
    { placeHolder },
  );
  return picked && isMemoryFileName(picked.label) ? picked.label : undefined;
}

/** Open a memory file; a missing one is offered to be created from the template (firstRun.ts). */
export async function openMemoryFile(file: MemoryFileName): Promise<void> {
  const folder = await chooseWorkspace();
  if (!folder) return;
  const uri = memoryFileUri(folder, file);
  if ((await readDisk(uri)) === undefined) return offerToCreate(folder, file);
  const doc = await vscode.workspace.openTextDocument(uri);
  await vscode.window.showTextDocument(doc, { preview: false });
}

/** A typed fact as the memory files hold their entries, a Markdown list item: "- " goes before
 * text that does not already start with a list marker (-, *, + or 1. / 1) and a space). The
 * agents' tools add an entry as given (the spec); this is the Add Entry prompt's promise. */
export function asListItem(text: string): string {
  const fact = text.trim();
  return /^(?:[-*+]|\d{1,9}[.)])(?:\s|$)/.test(fact) ? fact : `- ${fact}`;
}

export async function addEntry(srv: MetisServer): Promise<void> {
  const folder = await chooseWorkspace();
  if (!folder) return;
  const file = await pickFile('Add an entry to which file?');
  if (!file) return;
  const entry = await vscode.window.showInputBox({
    title: `Add an entry to ${file}`,
    prompt: 'One short, specific fact. It is added as a "- " list item unless it starts with one.',
    validateInput: (v) => (v.trim() === '' ? 'An entry cannot be empty.' : undefined),
  });
  if (entry === undefined) return;
  const result = await ownWrite(file, () =>
    srv.command(ServerCommand.memoryAdd, { file, entry: asListItem(entry), workspace: folder.target }),
  );
  showWritten(folder, file, result);
}

/** One message for a write this window made: its result, and over the soft cap the way to
 * shorten the file (the server's eviction notification for it is not shown: `ownWrite`). */
export function showWritten(folder: MemoryWorkspace, file: MemoryFileName, result: WriteResult): void {
  const text = inertLinks(result.person_text ?? result.message); // it may quote an entry
  if (!result.over_soft_cap) {
    void vscode.window.showInformationMessage(text);
    return;
  }
  const consolidate = 'Consolidate…';
  void vscode.window.showWarningMessage(text, consolidate).then((choice) => {
    if (choice !== consolidate) return;
    void vscode.commands.executeCommand(ClientCommand.openConsolidation, { file, workspace: folder.uri.toString() });
  });
}

export async function replaceEntry(srv: MetisServer, args?: ReplaceEntryPromptArgs): Promise<void> {
  const folder = args?.workspace ? workspaceFromKey(args.workspace) : await chooseWorkspace();
  if (!folder) return;
  const file = isMemoryFileName(args?.file) ? args.file : await pickFile('Replace text in which file?');
  if (!file) return;
  const old =
    typeof args?.old === 'string'
      ? args.old
      : await vscode.window.showInputBox({
          title: `Text to replace in ${file}`,
          prompt: 'It must occur exactly once.',
          validateInput: (v) => (v === '' ? 'Give the text to replace, as it is in the file.' : undefined),
        });
  if (old === undefined) return;
  const replacement = await vscode.window.showInputBox({
    title: `Replace entry in ${file}`,
    prompt: 'The new text (empty removes the entry).',
    value: old,
  });
  if (replacement === undefined) return;
  const result = await ownWrite(file, () =>
    srv.command(ServerCommand.memoryReplace, { file, old, new: replacement, workspace: folder.target }),
  );
  showWritten(folder, file, result);
}
