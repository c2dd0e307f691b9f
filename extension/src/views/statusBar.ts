/**
 * One status bar item showing the memory usage of the active editor's workspace, keyed by the
 * URI the server names it by. The server pushes `metis/usageChanged` on every change (typing
 * or disk), so nothing here polls. In a workspace with no memory file yet, a second item (its
 * own, so it can be hidden alone) offers to create them: the first run's lasting way in.
 */

import * as vscode from 'vscode';
import { statusLabel, statusText, statusTooltip, worstLevel } from './format';
import { reviewCountText } from './historyFormat';
import { CREATE_COMMAND, type MemoryPresence } from './firstRun';
import { activeWorkspace, userMemoryReported, workspaceKey, workspaceReported, type MemoryWorkspace } from '../folders';
import { ServerCommand, USER_MEMORY, type BudgetLevel, type Usage } from '../protocol';
import type { MetisServer } from '../server/server';

export class UsageStatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private readonly offer: vscode.StatusBarItem;
  /** Changes of agents waiting for review in the active folder (reviewInbox.ts). */
  private readonly review: vscode.StatusBarItem;
  private readonly reviewCounts = new Map<string, number>();
  private hasMemory: boolean | undefined;
  private readonly usage = new Map<string, Usage>();
  private readonly disposables: vscode.Disposable[] = [];
  private scheduled: ReturnType<typeof setTimeout> | undefined;
  private agents: BudgetLevel | undefined;

  constructor(
    private readonly server: MetisServer,
    private readonly presence: MemoryPresence,
  ) {
    this.item = vscode.window.createStatusBarItem('metis.usage', vscode.StatusBarAlignment.Left, 50);
    this.item.name = 'Metis Memory';
    this.item.command = 'metis.showActions';
    this.offer = vscode.window.createStatusBarItem('metis.createMemory', vscode.StatusBarAlignment.Left, 50);
    this.offer.name = 'Metis Memory: Create Memory';
    this.offer.text = '$(add) Create Memory';
    this.offer.accessibilityInformation = { label: 'Metis Memory: create workspace memory' };
    this.review = vscode.window.createStatusBarItem('metis.review', vscode.StatusBarAlignment.Left, 49);
    this.review.name = 'Metis Memory: Changes to Review';
    this.review.command = 'metis.review.show';
    this.disposables.push(
      this.item,
      this.offer,
      this.review,
      presence.onDidChange(() => {
        this.render();
      }),
      vscode.window.onDidChangeActiveTextEditor(() => {
        this.render();
      }),
      vscode.workspace.onDidChangeWorkspaceFolders(() => void this.seed()),
      server.onDidStart(() => void this.seed()),
      server.failure.onDidChange(() => {
        this.render();
      }),
    );
    this.render(); // the offer, where there is no memory: nothing else may come to draw it
  }

  /** The latest usage the server reported for a folder (undefined before the first report). */
  get(folder: vscode.Uri): Usage | undefined {
    return this.usage.get(workspaceKey(folder));
  }

  /** The user memory's soft cap, as the last usage the server sent says (undefined before). */
  userMemorySoftCap(): number | undefined {
    for (const usage of this.usage.values()) if (usage.userMemory) return usage.userMemory.soft_cap;
    return undefined;
  }

  /** The server's usage of a workspace, under the URI it names it by. */
  update(workspace: string, usage: Usage): void {
    workspaceReported(workspace);
    if (usage.userMemory) userMemoryReported(usage.userMemory.uri);
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

  /** How many changes wait for review in a workspace, or (`USER_MEMORY`) in the user
   * memory's inbox, counted in every workspace (the server's count). */
  setReviewCount(workspace: string, count: number): void {
    this.reviewCounts.set(workspace === USER_MEMORY ? USER_MEMORY : workspaceKey(workspace), count);
    this.render();
  }

  /** Ask once per folder after a (re)start; from then on the server pushes changes. */
  async seed(): Promise<void> {
    // Never starts the server (a folder added to a window with no memory in sight): its start seeds.
    if (!this.server.running) {
      this.render();
      return;
    }
    for (const folder of vscode.workspace.workspaceFolders ?? []) {
      try {
        const workspace = folder.uri.toString();
        const usage = await this.server.command(ServerCommand.usage, { workspace });
        workspaceReported(workspace);
        if (usage.userMemory) userMemoryReported(usage.userMemory.uri);
        this.usage.set(workspaceKey(workspace), usage);
      } catch (err) {
        this.server.log.warn(`usage of ${folder.name}: ${String(err)}`);
      }
    }
    this.render();
  }

  render(): void {
    const failure = this.server.failure.text;
    const active = activeWorkspace();
    const has = active && this.presence.has(active);
    this.setHasMemory(has);
    this.renderReview(failure ? undefined : active);
    if (!failure && active && has === false) {
      this.showOffer(active);
      // An agent that loses text of its own files is worth saying with or without our memory.
      if (this.agents === 'red' || this.agents === 'yellow') this.showAgentsOnly();
      else this.item.hide();
      return;
    }
    this.offer.hide();
    if (failure) {
      // Say so where the usage would be: the one notification may have been dismissed.
      this.item.text = '$(error) Metis Memory: server not running';
      this.item.tooltip = `${failure}\n\nClick for actions (Select Python Interpreter…, Restart Server, Show Log).`;
      this.item.accessibilityInformation = { label: 'Metis Memory: server not running' };
      this.item.backgroundColor = new vscode.ThemeColor('statusBarItem.errorBackground');
      this.item.show();
      return;
    }
    const folder = active;
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
    this.item.accessibilityInformation = { label: `Metis Memory: ${statusLabel(usage)}` };
    this.item.backgroundColor =
      level === 'error'
        ? new vscode.ThemeColor('statusBarItem.errorBackground')
        : level === 'warning'
          ? new vscode.ThemeColor('statusBarItem.warningBackground')
          : undefined;
    this.item.show();
  }

  private renderReview(active: MemoryWorkspace | undefined): void {
    const here = active ? (this.reviewCounts.get(workspaceKey(active.uri)) ?? 0) : 0;
    const user = this.server.failure.text ? 0 : (this.reviewCounts.get(USER_MEMORY) ?? 0);
    const count = here + user;
    if (count === 0) {
      this.review.hide();
      return;
    }
    this.review.text = reviewCountText(count);
    const changes = count === 1 ? 'A change of an agent waits' : `${count} changes of agents wait`;
    const where = [here > 0 ? active?.name : undefined, user > 0 ? 'your user memory' : undefined];
    this.review.tooltip = `${changes} for your review in ${where.filter(Boolean).join(' and ')}: click to see and accept or reject.`;
    this.review.accessibilityInformation = { label: `Metis Memory: ${count} to review` };
    this.review.backgroundColor = new vscode.ThemeColor('statusBarItem.warningBackground');
    this.review.show();
  }

  /** No memory file yet, but another agent's file is over a budget: that alone. */
  private showAgentsOnly(): void {
    const red = this.agents === 'red';
    this.item.text = '$(warning) agents';
    this.item.tooltip = new vscode.MarkdownString(
      red
        ? '**An agent loses text of its files**: see the Agent Context view.'
        : 'An agent file is over a warning budget or close to one: see the Agent Context view.',
    );
    this.item.accessibilityInformation = { label: 'Metis Memory: an agent file is over its budget' };
    this.item.backgroundColor = new vscode.ThemeColor('statusBarItem.warningBackground');
    this.item.show();
  }

  private showOffer(folder: MemoryWorkspace): void {
    this.offer.tooltip = new vscode.MarkdownString(
      `**${folder.name}** has no memory yet. Click to create \`.metis/MEMORY.md\` (facts about this ` +
        'workspace) and `.metis/USER.md` (facts about you) from a short template that shows the ' +
        'format; agents read both on every turn once connected.',
    );
    this.offer.command = {
      title: 'Create Workspace Memory',
      command: CREATE_COMMAND,
      arguments: [folder.uri.toString()],
    };
    this.offer.show();
  }

  /** `metis.workspaceHasMemory`: the walkthrough's "Create your memory" step is done. */
  private setHasMemory(has: boolean | undefined): void {
    if (has === undefined || has === this.hasMemory) return;
    this.hasMemory = has;
    void vscode.commands.executeCommand('setContext', 'metis.workspaceHasMemory', has);
  }

  dispose(): void {
    clearTimeout(this.scheduled);
    for (const d of this.disposables) d.dispose();
  }
}
