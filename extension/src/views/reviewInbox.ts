/**
 * The review inbox: with review on (`metis-memory review on`, the `metis.reviewAgentWrites`
 * setting, or "Metis: Review Agent Writes: On"), an agent's write waits for the user instead of
 * landing. The server stages it and says so (`metis/reviewChanged`); here a notification names
 * it (Review / Accept / Reject), the status bar counts what waits, and each change opens as a
 * diff (the file when staged ↔ with the change) with Accept and Reject in its title bar. What
 * is staged, and whether it can still be applied, is the server's: its refusal is shown as it
 * says it.
 *
 * The user memory has an inbox of its own (an agent's write of it waits there, whichever
 * workspace's review held it): it is listed, counted and announced beside the active
 * workspace's, as "your user memory".
 */

import * as vscode from 'vscode';
import { activeWorkspace, workspaceFromKey, workspaceKey, type MemoryWorkspace } from '../folders';
import {
  ServerCommand,
  ServerNotification,
  USER_MEMORY,
  type ReviewChangedParams,
  type StagedChange,
} from '../protocol';
import { inertLinks } from '../plainText';
import { textForPeople } from '../server/commandError';
import type { MetisServer } from '../server/server';
import { activeDocumentOf, closeEditorsOf } from './editorTabs';
import {
  isUserMemoryLog,
  logArgs,
  logDoc,
  logFileName,
  logFromKey,
  ownWriteKey,
  parseSideUri,
  REVIEW_SCHEME,
  sideUri,
  userMemoryLog,
  type UserMemoryLog,
} from './historyDiff';
import { stagedAgent, stagedNotice } from './historyFormat';
import { showWritten } from './entryPrompts';
import { ownWrite } from './notifications';
import type { UsageStatusBar } from './statusBar';
import { locateUserMemory } from './userMemory';

export const REVIEW_SETTING = 'reviewAgentWrites';

/** A staged change as the commands get it: a tree item's, a notification's, a diff's. */
export type StagedTarget = { workspace: string; id: number } | { change: StagedChange; workspace: MemoryWorkspace };

const REVIEW = 'Review';
const ACCEPT = 'Accept';
const REJECT = 'Reject';
/** How long VS Code keeps an info toast on screen before it goes to the notification center. */
const ON_SCREEN_MS = 10_000;

export class ReviewInbox implements vscode.Disposable {
  /** What waits, by workspace key, as the server last listed it. */
  private readonly lists = new Map<string, StagedChange[]>();
  /** Whether review is on, by workspace key. */
  private readonly on = new Map<string, boolean>();
  /** When each workspace's unanswered arrival notification was shown (see `announce`). */
  private readonly showing = new Map<string, number>();
  /** The user memory's log, once the server said where it is. */
  private user: UserMemoryLog | undefined;
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly server: MetisServer,
    private readonly statusBar: UsageStatusBar,
  ) {
    server.onNotification(ServerNotification.reviewChanged, (params) => {
      void this.reviewChanged(params as ReviewChangedParams);
    });
    this.disposables.push(
      this.changed,
      server.onDidStart(() => void this.seed()),
      vscode.window.onDidChangeActiveTextEditor(() => {
        this.updateContext();
      }),
      vscode.workspace.onDidChangeConfiguration((e) => {
        for (const folder of vscode.workspace.workspaceFolders ?? []) {
          if (e.affectsConfiguration(`metis.${REVIEW_SETTING}`, folder.uri)) void this.applySetting(folder);
        }
      }),
    );
  }

  /** What waits in a workspace (or the user memory's inbox). */
  stagedOf(workspace: MemoryWorkspace): StagedChange[] {
    return this.lists.get(workspaceKey(workspace.uri)) ?? [];
  }

  /** The user memory's log, once known (its inbox is listed from the start). */
  userLog(): UserMemoryLog | undefined {
    return this.user;
  }

  /** Who asks for a change, in the server's words ("Claude Code 2.1.4"). */
  who(change: StagedChange): string {
    return stagedAgent(change.person);
  }

  /** "Claude Code wants to add an entry to MEMORY.md: …" ("… to your user memory: …"). */
  notice(change: StagedChange, workspace: MemoryWorkspace): string {
    return stagedNotice(change, this.who(change), logFileName(workspace, change.file));
  }

  /** A staged change by id: the list held, else the server's latest. */
  async find(workspace: MemoryWorkspace, id: number): Promise<StagedChange | undefined> {
    const held = this.stagedOf(workspace).find((c) => c.id === id);
    if (held) return held;
    await this.load(workspace);
    return this.stagedOf(workspace).find((c) => c.id === id);
  }

  /** After a (re)start: each folder's review state and inbox, and the setting where it is set;
   * and the user memory's inbox. */
  private async seed(): Promise<void> {
    try {
      this.user = userMemoryLog((await locateUserMemory(this.server)).uri);
      await this.load(this.user);
    } catch (err) {
      this.server.log.warn(`review inbox of your user memory: ${String(err)}`);
    }
    for (const folder of vscode.workspace.workspaceFolders ?? []) {
      const inspected = vscode.workspace.getConfiguration('metis', folder.uri).inspect<boolean>(REVIEW_SETTING);
      const explicit =
        inspected?.workspaceFolderValue !== undefined ||
        inspected?.workspaceValue !== undefined ||
        inspected?.globalValue !== undefined;
      if (explicit) await this.applySetting(folder);
      else await this.load(workspaceFromKey(folder.uri.toString()));
    }
  }

  /** The setting of a folder, forwarded to the server (which keeps review on or off per workspace). */
  private async applySetting(folder: vscode.WorkspaceFolder): Promise<void> {
    const on = vscode.workspace.getConfiguration('metis', folder.uri).get<boolean>(REVIEW_SETTING) ?? false;
    const workspace = workspaceFromKey(folder.uri.toString());
    try {
      await this.server.command(ServerCommand.setReview, { workspace: workspace.target, on });
      this.server.log.info(
        `review of agents' writes in ${folder.name}: ${on ? 'on' : 'off'} (metis.${REVIEW_SETTING})`,
      );
    } catch (err) {
      this.server.log.warn(`metis.${REVIEW_SETTING} of ${folder.name}: ${String(err)}`);
    }
    await this.load(workspace);
  }

  /** Ask the server what waits in a workspace; the status bar and the views follow. */
  async load(workspace: MemoryWorkspace): Promise<void> {
    if (!this.server.running) return;
    const key = workspaceKey(workspace.uri);
    let same: boolean;
    try {
      const state = await this.server.command(ServerCommand.review, logArgs(workspace));
      const ids = (list: readonly StagedChange[] | undefined) => list?.map((c) => c.id).join(',');
      same = this.on.get(key) === state.on && ids(this.lists.get(key)) === ids(state.staged);
      this.on.set(key, state.on);
      this.lists.set(key, state.staged);
    } catch (err) {
      this.server.log.warn(`review inbox of ${workspace.name}: ${String(err)}`);
      return;
    }
    this.statusBar.setReviewCount(countKey(workspace), this.stagedOf(workspace).length);
    this.updateContext();
    // The views are drawn again only for news: a redraw under the pointer loses a click.
    if (!same) this.changed.fire();
  }

  private async reviewChanged(p: ReviewChangedParams): Promise<void> {
    const workspace = logFromKey(p.workspace, p.scope);
    if (isUserMemoryLog(workspace)) this.user = workspace;
    const arrived = p.arrived ? `; #${p.arrived.id} arrived` : '';
    this.server.log.info(`review inbox of ${workspace.name}: ${p.count} waiting${arrived}`);
    this.statusBar.setReviewCount(countKey(workspace), p.count);
    await this.load(workspace);
    if (p.arrived) this.announce(workspace, p.arrived);
  }

  /**
   * A notification for a change that arrived. An agent's burst brings one: while the last one
   * is on screen and unanswered, the status bar's count says the rest. Once VS Code has moved it
   * to the notification center (an info toast goes after 10 s), the next arrival gets its own:
   * one left unanswered must not silence the inbox for good.
   */
  private announce(workspace: MemoryWorkspace, change: StagedChange): void {
    const key = workspaceKey(workspace.uri);
    const shown = this.showing.get(key);
    if (shown !== undefined && Date.now() - shown < ON_SCREEN_MS) {
      this.server.log.info(`#${change.id} arrived while the notification of another is on screen: counted only`);
      return;
    }
    const at = Date.now();
    this.showing.set(key, at);
    void vscode.window
      .showInformationMessage(this.notice(change, workspace), REVIEW, ACCEPT, REJECT)
      .then(async (choice) => {
        if (this.showing.get(key) === at) this.showing.delete(key);
        try {
          if (choice === REVIEW) await this.open({ change, workspace });
          else if (choice === ACCEPT) await this.accept({ change, workspace });
          else if (choice === REJECT) await this.reject({ change, workspace });
        } catch (err) {
          this.server.log.error(err instanceof Error ? err.message : String(err));
          void vscode.window.showErrorMessage(textForPeople(err));
        }
      });
  }

  /** The diff of a staged change: the file when it was staged ↔ with the change. */
  async open(target?: StagedTarget): Promise<void> {
    const found = await this.resolve(target);
    if (!found) return;
    const { change, workspace } = found;
    const before = sideUri(REVIEW_SCHEME, workspace, change.id, 'before', change.file);
    const after = sideUri(REVIEW_SCHEME, workspace, change.id, 'after', change.file);
    const name = isUserMemoryLog(workspace) ? 'Your user memory' : change.file;
    const title = `${name} ↔ ${this.who(change)}'s change (to review)`;
    await vscode.commands.executeCommand('vscode.diff', before, after, title, { preview: false });
  }

  /** Accept: the server applies the change to the file as it is now, or says why it cannot. */
  async accept(target?: StagedTarget | vscode.Uri): Promise<void> {
    const found = await this.resolve(target);
    if (!found) return;
    const { change, workspace } = found;
    try {
      const result = await ownWrite(ownWriteKey(workspace, change.file), () =>
        this.server.command(ServerCommand.reviewAccept, { ...logArgs(workspace), id: change.id }),
      );
      await this.closeDiff(workspace, change);
      showWritten(logDoc(workspace, change.file), result);
    } finally {
      await this.load(workspace);
    }
  }

  /** Reject: the change is dropped, nothing is written. */
  async reject(target?: StagedTarget | vscode.Uri): Promise<void> {
    const found = await this.resolve(target);
    if (!found) return;
    const { change, workspace } = found;
    try {
      await this.server.command(ServerCommand.reviewReject, { ...logArgs(workspace), id: change.id });
      await this.closeDiff(workspace, change);
      const file = logFileName(workspace, change.file);
      void vscode.window.showInformationMessage(
        inertLinks(`Rejected ${this.who(change)}'s change to ${file}: nothing was written.`),
      );
    } finally {
      await this.load(workspace);
    }
  }

  /** What waits in the active folder and in the user memory, to pick one and see it (the
   * status bar item). */
  async show(): Promise<void> {
    const workspace = activeWorkspace();
    const user = this.user;
    if (!workspace && !user) return;
    if (workspace) await this.load(workspace);
    if (user) await this.load(user);
    const staged = [workspace, user].flatMap((log) =>
      log ? this.stagedOf(log).map((change) => ({ change, workspace: log })) : [],
    );
    if (staged.length === 0) {
      if (!workspace) {
        void vscode.window.showInformationMessage("No agent's write to your user memory waits for review.");
        return;
      }
      const on = this.on.get(workspaceKey(workspace.uri)) === true;
      void vscode.window.showInformationMessage(
        on
          ? `No agent's write waits for review in ${workspace.name}.`
          : `No agent's write waits for review in ${workspace.name}, and review is off: agents' writes land at once. "Metis: Review Agent Writes: On" makes them wait for you.`,
      );
      return;
    }
    if (staged.length === 1 && staged[0]) return this.open(staged[0]);
    const picked = await vscode.window.showQuickPick(
      staged.map((target) => ({
        label: this.notice(target.change, target.workspace),
        description: `#${target.change.id}`,
        target,
      })),
      { placeHolder: `${staged.length} changes of agents wait for your review: see which?`, matchOnDescription: true },
    );
    if (picked) await this.open(picked.target);
  }

  /** "Metis: Review Agent Writes: On/Off": the active folder's review, in the server. */
  async setReview(on: boolean): Promise<void> {
    const workspace = activeWorkspace();
    if (!workspace) return;
    const state = await this.server.command(ServerCommand.setReview, { workspace: workspace.target, on });
    await this.load(workspace);
    const folder = vscode.workspace.getWorkspaceFolder(workspace.uri);
    const set = vscode.workspace.getConfiguration('metis', folder?.uri).inspect<boolean>(REVIEW_SETTING);
    const configured = set?.workspaceFolderValue ?? set?.workspaceValue ?? set?.globalValue;
    const note =
      configured !== undefined && configured !== state.on
        ? ` The setting metis.${REVIEW_SETTING} (${String(configured)}) applies again when the editor restarts.`
        : '';
    const waiting = this.stagedOf(workspace).length;
    const left =
      waiting > 0
        ? ` ${waiting} change${waiting === 1 ? '' : 's'} still wait${waiting === 1 ? 's' : ''} for review.`
        : '';
    void vscode.window.showInformationMessage(
      (state.on
        ? `Agents' writes to the memory of ${workspace.name} now wait for your review: each one brings a notification with Accept and Reject. Your own writes are never held.`
        : `Agents' writes to the memory of ${workspace.name} land at once again.${left}`) + note,
    );
  }

  private async resolve(
    target?: StagedTarget | vscode.Uri,
  ): Promise<{ change: StagedChange; workspace: MemoryWorkspace } | undefined> {
    if (target && 'change' in target) return target;
    let workspace: MemoryWorkspace;
    let id: number;
    if (target && !(target instanceof vscode.Uri)) {
      workspace = logFromKey(target.workspace);
      id = target.id;
    } else {
      const uri = target ?? activeDocumentOf(REVIEW_SCHEME);
      const ref = uri && parseSideUri(uri);
      if (ref?.scheme !== REVIEW_SCHEME) {
        this.server.log.warn('no change to review was named (no row, notification or review diff)');
        return undefined;
      }
      workspace = ref.workspace;
      id = ref.id;
    }
    const change = await this.find(workspace, id);
    if (!change) {
      void vscode.window.showWarningMessage(
        `Change #${id} no longer waits for review in ${workspace.name}: it was accepted or rejected already.`,
      );
      return undefined;
    }
    return { change, workspace };
  }

  private async closeDiff(workspace: MemoryWorkspace, change: StagedChange): Promise<void> {
    await closeEditorsOf(sideUri(REVIEW_SCHEME, workspace, change.id, 'after', change.file));
  }

  /** `metis.reviewOn`: which of "Review Agent Writes: On/Off" the Command Palette offers. */
  private updateContext(): void {
    const workspace = activeWorkspace();
    const on = workspace ? this.on.get(workspaceKey(workspace.uri)) === true : false;
    void vscode.commands.executeCommand('setContext', 'metis.reviewOn', on);
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}

/** The status bar's count of a log: the user memory's is every workspace's (statusBar.ts adds
 * it to the active folder's). */
function countKey(workspace: MemoryWorkspace): string {
  return isUserMemoryLog(workspace) ? USER_MEMORY : workspaceKey(workspace.uri);
}
