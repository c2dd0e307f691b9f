/**
 * The "Memory History" view: the active folder's recorded writes, per file and newest first
 * (when, who, what: the server's `summary` and `person`), the entries that consolidations,
 * undos and restores removed (the archive), and the changes agents wait to have reviewed.
 * Selecting a write opens its diff (before ↔ after); Undo This Change, Restore This Version
 * and Put Back ask the server, whose answer (or refusal, with what blocks it) is shown as it
 * says it. Refreshed when the server records a write (`metis/historyChanged`).
 *
 * The user memory (one USER.md read in every workspace) has a log of its own: beside the
 * folder's files it is a group, "Your user memory", with its writes and its archive, and what
 * agents wait to write to it is in To Review with the folder's.
 */

import * as vscode from 'vscode';
import { activeWorkspace, workspaceKey, type MemoryWorkspace } from '../folders';
import {
  MEMORY_FILES,
  ServerCommand,
  ServerNotification,
  USER_MEMORY,
  type ArchivedEntry,
  type HistoryRecord,
  type MemoryFileName,
  type StagedChange,
} from '../protocol';
import type { MetisServer } from '../server/server';
import { activeDocumentOf } from './editorTabs';
import {
  HISTORY_SCHEME,
  logArgs,
  logDoc,
  logFileName,
  ownWriteKey,
  parseSideUri,
  sideUri,
  userMemoryLog,
  type HistoryDocuments,
  type UserMemoryLog,
} from './historyDiff';
import { archivedDescription, recordDescription, recordTooltip, relativeTime } from './historyFormat';
import { showWritten } from './entryPrompts';
import { ownWrite } from './notifications';
import type { ReviewInbox } from './reviewInbox';
import { locateUserMemory } from './userMemory';

export const HISTORY_VIEW = 'metis.memoryHistory';
/** Records shown per file: the newest; `metis-memory log` has the rest. */
const RECORDS_PER_FILE = 50;
/** "2 min ago" is redrawn this often while the view is visible (no request to the server). */
const RELABEL_MS = 60_000;
const REFRESH_DELAY_MS = 100;

/** A node's `workspace` is the log it belongs to: a workspace's, or the user memory's
 * (`UserMemoryLog`). */
export type HistoryNode =
  | { kind: 'file'; workspace: MemoryWorkspace; file: MemoryFileName; records: HistoryRecord[] }
  | { kind: 'user'; workspace: UserMemoryLog; records: HistoryRecord[]; archived: ArchivedEntry[] }
  | { kind: 'record'; workspace: MemoryWorkspace; record: HistoryRecord }
  | { kind: 'archive'; workspace: MemoryWorkspace; archived: ArchivedEntry[] }
  | { kind: 'archived'; workspace: MemoryWorkspace; entry: ArchivedEntry }
  | { kind: 'inbox'; workspace: MemoryWorkspace; staged: { workspace: MemoryWorkspace; change: StagedChange }[] }
  | { kind: 'staged'; workspace: MemoryWorkspace; change: StagedChange };

const ICONS: Record<string, string> = {
  add: 'diff-added',
  replace: 'edit',
  consolidate: 'fold',
  undo: 'discard',
  restore: 'history',
  unarchive: 'reply',
  outside: 'warning',
};

interface Loaded {
  /** The active folder's log (none with no folder open). */
  workspace: MemoryWorkspace | undefined;
  records: Map<MemoryFileName, HistoryRecord[]>;
  archived: ArchivedEntry[];
  /** The user memory's log, when the server could say where it is. */
  user: { workspace: UserMemoryLog; records: HistoryRecord[]; archived: ArchivedEntry[] } | undefined;
}

export class HistoryView implements vscode.TreeDataProvider<HistoryNode>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly view: vscode.TreeView<HistoryNode>;
  private readonly disposables: vscode.Disposable[] = [];
  private loaded: Loaded | undefined;
  private requests = 0;
  private scheduled: ReturnType<typeof setTimeout> | undefined;
  private relabel: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly server: MetisServer,
    private readonly documents: HistoryDocuments,
    private readonly inbox: ReviewInbox,
  ) {
    this.view = vscode.window.createTreeView(HISTORY_VIEW, { treeDataProvider: this, showCollapseAll: true });
    server.onNotification(ServerNotification.historyChanged, () => {
      this.historyChanged();
    });
    this.disposables.push(
      this.changed,
      this.view,
      server.onDidStart(() => {
        this.refresh();
      }),
      server.failure.onDidChange(() => {
        this.refresh();
      }),
      vscode.window.onDidChangeActiveTextEditor(() => {
        // Only another folder's history is worth asking for.
        const folder = activeWorkspace();
        const shown = this.loaded?.workspace;
        if (folder && shown && workspaceKey(folder.uri) === workspaceKey(shown.uri)) return;
        this.refresh();
      }),
      inbox.onDidChange(() => {
        documents.refreshReview();
        this.changed.fire(undefined);
      }),
      this.view.onDidChangeVisibility((e) => {
        this.relabelWhile(e.visible);
        if (e.visible) this.refresh();
      }),
    );
    this.relabelWhile(this.view.visible);
  }

  /** Ask the server again, once for a burst of writes (a write brings historyChanged and
   * memoryUpdated), while the view shows. */
  refresh(): void {
    clearTimeout(this.scheduled);
    // A hidden (or collapsed) view asks nothing: an agent's burst of writes costs no request
    // until someone looks, and showing the view asks then.
    if (!this.view.visible) return;
    this.scheduled = setTimeout(() => {
      this.scheduled = undefined;
      void this.load();
    }, REFRESH_DELAY_MS);
  }

  /** A write was recorded in `workspace`: the cached diffs and the view follow. */
  historyChanged(): void {
    this.documents.forget();
    this.refresh();
  }

  /** Show the view (the command "Metis: Show Memory History"). */
  async reveal(): Promise<void> {
    await vscode.commands.executeCommand(`${HISTORY_VIEW}.focus`);
    this.refresh();
  }

  private relabelWhile(visible: boolean): void {
    clearInterval(this.relabel);
    this.relabel = visible
      ? setInterval(() => {
          this.changed.fire(undefined);
        }, RELABEL_MS)
      : undefined;
  }

  private async load(): Promise<void> {
    const seq = ++this.requests;
    const folder = activeWorkspace();
    let next: Loaded | undefined;
    let state: 'listed' | 'empty' | 'failed' | 'none' = 'none';
    if (this.server.running) {
      try {
        const [answers, user] = await Promise.all([
          folder
            ? Promise.all(
                MEMORY_FILES.map((file) =>
                  this.server.command(ServerCommand.history, {
                    workspace: folder.target,
                    file,
                    limit: RECORDS_PER_FILE,
                  }),
                ),
              )
            : [],
          this.loadUser(),
        ]);
        const records = new Map<MemoryFileName, HistoryRecord[]>();
        const archived = new Map<string, ArchivedEntry>();
        MEMORY_FILES.forEach((file, i) => {
          records.set(file, answers[i]?.records ?? []);
          for (const entry of answers[i]?.archived ?? []) archived.set(entry.id, entry);
        });
        next = { workspace: folder, records, archived: [...archived.values()], user };
        const any =
          [...records.values()].some((r) => r.length > 0) ||
          archived.size > 0 ||
          (user !== undefined && (user.records.length > 0 || user.archived.length > 0));
        state = any ? 'listed' : folder ? 'empty' : 'none';
      } catch (err) {
        this.server.log.warn(`history of ${folder?.name ?? 'your user memory'}: ${String(err)}`);
        state = 'failed';
      }
    } else if (this.server.failure.text) {
      state = 'failed';
    }
    if (seq !== this.requests) return; // a later refresh answers instead
    this.loaded = next;
    const shown = next?.workspace;
    this.view.description = shown && (vscode.workspace.workspaceFolders?.length ?? 0) > 1 ? shown.name : '';
    void vscode.commands.executeCommand('setContext', 'metis.history.state', state);
    this.changed.fire(undefined);
  }

  /** The user memory's log (undefined when the server cannot say where it is: its folder is
   * another user's, say; the folder's history still shows). */
  private async loadUser(): Promise<Loaded['user']> {
    let workspace: UserMemoryLog;
    try {
      workspace = this.inbox.userLog() ?? userMemoryLog((await locateUserMemory(this.server)).uri);
      const answer = await this.server.command(ServerCommand.history, {
        file: USER_MEMORY,
        limit: RECORDS_PER_FILE,
      });
      return { workspace, records: answer.records, archived: answer.archived };
    } catch (err) {
      this.server.log.warn(`history of your user memory: ${String(err)}`);
      return undefined;
    }
  }

  getChildren(node?: HistoryNode): HistoryNode[] {
    const loaded = this.loaded;
    if (!loaded) return [];
    if (!node) {
      const top: HistoryNode[] = [];
      const { workspace, user } = loaded;
      // What waits, the folder's and the user memory's: each row names its own log.
      const logs = [workspace, user?.workspace ?? this.inbox.userLog()];
      const staged = logs.flatMap((log) =>
        log ? this.inbox.stagedOf(log).map((change) => ({ workspace: log, change })) : [],
      );
      const first = workspace ?? user?.workspace;
      if (staged.length > 0 && first) top.push({ kind: 'inbox', workspace: first, staged });
      if (workspace && !this.isEmpty()) {
        for (const file of MEMORY_FILES) {
          top.push({ kind: 'file', workspace, file, records: loaded.records.get(file) ?? [] });
        }
        if (loaded.archived.length > 0) top.push({ kind: 'archive', workspace, archived: loaded.archived });
      }
      // The user memory's group once it has a history (most people's user memory has none).
      if (user && (user.records.length > 0 || user.archived.length > 0)) top.push({ kind: 'user', ...user });
      return top;
    }
    const workspace = node.workspace;
    switch (node.kind) {
      case 'file':
        return node.records.map((record) => ({ kind: 'record', workspace, record }));
      case 'user': {
        const rows: HistoryNode[] = node.records.map((record) => ({ kind: 'record', workspace, record }));
        if (node.archived.length > 0) rows.push({ kind: 'archive', workspace, archived: node.archived });
        return rows;
      }
      case 'archive':
        return node.archived.map((entry) => ({ kind: 'archived', workspace, entry }));
      case 'inbox':
        return node.staged.map(({ workspace: log, change }) => ({ kind: 'staged', workspace: log, change }));
      default:
        return [];
    }
  }

  /** Nothing recorded in the folder: the view shows its welcome text instead of two empty files. */
  private isEmpty(): boolean {
    const loaded = this.loaded;
    if (!loaded) return true;
    return loaded.archived.length === 0 && [...loaded.records.values()].every((r) => r.length === 0);
  }

  getTreeItem(node: HistoryNode): vscode.TreeItem {
    const item = this.itemOf(node);
    // A stable id per node: a row's inline action (Accept, Put Back) clicked while the view is
    // drawn anew (each write and review change redraws it) still names its node.
    item.id = `${workspaceKey(node.workspace.uri)}|${nodeKey(node)}`;
    return item;
  }

  private itemOf(node: HistoryNode): vscode.TreeItem {
    const now = Date.now();
    switch (node.kind) {
      case 'user': {
        const item = new vscode.TreeItem('Your user memory', vscode.TreeItemCollapsibleState.Expanded);
        const n = node.records.length;
        item.description = `USER.md in every workspace · ${n}${n === RECORDS_PER_FILE ? '+' : ''} write${n === 1 ? '' : 's'}`;
        item.iconPath = new vscode.ThemeIcon('account');
        item.contextValue = 'userMemory';
        item.tooltip = `Your user memory, ${vscode.Uri.parse(node.workspace.file).fsPath}: facts about you that every workspace's agents read. Its writes, newest first; select one to see it, then Undo This Change or Restore This Version from its menu.`;
        return item;
      }
      case 'inbox': {
        const item = new vscode.TreeItem('To Review', vscode.TreeItemCollapsibleState.Expanded);
        item.description = `${node.staged.length} change${node.staged.length === 1 ? '' : 's'} waiting`;
        item.iconPath = new vscode.ThemeIcon('inbox');
        item.contextValue = 'inbox';
        item.tooltip = 'Writes of agents waiting for you: select one to see it, then Accept or Reject it.';
        return item;
      }
      case 'staged': {
        const { change } = node;
        const item = new vscode.TreeItem(change.summary, vscode.TreeItemCollapsibleState.None);
        const file = logFileName(node.workspace, change.file);
        item.description = `${file} · ${relativeTime(change.time, now)} · ${this.inbox.who(change)}`;
        item.iconPath = new vscode.ThemeIcon('git-pull-request-draft');
        item.contextValue = 'staged';
        item.tooltip = `${this.inbox.notice(change, node.workspace)}\n\nSelect it to see the change, then Accept or Reject it.`;
        item.command = {
          command: 'metis.review.open',
          title: 'Review',
          arguments: [{ workspace: node.workspace.uri.toString(), id: change.id }],
        };
        return item;
      }
      case 'file': {
        const item = new vscode.TreeItem(node.file, vscode.TreeItemCollapsibleState.Expanded);
        const n = node.records.length;
        item.description =
          n === 0 ? 'no writes recorded' : `${n}${n === RECORDS_PER_FILE ? '+' : ''} write${n === 1 ? '' : 's'}`;
        item.iconPath = new vscode.ThemeIcon('file');
        item.contextValue = 'file';
        return item;
      }
      case 'record': {
        const { record } = node;
        const item = new vscode.TreeItem(record.summary, vscode.TreeItemCollapsibleState.None);
        item.description = recordDescription(record, now);
        item.tooltip = recordTooltip(record, logFileName(node.workspace, record.file));
        item.iconPath = new vscode.ThemeIcon(ICONS[record.operation] ?? 'circle-outline');
        item.contextValue = 'record';
        item.command = { command: 'metis.history.open', title: 'Show the Change', arguments: [node] };
        return item;
      }
      case 'archive': {
        const item = new vscode.TreeItem('Archive', vscode.TreeItemCollapsibleState.Collapsed);
        const n = node.archived.length;
        item.description = `${n} removed entr${n === 1 ? 'y' : 'ies'}`;
        item.iconPath = new vscode.ThemeIcon('archive');
        item.contextValue = 'archive';
        item.tooltip = 'Entries that consolidations, undos and restores removed: Put Back adds one to its file again.';
        return item;
      }
      case 'archived': {
        const { entry } = node;
        const item = new vscode.TreeItem(
          entry.text.trim().split(/\r?\n/)[0] ?? '',
          vscode.TreeItemCollapsibleState.None,
        );
        item.description = archivedDescription(entry, now);
        const file = logFileName(node.workspace, entry.file);
        item.tooltip = `${entry.text}\n\nRemoved from ${file} by ${entry.operation} (#${entry.record}), ${relativeTime(entry.time, now)}. Put Back adds it to ${file} again.`;
        item.iconPath = new vscode.ThemeIcon('trash');
        item.contextValue = 'archived';
        return item;
      }
    }
  }

  /** Open the diff of a record: before ↔ after, as the server shows them. */
  async open(target?: HistoryNode | vscode.Uri): Promise<void> {
    const ref = this.recordOf(target);
    if (!ref) return;
    const diff = await this.documents.diff(ref.workspace, ref.id);
    const before = sideUri(HISTORY_SCHEME, ref.workspace, ref.id, 'before', diff.file);
    const after = sideUri(HISTORY_SCHEME, ref.workspace, ref.id, 'after', diff.file);
    await vscode.commands.executeCommand('vscode.diff', before, after, diff.title, { preview: true });
  }

  /** Undo This Change: the server reverses the write's entries, or says what blocks it. */
  async undo(target?: HistoryNode | vscode.Uri): Promise<void> {
    const ref = this.recordOf(target);
    if (!ref) return;
    const result = await ownWrite(ownWriteKey(ref.workspace, ref.file), () =>
      this.server.command(ServerCommand.undo, { ...logArgs(ref.workspace), id: ref.id }),
    );
    showWritten(logDoc(ref.workspace, ref.file), result);
    this.historyChanged();
  }

  /** Restore This Version: the file as it was right after the write. */
  async restore(target?: HistoryNode | vscode.Uri): Promise<void> {
    const ref = this.recordOf(target);
    if (!ref) return;
    const result = await ownWrite(ownWriteKey(ref.workspace, ref.file), () =>
      this.server.command(ServerCommand.restore, { ...logArgs(ref.workspace), id: ref.id }),
    );
    showWritten(logDoc(ref.workspace, ref.file), result);
    this.historyChanged();
  }

  /** Put Back an archived entry. */
  async putBack(target?: HistoryNode): Promise<void> {
    if (target?.kind !== 'archived') return;
    const { entry, workspace } = target;
    const result = await ownWrite(ownWriteKey(workspace, entry.file), () =>
      this.server.command(ServerCommand.unarchive, { ...logArgs(workspace), id: entry.id }),
    );
    showWritten(logDoc(workspace, entry.file), result);
    this.historyChanged();
  }

  /** A record named by a tree item, a history document (the diff's title bar), or the active
   * editor's (the Command Palette). */
  private recordOf(
    target?: HistoryNode | vscode.Uri,
  ): { workspace: MemoryWorkspace; id: number; file: MemoryFileName } | undefined {
    if (target && !(target instanceof vscode.Uri)) {
      return target.kind === 'record'
        ? { workspace: target.workspace, id: target.record.id, file: target.record.file }
        : undefined;
    }
    const uri = target ?? activeDocumentOf(HISTORY_SCHEME);
    const ref = uri && parseSideUri(uri);
    if (ref?.scheme !== HISTORY_SCHEME || (ref.file !== 'MEMORY.md' && ref.file !== 'USER.md')) return undefined;
    return { workspace: ref.workspace, id: ref.id, file: ref.file };
  }

  dispose(): void {
    clearTimeout(this.scheduled);
    clearInterval(this.relabel);
    for (const d of this.disposables) d.dispose();
  }
}

/** What tells a node from the others of its workspace. */
function nodeKey(node: HistoryNode): string {
  switch (node.kind) {
    case 'file':
      return `file|${node.file}`;
    case 'user':
      return 'user';
    case 'record':
      return `record|${node.record.id}`;
    case 'archive':
      return 'archive';
    case 'archived':
      return `archived|${node.entry.id}`;
    case 'inbox':
      return 'inbox';
    case 'staged':
      return `staged|${node.change.id}`;
  }
}
