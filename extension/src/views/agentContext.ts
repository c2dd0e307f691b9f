/**
 * The "Agent Context" view: for each agent, the files of the active folder it loads, each
 * with a bar of its usage against that agent's budget, as the server computes them
 * (`metis.agentContext`). Clicking a file opens it where the agent stops reading. A budget the
 * file is far from is no row of its own (the server's rule); the row's tooltip names it. An
 * empty view shows package.json's welcome message for `metis.agentContext.state`.
 */

import * as vscode from 'vscode';
import { activeWorkspace } from '../folders';
import { bar } from './format';
import { ServerCommand, type AgentContext, type AgentFile, type BudgetLevel } from '../protocol';
import type { MetisServer } from '../server/server';

type Node = { kind: 'agent'; agent: AgentContext } | { kind: 'file'; file: AgentFile; several?: boolean };

const UNIT_WORD = { bytes: 'bytes', chars: 'characters', lines: 'lines' } as const;

const COLOR: Record<BudgetLevel, string> = {
  green: 'charts.green',
  yellow: 'charts.yellow',
  red: 'charts.red',
  grey: 'disabledForeground',
};
const REFRESH_AFTER_TYPING_MS = 300;

export class AgentContextView implements vscode.TreeDataProvider<Node>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly worstChanged = new vscode.EventEmitter<BudgetLevel | undefined>();
  /** The worst level among the active folder's agents' files, after each refresh. */
  readonly onDidChangeWorst = this.worstChanged.event;
  private readonly disposables: vscode.Disposable[] = [];
  private typing: ReturnType<typeof setTimeout> | undefined;
  private agents: AgentContext[] = [];
  private requests = 0;

  constructor(private readonly server: MetisServer) {
    this.disposables.push(
      this.changed,
      this.worstChanged,
      vscode.window.registerTreeDataProvider('metis.agentContext', this),
      server.onDidStart(() => {
        this.refresh();
      }),
      server.failure.onDidChange(() => {
        this.refresh();
      }),
      vscode.window.onDidChangeActiveTextEditor(() => {
        this.refresh();
      }),
      vscode.workspace.onDidSaveTextDocument(() => {
        this.refresh();
      }),
      vscode.workspace.onDidChangeTextDocument((e) => {
        // Typing counts only in a file the view lists (saving any file refreshes it).
        const uri = e.document.uri.toString();
        if (e.contentChanges.length === 0 || !this.agents.some((a) => a.files.some((f) => f.uri === uri))) return;
        clearTimeout(this.typing);
        this.typing = setTimeout(() => {
          this.refresh();
        }, REFRESH_AFTER_TYPING_MS);
      }),
    );
  }

  /** Ask the server again; the view and the status bar follow (even while the view is hidden). */
  refresh(): void {
    const seq = ++this.requests;
    void this.load().then((answer) => {
      if (seq !== this.requests) return; // a later refresh answers instead
      const agents = answer ?? [];
      // Which welcome message the empty view shows (package.json, viewsWelcome): "no agent
      // files here" only once the server said so, "not running" only once it failed to
      // start (not while it starts).
      let state: 'empty' | 'listed' | 'failed' | undefined;
      if (answer !== undefined) state = agents.length === 0 ? 'empty' : 'listed';
      else if (this.server.failure.text) state = 'failed';
      if (state !== undefined) void vscode.commands.executeCommand('setContext', 'metis.agentContext.state', state);
      this.agents = agents;
      const order: BudgetLevel[] = ['grey', 'green', 'yellow', 'red'];
      const worst = agents.map((a) => a.worst).sort((a, b) => order.indexOf(b) - order.indexOf(a))[0];
      this.worstChanged.fire(worst);
      this.changed.fire(undefined);
    });
  }

  /** The active folder's agents' files; undefined when there is no folder or no answer. */
  private async load(): Promise<AgentContext[] | undefined> {
    const folder = activeWorkspace();
    if (!folder || !this.server.running) return undefined;
    try {
      return await this.server.command(ServerCommand.agentContext, { workspace: folder.target });
    } catch (err) {
      this.server.log.warn(`agent context of ${folder.name}: ${String(err)}`);
      return undefined;
    }
  }

  getChildren(node?: Node): Node[] {
    if (!node) return this.agents.map((agent) => ({ kind: 'agent', agent }));
    if (node.kind === 'file') return [];
    const files = node.agent.files;
    const budgets = new Map<string, number>();
    for (const f of files) budgets.set(f.path, (budgets.get(f.path) ?? 0) + 1);
    // A file under several budgets of one agent gets one row each, told apart by unit.
    return files.map((file) => ({ kind: 'file', file, several: (budgets.get(file.path) ?? 0) > 1 }));
  }

  getTreeItem(node: Node): vscode.TreeItem {
    if (node.kind === 'agent') {
      const { agent } = node;
      const item = new vscode.TreeItem(agent.consumer, vscode.TreeItemCollapsibleState.Expanded);
      const files = new Set(agent.files.map((f) => f.path)).size;
      const lost = new Set(agent.files.filter((f) => f.level === 'red').map((f) => f.path)).size;
      item.description = `${files} file${files === 1 ? '' : 's'}${lost ? ` · ${lost} losing text` : ''}`;
      item.iconPath = new vscode.ThemeIcon('circle-filled', new vscode.ThemeColor(COLOR[agent.worst]));
      return item;
    }
    const { file } = node;
    const label = node.several && file.unit ? `${file.shown} (${UNIT_WORD[file.unit]})` : file.shown;
    const item = new vscode.TreeItem(label, vscode.TreeItemCollapsibleState.None);
    item.description = `${file.percent === undefined ? '' : `${bar(file.percent)} `}${file.used ?? ''}`;
    const also = file.also?.length ? `\n\nAlso within: ${file.also.join('; ')}.` : '';
    item.tooltip = `${file.name ?? file.shown}: ${file.used ?? ''}${file.state ? ` — ${file.state}` : ''}${also}`;
    item.iconPath = new vscode.ThemeIcon('circle-filled', new vscode.ThemeColor(COLOR[file.level]));
    const at = file.cut ? new vscode.Position(file.cut.line, file.cut.character) : new vscode.Position(0, 0);
    item.command = {
      command: 'vscode.open',
      title: 'Open at the cut',
      arguments: [vscode.Uri.parse(file.uri), { selection: new vscode.Range(at, at) }],
    };
    return item;
  }

  dispose(): void {
    clearTimeout(this.typing);
    for (const d of this.disposables) d.dispose();
  }
}
