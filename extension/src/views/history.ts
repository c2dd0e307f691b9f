/**
 * The "Memory History" view: the active folder's recorded writes, per file and newest first
 * (when, who, what: the server's `summary` and `person`), the entries that consolidations,
 * undos and restores removed (the archive), and the changes agents wait to have reviewed.
 * Selecting a write opens its diff (before ↔ after); Undo This Change, Restore This Version
 * and Put Back ask the server, whose answer (or refusal, with what blocks it) is shown as it
 * says it. Refreshed when the server records a write (`metis/historyChanged`).
 */

import * as vscode from 'vscode';
import { activeWorkspace, workspaceDoc, workspaceKey, type MemoryWorkspace } from '../folders';
import {
  MEMORY_FILES,
  ServerCommand,
  ServerNotification,
  type ArchivedEntry,
  type HistoryRecord,
  type MemoryFileName,
  type StagedChange,
} from '../protocol';
import type { MetisServer } from '../server/server';
import { activeDocumentOf } from './editorTabs';
import { HISTORY_SCHEME, parseSideUri, sideUri, type HistoryDocuments } from './historyDiff';
import { archivedDescription, recordDescription, recordTooltip, relativeTime } from './historyFormat';
import { showWritten } from './entryPrompts';
import { ownWrite } from './notifications';
import type { ReviewInbox } from './reviewInbox';

export const HISTORY_VIEW = 'metis.memoryHistory';
/** Records shown per file: the newest; `metis-memory log` has the rest. */
const RECORDS_PER_FILE = 50;
/** "2 min ago" is redrawn this often while the view is visible (no request to the server). */
const RELABEL_MS = 60_000;
const REFRESH_DELAY_MS = 100;

export type HistoryNode =
  | { kind: 'file'; workspace: MemoryWorkspace; file: MemoryFileName; records: HistoryRecord[] }
  | { kind: 'record'; workspace: MemoryWorkspace; record: HistoryRecord }
  | { kind: 'archive'; workspace: MemoryWorkspace; archived: ArchivedEntry[] }
  | { kind: 'archived'; workspace: MemoryWorkspace; entry: ArchivedEntry }
  | { kind: 'inbox'; workspace: MemoryWorkspace; staged: StagedChange[] }
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
  workspace: MemoryWorkspace;
  records: Map<MemoryFileName, HistoryRecord[]>;
  archived: ArchivedEntry[];
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
        if (folder && this.loaded && workspaceKey(folder.uri) === workspaceKey(this.loaded.workspace.uri)) return;
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
    if (folder && this.server.running) {
      try {
        const answers = await Promise.all(
          MEMORY_FILES.map((file) =>
            this.server.command(ServerCommand.history, { workspace: folder.target, file, limit: RECORDS_PER_FILE }),
          ),
        );
        const records = new Map<MemoryFileName, HistoryRecord[]>();
        const archived = new Map<string, ArchivedEntry>();
        MEMORY_FILES.forEach((file, i) => {
          records.set(file, answers[i]?.records ?? []);
          for (const entry of answers[i]?.archived ?? []) archived.set(entry.id, entry);
        });
        next = { workspace: folder, records, archived: [...archived.values()] };
        const any = [...records.values()].some((r) => r.length > 0) || archived.size > 0;
        state = any ? 'listed' : 'empty';
      } catch (err) {
        this.server.log.warn(`history of ${folder.name}: ${String(err)}`);
        state = 'failed';
      }
    } else if (this.server.failure.text) {
      state = 'failed';
    }
    if (seq !== this.requests) return; // a later refresh answers instead
    this.loaded = next;
    this.view.description = next && (vscode.workspace.workspaceFolders?.length ?? 0) > 1 ? next.workspace.name : '';
    void vscode.commands.executeCommand('setContext', 'metis.history.state', state);
    this.changed.fire(undefined);
  }

  getChildren(node?: HistoryNode): HistoryNode[] {
    const loaded = this.loaded;
    if (!loaded) return [];
    const workspace = loaded.workspace;
    if (!node) {
      const top: HistoryNode[] = [];
      const staged = this.inbox.stagedOf(workspace);
      if (staged.length > 0) top.push({ kind: 'inbox', workspace, staged });
      if (!this.isEmpty()) {
        for (const file of MEMORY_FILES) {
          top.push({ kind: 'file', workspace, file, records: loaded.records.get(file) ?? [] });
        }
        if (loaded.archived.length > 0) top.push({ kind: 'archive', workspace, archived: loaded.archived });
      }
      return top;
    }
    switch (node.kind) {
      case 'file':
        return node.records.map((record) => ({ kind: 'record', workspace, record }));
      case 'archive':
        return node.archived.map((entry) => ({ kind: 'archived', workspace, entry }));
      case 'inbox':
        return node.staged.map((change) => ({ kind: 'staged', workspace, change }));
      default:
        return [];
    }
  }

  /** Nothing recorded: the view shows its welcome text instead of two empty files. */
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
        item.description = `${change.file} · ${relativeTime(change.time, now)} · ${this.inbox.who(change)}`;
        item.iconPath = new vscode.ThemeIcon('git-pull-request-draft');
        item.contextValue = 'staged';
        item.tooltip = `${this.inbox.notice(change)}\n\nSelect it to see the change, then Accept or Reject it.`;
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
        item.tooltip = recordTooltip(record);
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
        item.tooltip = `${entry.text}\n\nRemoved from ${entry.file} by ${entry.operation} (#${entry.record}), ${relativeTime(entry.time, now)}. Put Back adds it to ${entry.file} again.`;
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
    const result = await ownWrite(ref.file, () =>
      this.server.command(ServerCommand.undo, { workspace: ref.workspace.uri.toString(), id: ref.id }),
    );
    showWritten(workspaceDoc(ref.workspace, ref.file), result);
    this.historyChanged();
  }

  /** Restore This Version: the file as it was right after the write. */
  async restore(target?: HistoryNode | vscode.Uri): Promise<void> {
    const ref = this.recordOf(target);
    if (!ref) return;
    const result = await ownWrite(ref.file, () =>
      this.server.command(ServerCommand.restore, { workspace: ref.workspace.uri.toString(), id: ref.id }),
    );
    showWritten(workspaceDoc(ref.workspace, ref.file), result);
    this.historyChanged();
  }

  /** Put Back an archived entry. */
  async putBack(target?: HistoryNode): Promise<void> {
    if (target?.kind !== 'archived') return;
    const { entry, workspace } = target;
    const result = await ownWrite(entry.file, () =>
      this.server.command(ServerCommand.unarchive, { workspace: workspace.uri.toString(), id: entry.id }),
    );
    showWritten(workspaceDoc(workspace, entry.file), result);
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
