/**
 * One status bar item showing the memory usage of the active editor's workspace, keyed by the
 * URI the server names it by. The server pushes `metis/usageChanged` on every change (typing
 * or disk), so nothing here polls.
 */

import * as vscode from 'vscode';
import { statusText, statusTooltip, worstLevel } from './format';
import { activeWorkspace, workspaceKey, workspaceReported } from '../folders';
import { ServerCommand, type BudgetLevel, type Usage } from '../protocol';
import type { MetisServer } from '../server/server';

export class UsageStatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private readonly usage = new Map<string, Usage>();
  private readonly disposables: vscode.Disposable[] = [];
  private scheduled: ReturnType<typeof setTimeout> | undefined;
  private agents: BudgetLevel | undefined;

  constructor(private readonly server: MetisServer) {
    this.item = vscode.window.createStatusBarItem('metis.usage', vscode.StatusBarAlignment.Left, 50);
    this.item.name = 'Metis Memory';
    this.item.command = 'metis.showActions';
    this.disposables.push(
      this.item,
      vscode.window.onDidChangeActiveTextEditor(() => {
        this.render();
      }),
      vscode.workspace.onDidChangeWorkspaceFolders(() => void this.seed()),
      server.onDidStart(() => void this.seed()),
      server.failure.onDidChange(() => {
        this.render();
      }),
    );
  }

  /** The latest usage the server reported for a folder (undefined before the first report). */
  get(folder: vscode.Uri): Usage | undefined {
    return this.usage.get(workspaceKey(folder));
  }

  /** The server's usage of a workspace, under the URI it names it by. */
  update(workspace: string, usage: Usage): void {
    workspaceReported(workspace);
    this.usage.set(workspaceKey(workspace), usage);
    // A burst of keystrokes brings a burst of reports: draw once per turn of the event loop.
    if (this.scheduled) return;
    this.scheduled = setTimeout(() => {
      this.scheduled = undefined;
      this.render();
    }, 0);
  }

  /** The worst level of the active folder's agents' files (from the Agent Context view). */
  setAgentLevel(level: BudgetLevel | undefined): void {
    if (level === this.agents) return;
    this.agents = level;
    this.render();
  }

  /** Ask once per folder after a (re)start; from then on the server pushes changes. */
  async seed(): Promise<void> {
    for (const folder of vscode.workspace.workspaceFolders ?? []) {
      try {
        const workspace = folder.uri.toString();
        const usage = await this.server.command(ServerCommand.usage, { workspace });
        workspaceReported(workspace);
        this.usage.set(workspaceKey(workspace), usage);
      } catch (err) {
        this.server.log.warn(`usage of ${folder.name}: ${String(err)}`);
      }
    }
    this.render();
  }

  render(): void {
    const failure = this.server.failure.text;
    if (failure) {
      // Say so where the usage would be: the one notification may have been dismissed.
      this.item.text = '$(error) Metis Memory: server not running';
      this.item.tooltip = `${failure}\n\nClick for actions (Select Python Interpreter…, Restart Server, Show Log).`;
      this.item.accessibilityInformation = { label: 'Metis Memory: server not running' };
      this.item.backgroundColor = new vscode.ThemeColor('statusBarItem.errorBackground');
      this.item.show();
      return;
    }
    const folder = activeWorkspace();
    const usage = folder ? this.usage.get(workspaceKey(folder.uri)) : undefined;
    if (!folder || !usage) {
      this.item.hide();
      return;
    }
    const over = this.agents === 'red' || this.agents === 'yellow';
    const memoryLevel = worstLevel(usage);
    const level = memoryLevel === 'ok' && over ? 'warning' : memoryLevel;
    this.item.text = statusText(usage) + (over ? ' · $(warning) agents' : '');
    let markdown = statusTooltip(folder.name, usage);
    if (over) {
      markdown +=
        this.agents === 'red'
          ? '\n\n**An agent loses text of its files**: see the Agent Context view.'
          : '\n\nAn agent file is over a warning budget or close to one: see the Agent Context view.';
    }
    const tooltip = new vscode.MarkdownString(markdown);
    this.item.tooltip = tooltip;
    this.item.accessibilityInformation = { label: `Metis Memory: ${statusText(usage).replace(/\$\([a-z-]+\) /g, '')}` };
    this.item.backgroundColor =
      level === 'error'
        ? new vscode.ThemeColor('statusBarItem.errorBackground')
        : level === 'warning'
          ? new vscode.ThemeColor('statusBarItem.warningBackground')
          : undefined;
    this.item.show();
  }

  dispose(): void {
    clearTimeout(this.scheduled);
    for (const d of this.disposables) d.dispose();
  }
}
