/** The command table: every command the extension contributes, and the client-side commands
 * the server's code actions invoke. Each forwards to the server or opens a view; failures
 * are shown once, with the server's message. */

import * as vscode from 'vscode';
import type { AgentContextView } from './agentContext';
import { connectAgents } from './agents';
import type { Consolidation } from './consolidation';
import { chooseFolder, folderFromKey, memoryUri, readDisk } from './folders';
import { formatBytes } from './format';
import { selectInterpreter } from './interpreterPicker';
import { assemblePrompt, PromptDocuments } from './prompt';
import {
  ClientCommand,
  isMemoryFileName,
  ServerCommand,
  type MemoryFileName,
  type OpenConsolidationArgs,
  type ReplaceEntryPromptArgs,
} from './protocol';
import { MetisCommandError, type MetisServer } from './server';

export function registerCommands(
  context: vscode.ExtensionContext,
  srv: MetisServer,
  log: vscode.LogOutputChannel,
  consolidation: Consolidation,
  agentContext: AgentContextView,
): void {
  const run = (fn: () => Promise<unknown>) => async () => {
    try {
      await fn();
    } catch (err) {
      const text = err instanceof MetisCommandError ? err.message : err instanceof Error ? err.message : String(err);
      log.error(text);
      void vscode.window.showErrorMessage(text);
    }
  };
  const register = (id: string, fn: (...args: never[]) => Promise<unknown>) =>
    context.subscriptions.push(
      vscode.commands.registerCommand(id, async (...args: unknown[]) => run(() => fn(...(args as never[])))()),
    );

  register('metis.open.memory', () => openMemoryFile('MEMORY.md'));
  register('metis.open.user', () => openMemoryFile('USER.md'));
  register('metis.addEntry', () => addEntry(srv));
  register('metis.consolidate.memory', async () => {
    const folder = await chooseFolder();
    if (folder) await consolidation.open(folder, 'MEMORY.md');
  });
  register('metis.consolidate.user', async () => {
    const folder = await chooseFolder();
    if (folder) await consolidation.open(folder, 'USER.md');
  });
  register(ClientCommand.openConsolidation, async (args?: OpenConsolidationArgs) => {
    const file = isMemoryFileName(args?.file) ? args.file : await pickFile('Consolidate which file?');
    if (file) await consolidation.openFor(args?.workspace, file, chooseFolder);
  });
  register('metis.applyConsolidation', (uri?: vscode.Uri) => consolidation.apply(uri));
  register('metis.draftWithModel', () => consolidation.draftWithModel());
  register(ClientCommand.replaceEntryPrompt, (args?: ReplaceEntryPromptArgs) => replaceEntry(srv, args));
  register('metis.showPrompt', async () => {
    const folder = await chooseFolder();
    if (!folder) return;
    const doc = await vscode.workspace.openTextDocument(PromptDocuments.uriFor(folder));
    await vscode.window.showTextDocument(doc, { preview: false });
  });
  register('metis.copyPrompt', async () => {
    const folder = await chooseFolder();
    if (!folder) return;
    const text = await assemblePrompt(srv, folder.uri);
    await vscode.env.clipboard.writeText(text);
    void vscode.window.showInformationMessage(
      `Copied the assembled prompt of ${folder.name} (${formatBytes(new TextEncoder().encode(text).length)}).`,
    );
  });
  register('metis.refreshAgentContext', () => {
    agentContext.refresh();
    return Promise.resolve();
  });
  register('metis.restartServer', async () => {
    log.info('restart requested');
    if (await srv.restart()) void vscode.window.setStatusBarMessage('Metis Memory: server restarted', 3000);
  });
  register('metis.selectInterpreter', () => selectInterpreter());
  register('metis.showLog', () => {
    log.show();
    return Promise.resolve();
  });
  register('metis.showActions', () => showActions());
  register('metis.setUpAgents', async () => {
    const folder = await chooseFolder();
    if (folder) await connectAgents(srv, folder, log);
  });
}

async function pickFile(placeHolder: string): Promise<MemoryFileName | undefined> {
  const picked = await vscode.window.showQuickPick(
    [
      { label: 'MEMORY.md', description: 'facts about this workspace' },
      { label: 'USER.md', description: 'facts about the user' },
    ],
    { placeHolder },
  );
  return picked && isMemoryFileName(picked.label) ? picked.label : undefined;
}

/** Open a memory file; a missing one opens as an unsaved editor, so `.metis/` appears on save. */
async function openMemoryFile(file: MemoryFileName): Promise<void> {
  const folder = await chooseFolder();
  if (!folder) return;
  const uri = memoryUri(folder, file);
  const exists = (await readDisk(uri)) !== undefined;
  const target = exists ? uri : uri.with({ scheme: 'untitled' });
  const doc = await vscode.workspace.openTextDocument(target);
  await vscode.window.showTextDocument(doc, { preview: false });
}

async function addEntry(srv: MetisServer): Promise<void> {
  const folder = await chooseFolder();
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
    workspace: folder.uri.toString(),
  });
  // Over the soft cap, the server's eviction notification says so (with "Consolidate…").
  if (!result.over_soft_cap) void vscode.window.showInformationMessage(result.message);
}

async function replaceEntry(srv: MetisServer, args?: ReplaceEntryPromptArgs): Promise<void> {
  const folder = folderFromKey(args?.workspace) ?? (await chooseFolder());
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
    workspace: folder.uri.toString(),
  });
  if (!result.over_soft_cap) void vscode.window.showInformationMessage(result.message);
}

async function showActions(): Promise<void> {
  const actions: { label: string; command: string }[] = [
    { label: '$(go-to-file) Open MEMORY.md', command: 'metis.open.memory' },
    { label: '$(go-to-file) Open USER.md', command: 'metis.open.user' },
    { label: '$(add) Add Entry…', command: 'metis.addEntry' },
    { label: '$(fold) Consolidate MEMORY.md…', command: 'metis.consolidate.memory' },
    { label: '$(fold) Consolidate USER.md…', command: 'metis.consolidate.user' },
    { label: '$(preview) Show Assembled Prompt', command: 'metis.showPrompt' },
    { label: '$(copy) Copy Assembled Prompt', command: 'metis.copyPrompt' },
    { label: '$(debug-restart) Restart Server', command: 'metis.restartServer' },
    { label: '$(symbol-namespace) Select Python Interpreter…', command: 'metis.selectInterpreter' },
    { label: '$(output) Show Log', command: 'metis.showLog' },
  ];
  const picked = await vscode.window.showQuickPick(actions, { placeHolder: 'Metis Memory' });
  if (picked) await vscode.commands.executeCommand(picked.command);
}
