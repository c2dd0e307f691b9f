/**
 * A first run: whether a folder has memory yet (for the status bar's "Create Memory"), **Metis:
 * Create Workspace Memory** (the server writes the files from its template; this forwards and
 * opens the result), the offer a missing file's "Open" makes instead of an untitled editor, and
 * the walkthrough, opened once per install.
 */

import * as vscode from 'vscode';
import {
  chooseWorkspace,
  memoryFileUri,
  metisDir,
  workspaceFromKey,
  workspaceKey,
  type MemoryWorkspace,
} from '../folders';
import { isMemoryFileName, MEMORY_FILES, ServerCommand, type MemoryFileName } from '../protocol';
import type { MetisServer } from '../server/server';

export const CREATE_COMMAND = 'metis.createWorkspaceMemory';
const WALKTHROUGH = 'metis.gettingStarted';
/** globalState: the walkthrough was opened once (on the first activation of this install). */
const WALKTHROUGH_SHOWN = 'metis.walkthroughShown';

/**
 * Whether each workspace holds a memory file (either), read from the disk with `stat` only and
 * kept until a `.metis/` or memory file comes or goes: the status bar asks on every render.
 */
export class MemoryPresence implements vscode.Disposable {
  private readonly known = new Map<string, boolean>();
  private readonly checking = new Set<string>();
  /** Bumped whenever what is known may be stale: a check begun before reports nothing. */
  private generation = 0;
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;
  private readonly disposables: vscode.Disposable[] = [this.changed];

  constructor() {
    for (const glob of ['**/.metis/{MEMORY,USER}.md', '**/.metis']) {
      const watcher = vscode.workspace.createFileSystemWatcher(glob, false, true, false);
      this.disposables.push(
        watcher,
        watcher.onDidCreate(() => {
          this.forget();
        }),
        watcher.onDidDelete(() => {
          this.forget();
        }),
      );
    }
    this.disposables.push(
      vscode.workspace.onDidChangeWorkspaceFolders(() => {
        this.forget();
      }),
    );
  }

  /** Whether `workspace` has a memory file; undefined until known (onDidChange then fires). */
  has(workspace: MemoryWorkspace): boolean | undefined {
    const key = workspaceKey(workspace.uri);
    const known = this.known.get(key);
    if (known === undefined) void this.check(workspace.uri, key);
    return known;
  }

  /** What a command that wrote (or found) memory learnt. */
  set(workspace: MemoryWorkspace, has: boolean): void {
    this.known.set(workspaceKey(workspace.uri), has);
    this.changed.fire();
  }

  private forget(): void {
    this.generation++;
    this.known.clear();
    this.changed.fire();
  }

  private async check(uri: vscode.Uri, key: string): Promise<void> {
    if (this.checking.has(key)) return;
    this.checking.add(key);
    const generation = this.generation;
    try {
      const found = await Promise.all(MEMORY_FILES.map((file) => present(vscode.Uri.joinPath(metisDir(uri), file))));
      if (generation === this.generation) this.known.set(key, found.some(Boolean));
    } finally {
      this.checking.delete(key);
    }
    this.changed.fire();
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}

/** Something is there (or cannot be told: not offered as missing); a folder not on disk never is. */
async function present(uri: vscode.Uri): Promise<boolean> {
  if (uri.scheme !== 'file') return true;
  try {
    await vscode.workspace.fs.stat(uri);
    return true;
  } catch (err) {
    return !(err instanceof vscode.FileSystemError && err.code === 'FileNotFound');
  }
}

export interface FirstRun {
  srv: MetisServer;
  presence: MemoryPresence;
  /** Start the server with everything that goes with it (extension.ts). */
  startServer(): void;
}

/** Register **Metis: Create Workspace Memory**: `(workspace key?, file to open?, files?)`. */
export function registerFirstRun(context: vscode.ExtensionContext, run: FirstRun): void {
  context.subscriptions.push(
    vscode.commands.registerCommand(CREATE_COMMAND, async (key?: unknown, open?: unknown, files?: unknown) => {
      try {
        const only = Array.isArray(files) ? files.filter(isMemoryFileName) : undefined;
        await createMemory(
          run,
          typeof key === 'string' ? key : undefined,
          isMemoryFileName(open) ? open : 'MEMORY.md',
          only,
        );
      } catch (err) {
        const text = err instanceof Error ? err.message : String(err);
        run.srv.log.error(text);
        void vscode.window.showErrorMessage(text);
      }
    }),
  );
}

/** Have the server write the missing files from its template, then open `open`. */
async function createMemory(
  run: FirstRun,
  key: string | undefined,
  open: MemoryFileName,
  files?: MemoryFileName[],
): Promise<void> {
  const folder = key !== undefined ? workspaceFromKey(key) : await chooseWorkspace();
  if (!folder) return;
  run.startServer();
  const result = await run.srv.command(ServerCommand.createMemory, {
    workspace: folder.target,
    ...(files && files.length > 0 ? { files } : {}),
  });
  run.presence.set(folder, true);
  run.srv.log.info(result.message);
  const doc = await vscode.workspace.openTextDocument(memoryFileUri(folder, open));
  await vscode.window.showTextDocument(doc, { preview: false });
  const connect = 'Connect Agents…';
  const next = result.created.length > 0 ? [connect] : [];
  void vscode.window.showInformationMessage(result.message, ...next).then((choice) => {
    if (choice === connect) void vscode.commands.executeCommand('metis.setUpAgents');
  });
}

/**
 * "Open MEMORY.md" of a file that is not there: ask (a modal: the user asked to open, not to
 * write) to create it from the template, and open it. With neither file, both are offered.
 */
export async function offerToCreate(folder: MemoryWorkspace, file: MemoryFileName): Promise<void> {
  const other = MEMORY_FILES.find((f) => f !== file) ?? file;
  const otherThere = await present(memoryFileUri(folder, other));
  const create = otherThere ? `Create ${file}` : 'Create Workspace Memory';
  const message = otherThere ? `${folder.name} has no .metis/${file} yet.` : `${folder.name} has no memory yet.`;
  const detail = otherThere
    ? `Create .metis/${file} from a short template that shows the format (a heading and two example entries), and open it? .metis/${other} is left as it is.`
    : `Create Workspace Memory writes .metis/MEMORY.md (facts about this workspace) and .metis/USER.md (facts about you) from a short template that shows the format, then opens .metis/${file}.`;
  const choice = await vscode.window.showInformationMessage(message, { modal: true, detail }, create);
  if (choice !== create) return;
  await vscode.commands.executeCommand(CREATE_COMMAND, folder.uri.toString(), file, otherThere ? [file] : undefined);
}

/**
 * Open the walkthrough on the first activation of this install (globalState, shared by every
 * window), as VS Code does for an extension installed from its Extensions view but not for one
 * installed from the command line or a VSIX. VS Code's own setting turns it off.
 */
export async function openWalkthroughOnce(
  context: vscode.ExtensionContext,
  log: vscode.LogOutputChannel,
): Promise<void> {
  if (context.globalState.get<boolean>(WALKTHROUGH_SHOWN)) return;
  if (!vscode.workspace.getConfiguration('workbench').get<boolean>('welcomePage.walkthroughs.openOnInstall', true))
    return;
  await context.globalState.update(WALKTHROUGH_SHOWN, true);
  log.info('first activation of this install: opening the walkthrough');
  await vscode.commands.executeCommand(
    'workbench.action.openWalkthrough',
    `${context.extension.id}#${WALKTHROUGH}`,
    false,
  );
}
