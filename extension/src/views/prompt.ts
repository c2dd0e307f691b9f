/**
 * "Show Assembled Prompt": a read-only virtual document with the system prompt the server
 * assembles (base from `metis.promptBase` + USER.md + MEMORY.md), refreshed when memory changes.
 */

import * as vscode from 'vscode';
import { workspaceFromKey, workspaceKey, workspaceOf, type MemoryWorkspace } from '../folders';
import { ServerCommand } from '../protocol';
import { MetisCommandError } from '../server/commandError';
import type { MetisServer } from '../server/server';

export const PROMPT_SCHEME = 'metis-prompt';
const REFRESH_DELAY_MS = 150;

export function promptBase(): string {
  return vscode.workspace.getConfiguration('metis').get<string>('promptBase') ?? '';
}

export function assemblePrompt(server: MetisServer, workspace: string, base = promptBase()): Promise<string> {
  return server.command(ServerCommand.assemblePrompt, { base, workspace });
}

export class PromptDocuments implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  private readonly timers = new Map<string, ReturnType<typeof setTimeout>>();
  private readonly registration: vscode.Disposable;

  constructor(private readonly server: MetisServer) {
    // The prompt is assembled from disk: refresh on any write, by anyone (VS Code's own watcher).
    const watcher = vscode.workspace.createFileSystemWatcher('**/.metis/{MEMORY,USER}.md');
    const onDisk = (uri: vscode.Uri) => {
      const workspace = workspaceOf(uri);
      if (workspace) this.refresh(workspace.uri.toString());
    };
    this.registration = vscode.Disposable.from(
      watcher,
      watcher.onDidChange(onDisk),
      watcher.onDidCreate(onDisk),
      watcher.onDidDelete(onDisk),
      vscode.workspace.registerTextDocumentContentProvider(PROMPT_SCHEME, this),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('metis.promptBase')) this.refreshAll();
      }),
    );
  }

  static uriFor(folder: MemoryWorkspace): vscode.Uri {
    return vscode.Uri.from({
      scheme: PROMPT_SCHEME,
      path: `/Assembled Prompt (${folder.name}).md`,
      query: folder.uri.toString(),
    });
  }

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    if (!uri.query) return 'This prompt document names no workspace.';
    try {
      return await assemblePrompt(this.server, workspaceFromKey(uri.query).target);
    } catch (err) {
      const text = err instanceof MetisCommandError ? err.message : String(err);
      return `Could not assemble the prompt: ${text}`;
    }
  }

  /** Memory of `workspace` changed: refresh its open prompt documents (coalescing bursts). */
  refresh(workspace: string): void {
    const key = workspaceKey(workspace);
    for (const doc of vscode.workspace.textDocuments) {
      if (doc.uri.scheme !== PROMPT_SCHEME || workspaceKey(doc.uri.query) !== key) continue;
      const id = doc.uri.toString();
      clearTimeout(this.timers.get(id));
      this.timers.set(
        id,
        setTimeout(() => {
          this.timers.delete(id);
          this.changed.fire(doc.uri);
        }, REFRESH_DELAY_MS),
      );
    }
  }

  refreshAll(): void {
    for (const doc of vscode.workspace.textDocuments) {
      if (doc.uri.scheme === PROMPT_SCHEME) this.changed.fire(doc.uri);
    }
  }

  dispose(): void {
    for (const t of this.timers.values()) clearTimeout(t);
    this.registration.dispose();
    this.changed.dispose();
  }
}
