/**
 * Letting agent hosts see the memory: the one-time offer for each folder that has `.metis/`,
 * and **Metis: Connect Agents…**. The server finds the hosts in use, plans and writes the files
 * (`metis.agentHosts`, `metis.connectAgents`: the planner behind `metis-memory init`); this
 * asks which hosts, shows every change in a diff before anything is written, writes only on
 * **Write Files** (with the plan's digest, so a file changed meanwhile is refused), and then
 * offers the `metis-memory` launcher when this machine has no `metis-memory` on PATH.
 */

import * as vscode from 'vscode';
import { metisDir, workspaceFromKey, type MemoryWorkspace } from '../folders';
import { ServerCommand, type ConnectFile, type ConnectResult } from '../protocol';
import type { MetisServer } from '../server/server';
import { fileList } from '../views/format';
import { keepLauncherCurrent, offerLauncher, report } from './launcher';

/** workspaceState key: folder URI -> 'done' | 'never'. */
const OFFERED = 'metis.agentSetup';
const SET_UP = 'Set Up';
const NOT_NOW = 'Not Now';
const NEVER = 'Never';
export const WRITE_FILES = 'Write Files';
/** The read-only documents the preview diffs: `metis-connect:/<path>?<preview>&<before|after>` (one
 * path for both sides: the multi-file diff marks a file whose two sides differ in path renamed). */
const SCHEME = 'metis-connect';

type Answers = Record<string, 'done' | 'never'>;

/** Ask which hosts to connect for `folder`, show the changes, and write them if asked to. */
export async function connectAgents(
  srv: MetisServer,
  folder: MemoryWorkspace,
  log: vscode.LogOutputChannel,
): Promise<ConnectResult | undefined> {
  const workspace = folder.target;
  const hosts = await srv.command(ServerCommand.agentHosts, { workspace, editorProvidesMcp: true });
  const picked = await vscode.window.showQuickPick(
    hosts.map((h) => ({
      label: h.title,
      description: fileList(h.files),
      detail: h.detected.length ? `Found: ${h.detected.join(', ')}` : 'Not found in this folder or on this machine',
      picked: h.detected.length > 0,
      name: h.name,
    })),
    {
      canPickMany: true,
      title: `Connect agents to the memory of ${folder.name}`,
      placeHolder: 'Agents found here are ticked; you see every change first',
    },
  );
  if (!picked || picked.length === 0) return undefined;
  const names = picked.map((p) => p.label).join(', ');
  const request = { hosts: picked.map((p) => p.name), editorProvidesMcp: true, workspace };
  const preview = await srv.command(ServerCommand.connectAgents, { ...request, dryRun: true });
  const changes = preview.files.filter((f) => f.change !== 'unchanged');
  let result = preview;
  if (changes.length > 0) {
    const count = `${changes.length} file${changes.length === 1 ? '' : 's'}`;
    const title = `Connect Agents: changes to write in ${folder.name}`;
    await showChanges(folder, changes, title);
    const answer = await vscode.window.showInformationMessage(
      `Write ${count} for ${names}?`,
      {
        modal: true,
        detail:
          changes
            .map((f) => `${f.path}: ${f.change === 'created' ? 'new' : 'changed'} (${f.what.join('; ')})`)
            .join('\n') +
          '\n\nThey run the command metis-memory (no path on this machine), so they can be committed and shared.',
      },
      WRITE_FILES,
    );
    // Answered: the preview of what was to be written is no longer what is there.
    await closeTabs(title);
    if (answer !== WRITE_FILES) return undefined;
    result = await srv.command(ServerCommand.connectAgents, { ...request, expectedPlan: preview.plan });
  }
  log.info(`Connect agents (${folder.name}):\n${result.report}`);
  const { note, pathLine, warn } = await offerLauncher(srv, result.onPath, result.launcher, log);
  const written = result.files.filter((f) => f.change !== 'unchanged').length;
  const files = `${written} file${written === 1 ? '' : 's'}`;
  const message = written
    ? `Metis Memory: connected ${names} in ${folder.name} (${files} written). Each agent's remaining step is in the log.`
    : `Metis Memory: the agents of ${folder.name} were already connected; nothing changed.`;
  void report(message + note, pathLine, log, warn);
  return result;
}

/** Close the preview's tabs (the multi-file diff, or the one diff per file), by their title. */
async function closeTabs(title: string): Promise<void> {
  const tabs = vscode.window.tabGroups.all.flatMap((g) => g.tabs).filter((t) => t.label.startsWith(title));
  if (tabs.length > 0) await vscode.window.tabGroups.close(tabs);
}

/** Every change in one multi-file diff (a new file marked added), else one diff per file. */
async function showChanges(folder: MemoryWorkspace, changes: ConnectFile[], title: string): Promise<void> {
  const id = previews.add(changes);
  const docs = changes.map((f) => ({
    file: vscode.Uri.joinPath(folder.uri, f.path),
    created: f.before === null || f.before === undefined,
    before: vscode.Uri.from({ scheme: SCHEME, path: `/${f.path}`, query: `${id}&before` }),
    after: vscode.Uri.from({ scheme: SCHEME, path: `/${f.path}`, query: `${id}&after` }),
  }));
  try {
    await vscode.commands.executeCommand(
      'vscode.changes',
      title,
      docs.map((d) => [d.file, d.created ? undefined : d.before, d.after]),
    );
  } catch {
    for (const d of docs) {
      await vscode.commands.executeCommand(
        'vscode.diff',
        d.before,
        d.after,
        `${title}: ${d.file.path.split('/').pop() ?? ''}`,
        {
          preview: false,
        },
      );
    }
  }
}

/** The texts of the last few previews, served read-only to the diff editors. */
class Previews implements vscode.TextDocumentContentProvider {
  private readonly kept = new Map<string, Map<string, string>>();
  private next = 0;
  private registered = false;

  add(changes: ConnectFile[]): string {
    if (!this.registered) {
      this.registered = true;
      // For the extension host's lifetime: a diff may stay open after Connect Agents ends.
      vscode.workspace.registerTextDocumentContentProvider(SCHEME, this);
    }
    const id = String(++this.next);
    const texts = new Map<string, string>();
    for (const f of changes) {
      texts.set(`/${f.path}?before`, f.before ?? '');
      texts.set(`/${f.path}?after`, f.after ?? '');
    }
    this.kept.set(id, texts);
    for (const old of [...this.kept.keys()].slice(0, -3)) this.kept.delete(old);
    return id;
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    const [id = '', side = ''] = uri.query.split('&');
    return this.kept.get(id)?.get(`${uri.path}?${side}`) ?? '';
  }
}

const previews = new Previews();

/**
 * Each time the server starts (a start, a restart on another interpreter): bring the
 * `metis-memory` launcher up to date if it is ours. Then, once per folder that has `.metis/`
 * (and a trusted workspace): offer to connect its agents.
 */
export async function offerAgentSetup(
  context: vscode.ExtensionContext,
  srv: MetisServer,
  log: vscode.LogOutputChannel,
): Promise<void> {
  await keepLauncherCurrent(srv, log);
  context.subscriptions.push(srv.onDidStart(() => void keepLauncherCurrent(srv, log)));
  if (!vscode.workspace.isTrusted) return;
  if (!vscode.workspace.getConfiguration('metis').get<boolean>('offerAgentSetup', true)) return;
  for (const folder of vscode.workspace.workspaceFolders ?? []) {
    const answers = context.workspaceState.get<Answers>(OFFERED, {});
    if (answers[folder.uri.toString()] || !(await hasMetis(folder))) continue;
    const choice = await vscode.window.showInformationMessage(
      `Let agents in ${folder.name} see its memory on every request? ` +
        'Set Up shows the hook, MCP and instruction files for the agents you pick, then writes them.',
      SET_UP,
      NOT_NOW,
      NEVER,
    );
    const workspace = workspaceFromKey(folder.uri.toString());
    if (choice === SET_UP) {
      try {
        if (await connectAgents(srv, workspace, log)) await remember(context, folder, 'done');
      } catch (err) {
        const text = err instanceof Error ? err.message : String(err);
        log.error(text);
        void vscode.window.showErrorMessage(text);
      }
    } else if (choice === NEVER) await remember(context, folder, 'never');
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
