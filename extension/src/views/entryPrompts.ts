/** The small prompts behind Open, Add Entry… and Replace entry…: pick a file, ask for the
 * text, and let the server write it (its message is what the user sees). */

import * as vscode from 'vscode';
import { chooseWorkspace, memoryFileUri, readDisk, workspaceFromKey } from '../folders';
import { offerToCreate } from './firstRun';
import { isMemoryFileName, ServerCommand, type MemoryFileName, type ReplaceEntryPromptArgs } from '../protocol';
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

export async function addEntry(srv: MetisServer): Promise<void> {
  const folder = await chooseWorkspace();
  if (!folder) return;
  const file = await pickFile('Add an entry to which file?');
  if (!file) return;
  const entry = await vscode.window.showInputBox({
    title: `Add an entry to ${file}`,
    prompt: 'One short, specific fact (a "- " list item is added when you leave it out).',
    validateInput: (v) => (v.trim() === '' ? 'An entry cannot be empty.' : undefined),
  });
  if (entry === undefined) return;
  const result = await srv.command(ServerCommand.memoryAdd, {
    file,
    entry,
    workspace: folder.target,
  });
  // Over the soft cap, the server's eviction notification says so (with "Consolidate…").
  if (!result.over_soft_cap) void vscode.window.showInformationMessage(result.message);
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
        });
  if (old === undefined) return;
  const replacement = await vscode.window.showInputBox({
    title: `Replace entry in ${file}`,
    prompt: 'The new text (empty removes the entry).',
    value: old,
  });
  if (replacement === undefined) return;
  const result = await srv.command(ServerCommand.memoryReplace, {
    file,
    old,
    new: replacement,
    workspace: folder.target,
  });
  if (!result.over_soft_cap) void vscode.window.showInformationMessage(result.message);
}
