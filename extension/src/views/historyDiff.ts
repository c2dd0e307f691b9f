/**
 * The two sides of a recorded write (`metis-history:`) and of a change waiting for review
 * (`metis-review:`), as read-only virtual documents for VS Code's diff editor. The server
 * computes both (`metis.historyDiff`, `metis.review`: redacted like every read); a URI carries
 * the record's id, the side and the file in its path and the workspace's key in its query.
 *
 * The user memory (one USER.md read in every workspace) has a log and an inbox of its own: here
 * it is a `UserMemoryLog`, shown as "your user memory" beside a workspace, whose commands take
 * `file: "user-memory"` instead of a workspace; its sides carry its folder's URI in the query
 * and `user-memory` in the fragment.
 */

import * as vscode from 'vscode';
import {
  isUserMemoryKey,
  USER_MEMORY_NAME,
  userMemoryDoc,
  userMemoryReported,
  workspaceDoc,
  workspaceFromKey,
  workspaceKey,
  type MemoryDoc,
  type MemoryWorkspace,
} from '../folders';
import { ServerCommand, USER_MEMORY, type HistoryDiff, type MemoryFileName, type StagedChange } from '../protocol';
import type { MetisServer } from '../server/server';
import { parseSidePath, sidePath, type Side } from './historyFormat';

/** The user memory's log and review inbox, where a workspace's would be: named "your user
 * memory", keyed by its folder's URI (what the server's `scope: "user"` notifications name). */
export interface UserMemoryLog extends MemoryWorkspace {
  readonly userMemory: true;
  /** Its USER.md, as the server says where it is. */
  readonly file: string;
}

let userLog: UserMemoryLog | undefined;

/** The user memory's log, its USER.md at `fileUri` (`metis.openUserMemory`'s `uri`). */
export function userMemoryLog(fileUri: string): UserMemoryLog {
  if (userLog?.file === fileUri) return userLog;
  userMemoryReported(fileUri); // a document there (or a side of its log) is no workspace's
  const uri = vscode.Uri.joinPath(vscode.Uri.parse(fileUri), '..');
  userLog = { uri, name: USER_MEMORY_NAME, target: uri.toString(), userMemory: true, file: fileUri };
  return userLog;
}

/** The user memory's log by its folder's URI (a notification's `workspace`). */
function userMemoryLogIn(folder: string): UserMemoryLog {
  if (userLog && workspaceKey(userLog.uri) === workspaceKey(folder)) return userLog;
  return userMemoryLog(vscode.Uri.joinPath(vscode.Uri.parse(folder), 'USER.md').toString());
}

export function isUserMemoryLog(workspace: MemoryWorkspace): workspace is UserMemoryLog {
  return 'userMemory' in workspace && workspace.userMemory === true;
}

/** A log named by its key: the user memory's (its folder, or `scope` "user" said so), or a
 * workspace's. */
export function logFromKey(key: string, scope?: 'user'): MemoryWorkspace {
  return scope === 'user' || isUserMemoryKey(key) ? userMemoryLogIn(key) : workspaceFromKey(key);
}

/** What a history or review command takes to name a log: the user memory's `file`, or the
 * workspace. */
export function logArgs(workspace: MemoryWorkspace): { file: typeof USER_MEMORY } | { workspace: string } {
  return isUserMemoryLog(workspace) ? { file: USER_MEMORY } : { workspace: workspace.uri.toString() };
}

/** The memory file a record or a staged change of a log is about (what a write message and its
 * Consolidate… button name). */
export function logDoc(workspace: MemoryWorkspace, file: MemoryFileName): MemoryDoc {
  return isUserMemoryLog(workspace) ? userMemoryDoc(workspace.file) : workspaceDoc(workspace, file);
}

/** How a message names a log's file: "MEMORY.md", or "your user memory". */
export function logFileName(workspace: MemoryWorkspace, file: string): string {
  return isUserMemoryLog(workspace) ? USER_MEMORY_NAME : file;
}

/** What `ownWrite` keys a write of a log's file by (the user memory's eviction notice is its own). */
export function ownWriteKey(workspace: MemoryWorkspace, file: MemoryFileName): string {
  return isUserMemoryLog(workspace) ? USER_MEMORY : file;
}

export const HISTORY_SCHEME = 'metis-history';
export const REVIEW_SCHEME = 'metis-review';

export interface SideRef {
  scheme: typeof HISTORY_SCHEME | typeof REVIEW_SCHEME;
  workspace: MemoryWorkspace;
  id: number;
  side: Side;
  file: string;
}

export function sideUri(
  scheme: SideRef['scheme'],
  workspace: MemoryWorkspace,
  id: number,
  side: Side,
  file: string,
): vscode.Uri {
  const fragment = isUserMemoryLog(workspace) ? USER_MEMORY : '';
  return vscode.Uri.from({ scheme, path: sidePath(id, side, file), query: workspace.uri.toString(), fragment });
}

/** What a `metis-history:`/`metis-review:` URI names; undefined for any other. */
export function parseSideUri(uri: vscode.Uri): SideRef | undefined {
  if ((uri.scheme !== HISTORY_SCHEME && uri.scheme !== REVIEW_SCHEME) || !uri.query) return undefined;
  const parsed = parseSidePath(uri.path);
  if (!parsed) return undefined;
  const workspace = logFromKey(uri.query, uri.fragment === USER_MEMORY ? 'user' : undefined);
  return { scheme: uri.scheme, workspace, ...parsed };
}

/** Finds a staged change by id (the review inbox keeps the latest list). */
export type StagedLookup = (workspace: MemoryWorkspace, id: number) => Promise<StagedChange | undefined>;

export class HistoryDocuments implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  /** Diffs asked for, by workspace and id: both sides of one diff cost one request. A record
   * never changes; the cache goes when the log does (a new write, a restart). */
  private readonly diffs = new Map<string, Promise<HistoryDiff>>();
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly server: MetisServer,
    private readonly staged: StagedLookup,
  ) {
    this.disposables.push(
      this.changed,
      vscode.workspace.registerTextDocumentContentProvider(HISTORY_SCHEME, this),
      vscode.workspace.registerTextDocumentContentProvider(REVIEW_SCHEME, this),
      server.onDidStart(() => {
        this.diffs.clear();
      }),
    );
  }

  /** A record of a workspace, as the server shows it (cached). */
  diff(workspace: MemoryWorkspace, id: number): Promise<HistoryDiff> {
    const key = `${workspace.uri.toString()}|${id}`;
    let found = this.diffs.get(key);
    if (!found) {
      found = this.server.command(ServerCommand.historyDiff, { ...logArgs(workspace), id });
      // A failure is not kept: the next look asks again.
      found.catch(() => this.diffs.delete(key));
      this.diffs.set(key, found);
      if (this.diffs.size > 64) this.diffs.delete(this.diffs.keys().next().value ?? key);
    }
    return found;
  }

  /** The log changed (a new write may have trimmed old records): ask again from now on. */
  forget(): void {
    this.diffs.clear();
  }

  /** A staged change was accepted or rejected: its open sides say so. */
  refreshReview(): void {
    for (const doc of vscode.workspace.textDocuments) {
      if (doc.uri.scheme === REVIEW_SCHEME) this.changed.fire(doc.uri);
    }
  }

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const ref = parseSideUri(uri);
    if (!ref) return '';
    if (ref.scheme === HISTORY_SCHEME) {
      const diff = await this.diff(ref.workspace, ref.id);
      return ref.side === 'before' ? diff.before : diff.after;
    }
    const change = await this.staged(ref.workspace, ref.id);
    if (!change) {
      return ref.side === 'after'
        ? `This change (#${ref.id}) is no longer waiting for review: it was accepted or rejected.\n`
        : '';
    }
    return ref.side === 'before' ? change.before : change.after;
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}
