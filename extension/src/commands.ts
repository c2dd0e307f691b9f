/** The command table: every command the extension contributes, and the client-side commands
 * the server's code actions invoke. Each forwards to the server or opens a view; failures
 * are shown once, with the server's message. */

import * as vscode from 'vscode';
import type { AgentContextView } from './views/agentContext';
import { connectAgents } from './agents/connect';
import type { Consolidation } from './views/consolidation';
import type { HistoryNode, HistoryView } from './views/history';
import type { ReviewInbox, StagedTarget } from './views/reviewInbox';
import type { HostMemoryImport } from './views/importMemory';
import { chooseWorkspace, workspaceDoc } from './folders';
import { formatBytes, utf8Length } from './views/format';
import { addEntry, docFor, openMemoryFile, openUserMemoryFile, replaceEntry } from './views/entryPrompts';
import { userMemory } from './views/userMemory';
import { selectInterpreter } from './server/interpreterPicker';
import { assemblePrompt, showPrompt } from './views/prompt';
import { ClientCommand, type OpenConsolidationArgs, type ReplaceEntryPromptArgs } from './protocol';
import { textForPeople } from './server/commandError';
import type { MetisServer } from './server/server';

export function registerCommands(
  context: vscode.ExtensionContext,
  srv: MetisServer,
  log: vscode.LogOutputChannel,
  consolidation: Consolidation,
  agentContext: AgentContextView,
  history: HistoryView,
  inbox: ReviewInbox,
  imports: HostMemoryImport,
): void {
  const run = (fn: () => Promise<unknown>) => async () => {
    try {
      await fn();
    } catch (err) {
      // The log keeps the server's own text; a person reads the words it sent for people.
      log.error(err instanceof Error ? err.message : String(err));
      void vscode.window.showErrorMessage(textForPeople(err));
    }
  };
  const register = (id: string, fn: (...args: never[]) => Promise<unknown>) =>
    context.subscriptions.push(
      vscode.commands.registerCommand(id, async (...args: unknown[]) => run(() => fn(...(args as never[])))()),
    );

  register('metis.open.memory', () => openMemoryFile('MEMORY.md'));
  register('metis.open.user', () => openMemoryFile('USER.md'));
  register('metis.open.userMemory', () => openUserMemoryFile(srv));
  register('metis.addEntry', () => addEntry(srv));
  register('metis.consolidate.memory', async () => {
    const folder = await chooseWorkspace();
    if (folder) await consolidation.open(workspaceDoc(folder, 'MEMORY.md'));
  });
  register('metis.consolidate.user', async () => {
    const folder = await chooseWorkspace();
    if (folder) await consolidation.open(workspaceDoc(folder, 'USER.md'));
  });
  register('metis.consolidate.userMemory', async () => {
    const doc = await userMemory(srv);
    if (doc) await consolidation.open(doc);
  });
  // From the server's code actions (and the messages over a soft cap): a workspace's file, or
  // the user memory (`file` "user-memory", or its folder as `workspace`).
  register(ClientCommand.openConsolidation, async (args?: OpenConsolidationArgs) => {
    const doc = await docFor(srv, 'Consolidate which file?', args?.file, args?.workspace);
    if (doc) await consolidation.open(doc, args?.select);
  });
  register('metis.applyConsolidation', (uri?: vscode.Uri) => consolidation.apply(uri));
  register('metis.draftWithModel', (uri?: vscode.Uri) => consolidation.draftWithModel(uri));
  register(ClientCommand.replaceEntryPrompt, (args?: ReplaceEntryPromptArgs) => replaceEntry(srv, args));
  register('metis.showPrompt', (from?: vscode.Uri) => showPrompt(srv, context.globalState, from));
  register('metis.copyPrompt', async () => {
    const folder = await chooseWorkspace();
    if (!folder) return;
    const text = await assemblePrompt(srv, folder.target);
    await vscode.env.clipboard.writeText(text);
    void vscode.window.showInformationMessage(
      `Copied the assembled prompt of ${folder.name} (${formatBytes(utf8Length(text))}).`,
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
  register('metis.showHistory', () => history.reveal());
  register('metis.history.refresh', () => {
    history.refresh();
    return Promise.resolve();
  });
  register('metis.history.open', (target?: HistoryNode | vscode.Uri) => history.open(target));
  register('metis.history.undo', (target?: HistoryNode | vscode.Uri) => history.undo(target));
  register('metis.history.restore', (target?: HistoryNode | vscode.Uri) => history.restore(target));
  register('metis.history.putBack', (target?: HistoryNode) => history.putBack(target));
  register('metis.review.show', () => inbox.show());
  register('metis.review.open', (target?: StagedTarget | HistoryNode) => inbox.open(stagedTarget(target)));
  register('metis.review.accept', (target?: StagedTarget | HistoryNode | vscode.Uri) =>
    inbox.accept(target instanceof vscode.Uri ? target : stagedTarget(target)),
  );
  register('metis.review.reject', (target?: StagedTarget | HistoryNode | vscode.Uri) =>
    inbox.reject(target instanceof vscode.Uri ? target : stagedTarget(target)),
  );
  register('metis.review.on', () => inbox.setReview(true));
  register('metis.review.off', () => inbox.setReview(false));
  register('metis.importAgentMemory', () => imports.run());
  register('metis.setUpAgents', async () => {
    const folder = await chooseWorkspace();
    if (folder) await connectAgents(srv, folder, log);
  });
}

/** A staged change named by a tree item (its context menu) or a command's argument. */
function stagedTarget(target?: StagedTarget | HistoryNode): StagedTarget | undefined {
  if (!target) return undefined;
  if ('kind' in target)
    return target.kind === 'staged' ? { change: target.change, workspace: target.workspace } : undefined;
  return target;
}

async function showActions(): Promise<void> {
  const actions: { label: string; command: string }[] = [
    { label: '$(go-to-file) Open MEMORY.md', command: 'metis.open.memory' },
    { label: '$(go-to-file) Open USER.md', command: 'metis.open.user' },
    { label: '$(account) Open User Memory', command: 'metis.open.userMemory' },
    { label: '$(add) Add Entry…', command: 'metis.addEntry' },
    { label: '$(fold) Consolidate MEMORY.md…', command: 'metis.consolidate.memory' },
    { label: '$(fold) Consolidate USER.md…', command: 'metis.consolidate.user' },
    { label: '$(fold) Consolidate User Memory…', command: 'metis.consolidate.userMemory' },
    { label: '$(plug) Connect Agents…', command: 'metis.setUpAgents' },
    { label: '$(cloud-download) Import Agent Memory…', command: 'metis.importAgentMemory' },
    { label: '$(history) Show Memory History', command: 'metis.showHistory' },
    { label: '$(inbox) Show Changes to Review', command: 'metis.review.show' },
    { label: '$(preview) Show Assembled Prompt…', command: 'metis.showPrompt' },
    { label: '$(copy) Copy Assembled Prompt', command: 'metis.copyPrompt' },
    { label: '$(debug-restart) Restart Server', command: 'metis.restartServer' },
    { label: '$(symbol-namespace) Select Python Interpreter…', command: 'metis.selectInterpreter' },
    { label: '$(output) Show Log', command: 'metis.showLog' },
  ];
  const picked = await vscode.window.showQuickPick(actions, { placeHolder: 'Metis Memory' });
  if (picked) await vscode.commands.executeCommand(picked.command);
}
