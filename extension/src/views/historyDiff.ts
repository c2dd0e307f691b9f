/**
 * The two sides of a recorded write (`metis-history:`) and of a change waiting for review
 * (`metis-review:`), as read-only virtual documents for VS Code's diff editor. The server
 * computes both (`metis.historyDiff`, `metis.review`: redacted like every read); a URI carries
 * the record's id, the side and the file in its path and the workspace's key in its query.
 */

import * as vscode from 'vscode';
import { workspaceFromKey, type MemoryWorkspace } from '../folders';
import { ServerCommand, type HistoryDiff, type StagedChange } from '../protocol';
import type { MetisServer } from '../server/server';
import { parseSidePath, sidePath, type Side } from './historyFormat';

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
  return vscode.Uri.from({ scheme, path: sidePath(id, side, file), query: workspace.uri.toString() });
}

/** What a `metis-history:`/`metis-review:` URI names; undefined for any other. */
export function parseSideUri(uri: vscode.Uri): SideRef | undefined {
  if ((uri.scheme !== HISTORY_SCHEME && uri.scheme !== REVIEW_SCHEME) || !uri.query) return undefined;
  const parsed = parseSidePath(uri.path);
  if (!parsed) return undefined;
  return { scheme: uri.scheme, workspace: workspaceFromKey(uri.query), ...parsed };
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
      found = this.server.command(ServerCommand.historyDiff, { workspace: workspace.uri.toString(), id });
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
