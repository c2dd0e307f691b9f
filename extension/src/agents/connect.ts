/**
 * Letting agent hosts see the memory: the one-time offer for each folder that has `.metis/`,
 * and **Metis: Connect Agents…**. The server writes the files (`metis.connectAgents`, the
 * planner behind `metis-memory init`); this only asks which hosts, and reports.
 */

import * as vscode from 'vscode';
import { metisDir, workspaceFromKey, type MemoryWorkspace } from '../folders';
import { ServerCommand, type ConnectResult } from '../protocol';
import type { MetisServer } from '../server/server';

/** workspaceState key: folder URI -> 'done' | 'never'. */
const OFFERED = 'metis.agentSetup';
const SET_UP = 'Set Up';
const NOT_NOW = 'Not Now';
const NEVER = 'Never';

type Answers = Record<string, 'done' | 'never'>;

/** Ask which hosts to connect for `folder`, then have the server write their files. */
export async function connectAgents(
  srv: MetisServer,
  folder: MemoryWorkspace,
  log: vscode.LogOutputChannel,
): Promise<ConnectResult | undefined> {
  const workspace = folder.target;
  const hosts = await srv.command(ServerCommand.agentHosts, { workspace });
  const picked = await vscode.window.showQuickPick(
    hosts.map((h) => ({ label: h.title, description: h.files.join(', '), picked: true, name: h.name })),
    {
      canPickMany: true,
      title: `Connect agents to the memory of ${folder.name}`,
      placeHolder: 'Agents whose configuration to write in this folder (hooks, MCP server, instructions)',
    },
  );
  if (!picked || picked.length === 0) return undefined;
  const result = await srv.command(ServerCommand.connectAgents, {
    hosts: picked.map((p) => p.name),
    // This extension registers the MCP server with VS Code itself.
    editorProvidesMcp: true,
    workspace,
  });
  log.info(`Connect agents (${folder.name}):\n${result.report}`);
  const written = result.files.filter((f) => f.change !== 'unchanged').map((f) => f.path);
  const names = picked.map((p) => p.label).join(', ');
  const files = `${written.length} file${written.length === 1 ? '' : 's'}`;
  const message = written.length
    ? `Metis Memory: connected ${names} in ${folder.name} (${files} written). Each agent's remaining step is in the log.`
    : `Metis Memory: the agents of ${folder.name} were already connected; nothing changed.`;
  void vscode.window.showInformationMessage(message, 'Show Log').then((choice) => {
    if (choice) log.show();
  });
  return result;
}

/** Once per folder with `.metis/` (and a trusted workspace): offer to connect its agents. */
export async function offerAgentSetup(
  context: vscode.ExtensionContext,
  srv: MetisServer,
  log: vscode.LogOutputChannel,
): Promise<void> {
  if (!vscode.workspace.isTrusted) return;
  if (!vscode.workspace.getConfiguration('metis').get<boolean>('offerAgentSetup', true)) return;
  for (const folder of vscode.workspace.workspaceFolders ?? []) {
    const answers = context.workspaceState.get<Answers>(OFFERED, {});
    if (answers[folder.uri.toString()] || !(await hasMetis(folder))) continue;
    const choice = await vscode.window.showInformationMessage(
      `Let agents in ${folder.name} see its memory on every request? ` +
        'Set Up writes hook, MCP and instruction files for the agents you pick.',
      SET_UP,
      NOT_NOW,
      NEVER,
    );
    const workspace = workspaceFromKey(folder.uri.toString());
    if (choice === SET_UP && (await connectAgents(srv, workspace, log))) await remember(context, folder, 'done');
    else if (choice === NEVER) await remember(context, folder, 'never');
  }
}

async function remember(context: vscode.ExtensionContext, folder: vscode.WorkspaceFolder, answer: 'done' | 'never') {
  const answers = context.workspaceState.get<Answers>(OFFERED, {});
  await context.workspaceState.update(OFFERED, { ...answers, [folder.uri.toString()]: answer });
}

async function hasMetis(folder: vscode.WorkspaceFolder): Promise<boolean> {
  try {
    const stat = await vscode.workspace.fs.stat(metisDir(folder.uri));
    return (stat.type & vscode.FileType.Directory) !== 0;
  } catch {
    return false;
  }
}
