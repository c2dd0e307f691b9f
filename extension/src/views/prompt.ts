/**
 * "Show Assembled Prompt…": the user picks an agent (the last one picked comes first) and gets a
 * read-only virtual document with exactly what that agent's model receives of the memory
 * through its hook, as the server composes it (`metis.hostPrompts`, the hook's own code), with a
 * lens on its first line giving its size against the agent's limit (when it is sent: the lens's
 * tooltip); refreshed when memory changes. Copy Assembled Prompt and the API still assemble `metis.promptBase` + memory
 * (`metis.assemblePrompt`), for an agent of one's own.
 */

import * as vscode from 'vscode';
import { chooseWorkspace, workspaceFromKey, workspaceKey, workspaceOf, type MemoryWorkspace } from '../folders';
import { ServerCommand, type HostPrompt } from '../protocol';
import { MetisCommandError } from '../server/commandError';
import type { MetisServer } from '../server/server';

export const PROMPT_SCHEME = 'metis-prompt';
/** The host picked last (globalState): the user's agent is mostly the same in every folder. */
export const LAST_HOST_KEY = 'metis.promptHost';
const REFRESH_DELAY_MS = 150;

export function promptBase(): string {
  return vscode.workspace.getConfiguration('metis').get<string>('promptBase') ?? '';
}

export function assemblePrompt(server: MetisServer, workspace: string, base = promptBase()): Promise<string> {
  return server.command(ServerCommand.assemblePrompt, { base, workspace });
}

/** The host a prompt document shows: the first segment of its path. */
function hostOf(uri: vscode.Uri): string {
  return uri.path.split('/')[1] ?? '';
}

type HostItem = vscode.QuickPickItem & { prompt?: HostPrompt };

/**
 * Ask which agent, then open what it receives. `from` is a prompt document (its lens's "Show for
 * Another Agent…"): its workspace is kept.
 */
export async function showPrompt(server: MetisServer, memento: vscode.Memento, from?: vscode.Uri): Promise<void> {
  const folder = from?.scheme === PROMPT_SCHEME && from.query ? workspaceFromKey(from.query) : await chooseWorkspace();
  if (!folder) return;
  const prompts = await server.command(ServerCommand.hostPrompts, { workspace: folder.target });
  const last = memento.get<string>(LAST_HOST_KEY);
  const item = (prompt: HostPrompt): HostItem => ({ label: prompt.title, description: prompt.size, prompt });
  const first = prompts.filter((p) => p.host === last);
  const rest = prompts.filter((p) => p.host !== last);
  const items: HostItem[] = first.length
    ? [
        { label: 'last shown', kind: vscode.QuickPickItemKind.Separator },
        ...first.map(item),
        { label: 'other agents', kind: vscode.QuickPickItemKind.Separator },
        ...rest.map(item),
      ]
    : rest.map(item);
  const picked = await vscode.window.showQuickPick(items, {
    title: `What an agent receives of the memory of ${folder.name}`,
    placeHolder: 'Show the prompt which agent receives? (the text its hook adds to its context)',
    matchOnDescription: true,
  });
  if (!picked?.prompt) return;
  await memento.update(LAST_HOST_KEY, picked.prompt.host);
  const doc = await vscode.workspace.openTextDocument(PromptDocuments.uriFor(folder, picked.prompt));
  await vscode.window.showTextDocument(doc, { preview: false });
}

export class PromptDocuments implements vscode.TextDocumentContentProvider, vscode.CodeLensProvider, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  private readonly lensesChanged = new vscode.EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.lensesChanged.event;
  private readonly timers = new Map<string, ReturnType<typeof setTimeout>>();
  /** What the server last answered for each open prompt document, for its lens. */
  private readonly shown = new Map<string, HostPrompt>();
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
      vscode.languages.registerCodeLensProvider({ scheme: PROMPT_SCHEME }, this),
      vscode.workspace.onDidCloseTextDocument((doc) => {
        if (doc.uri.scheme === PROMPT_SCHEME) this.shown.delete(doc.uri.toString());
      }),
    );
  }

  /** `metis-prompt:/claude/Assembled Prompt — Claude Code (tallyd).md?<workspace>`. */
  static uriFor(folder: MemoryWorkspace, prompt: Pick<HostPrompt, 'host' | 'title'>): vscode.Uri {
    return vscode.Uri.from({
      scheme: PROMPT_SCHEME,
      path: `/${prompt.host}/Assembled Prompt — ${prompt.title} (${folder.name}).md`,
      query: folder.uri.toString(),
    });
  }

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    if (!uri.query) return 'This prompt document names no workspace.';
    const host = hostOf(uri);
    try {
      const prompts = await this.server.command(ServerCommand.hostPrompts, {
        workspace: workspaceFromKey(uri.query).target,
      });
      const prompt = prompts.find((p) => p.host === host);
      if (!prompt) return `The server knows no agent named "${host}".`;
      this.shown.set(uri.toString(), prompt);
      this.lensesChanged.fire();
      return prompt.text;
    } catch (err) {
      this.shown.delete(uri.toString());
      this.lensesChanged.fire();
      const text = err instanceof MetisCommandError ? err.message : String(err);
      return `Could not assemble the prompt: ${text}`;
    }
  }

  /** Over the text: its size, when it is sent and the agent's limit; and another agent's. */
  provideCodeLenses(doc: vscode.TextDocument): vscode.CodeLens[] {
    const prompt = this.shown.get(doc.uri.toString());
    if (!prompt) return [];
    const top = new vscode.Range(0, 0, 0, 0);
    return [
      new vscode.CodeLens(top, { title: prompt.headline, command: '', tooltip: prompt.summary }),
      new vscode.CodeLens(top, {
        title: 'Show for Another Agent…',
        command: 'metis.showPrompt',
        arguments: [doc.uri],
      }),
    ];
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
    this.lensesChanged.dispose();
  }
}
