/** What the server pushes (`metis/*` notifications), rendered: the status bar, the proposal's
 * status, the prompt view, the API's event, and one eviction message per file at a time. */

import * as vscode from 'vscode';
import { toUpdatedEvent, type MemoryUpdatedEvent } from '../api';
import type { Consolidation } from './consolidation';
import { workspaceFromKey } from '../folders';
import { ClientCommand, USER_MEMORY } from '../protocol';
import { formatBytes } from './format';
import type { PromptDocuments } from './prompt';
import {
  ServerNotification,
  type MemoryEvictionParams,
  type MemoryUpdatedParams,
  type ProposalUsageParams,
  type UsageChangedParams,
} from '../protocol';
import type { MetisServer } from '../server/server';
import type { UsageStatusBar } from './statusBar';

export interface Views {
  log: vscode.LogOutputChannel;
  statusBar: UsageStatusBar;
  prompts: PromptDocuments;
  consolidation: Consolidation;
  updated: vscode.EventEmitter<MemoryUpdatedEvent>;
}

/** Writes this window is making and will report itself (Add Entry…, Replace Entry…, Apply), by
 * file: their result message says what an eviction would, so the server's
 * `metis/memoryEviction` for them (sent before the command's answer) shows nothing more. By
 * file name alone: the folder a command names can be a window folder above the memory's, so
 * its URI need not be the one the server reports (another folder's eviction of the same file
 * in those few milliseconds is not shown either; the status bar still is). */
const ownWrites = new Map<string, number>();

/** Run `write`, a write of `file` whose outcome the caller shows itself. */
export async function ownWrite<T>(file: string, write: () => Promise<T>): Promise<T> {
  const key = file;
  ownWrites.set(key, (ownWrites.get(key) ?? 0) + 1);
  try {
    return await write();
  } finally {
    const left = (ownWrites.get(key) ?? 1) - 1;
    if (left > 0) ownWrites.set(key, left);
    else ownWrites.delete(key);
  }
}

export function handleNotifications(srv: MetisServer, views: Views): void {
  const { log, statusBar, prompts, consolidation, updated } = views;
  srv.onNotification(ServerNotification.usageChanged, (params) => {
    const p = params as UsageChangedParams;
    statusBar.update(p.workspace, p.usage);
    prompts.refresh(p.workspace);
  });
  srv.onNotification(ServerNotification.proposalUsage, (params) => {
    consolidation.proposalUsage(params as ProposalUsageParams);
  });
  srv.onNotification(ServerNotification.memoryUpdated, (params) => {
    const p = params as MemoryUpdatedParams;
    const what = p.scope === 'user' ? 'the user memory' : p.file;
    log.info(`${what}: ${p.operation} ${formatBytes(p.before_size_bytes)} -> ${formatBytes(p.after_size_bytes)}`);
    // (The user memory's write brings every workspace's usage again, which refreshes each prompt.)
    if (p.scope !== 'user') prompts.refresh(p.workspace);
    updated.fire(toUpdatedEvent(p, workspaceFromKey(p.workspace).uri));
  });
  // One eviction message per file at a time: an agent's burst of writes must not stack toasts.
  const evictionShown = new Set<string>();
  srv.onNotification(ServerNotification.memoryEviction, (params) => {
    const p = params as MemoryEvictionParams;
    const user = p.scope === 'user';
    const key = `${p.workspace}|${p.file}`;
    if (ownWrites.has(user ? USER_MEMORY : p.file)) return; // its writer says so itself
    if (evictionShown.has(key)) return;
    evictionShown.add(key);
    const folder = workspaceFromKey(p.workspace);
    const cap = user ? statusBar.userMemorySoftCap() : statusBar.get(folder.uri)?.[p.file].soft_cap;
    const capText = cap !== undefined ? `, over its ${formatBytes(cap)} soft cap` : ', over its soft cap';
    const consolidate = 'Consolidate…';
    const what = user ? 'Your user memory' : `${p.file} in ${folder.name}`;
    void vscode.window
      .showWarningMessage(
        `${what} is now ${formatBytes(p.size_after_bytes)}${capText}: ` +
          'consolidate it so memory stays sharp (writes past the hard cap will be refused).',
        consolidate,
      )
      .then((choice) => {
        evictionShown.delete(key);
        if (choice !== consolidate) return;
        const args = user ? { file: USER_MEMORY } : { file: p.file, workspace: p.workspace };
        void vscode.commands.executeCommand(ClientCommand.openConsolidation, args);
      });
  });
}
