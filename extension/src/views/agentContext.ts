/**
 * The "Agent Context" view: for each agent, the files of the active folder it loads, each
 * with a bar of its usage against that agent's budget, as the server computes them
 * (`metis.agentContext`). Clicking a file opens it where the agent stops reading.
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
    void this.load().then((agents) => {
      if (seq !== this.requests) return; // a later refresh answers instead
      this.agents = agents;
      const order: BudgetLevel[] = ['grey', 'green', 'yellow', 'red'];
      const worst = agents.map((a) => a.worst).sort((a, b) => order.indexOf(b) - order.indexOf(a))[0];
      this.worstChanged.fire(worst);
      this.changed.fire(undefined);
    });
  }

  private async load(): Promise<AgentContext[]> {
    const folder = activeWorkspace();
    if (!folder || !this.server.running) return [];
    try {
      return await this.server.command(ServerCommand.agentContext, { workspace: folder.target });
    } catch (err) {
      this.server.log.warn(`agent context of ${folder.name}: ${String(err)}`);
      return [];
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
    item.tooltip = `${file.name ?? file.shown}: ${file.used ?? ''}${file.state ? ` — ${file.state}` : ''}`;
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
