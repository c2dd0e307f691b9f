/**
 * Metis Memory for VS Code: a thin shell around the language server (`metis-memory lsp`).
 * It starts the server, renders what the server computes (diagnostics, usage, the assembled
 * prompt) and forwards commands; every memory rule lives in the server. It also tells VS Code's
 * MCP support how to start the MCP server (`metis-memory mcp`) for each folder.
 */

import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { connectAgents, offerAgentSetup } from './agents';
import { API_VERSION, toUpdatedEvent, type MemoryUpdatedEvent, type MetisMemoryApi } from './api';
import { Consolidation } from './consolidation';
import { formatBytes } from './format';
import {
  activeFolder,
  chooseFolder,
  folderFromKey,
  isMemoryDocument,
  memoryRoot,
  memoryUri,
  readDisk,
} from './folders';
import { findOnPath } from './interpreter';
import { currentMcpServerSpecs, registerMcpServerProvider } from './mcp';
import { assemblePrompt, PromptDocuments } from './prompt';
import {
  isMemoryFileName,
  ClientCommand,
  ServerCommand,
  ServerNotification,
  type MemoryEvictionParams,
  type MemoryFileName,
  type MemoryUpdatedParams,
  type OpenConsolidationArgs,
  type ReplaceEntryPromptArgs,
  type Usage,
  type UsageChangedParams,
  type WriteResult,
} from './protocol';
import { MetisCommandError, MetisServer } from './server';
import { UsageStatusBar } from './statusBar';
import { registerTools } from './tools';

let server: MetisServer | undefined;

export function activate(context: vscode.ExtensionContext): MetisMemoryApi {
  const log = vscode.window.createOutputChannel('Metis Memory', { log: true });
  const srv = new MetisServer(context, log);
  server = srv;
  const statusBar = new UsageStatusBar(srv);
  const prompts = new PromptDocuments(srv);
  const consolidation = new Consolidation(srv, (folder) => statusBar.get(folder));
  const updated = new vscode.EventEmitter<MemoryUpdatedEvent>();
  context.subscriptions.push(log, srv, statusBar, prompts, consolidation, updated, registerTools(srv));

  // Server -> client notifications.
  srv.onNotification(ServerNotification.usageChanged, (params) => {
    const p = params as UsageChangedParams;
    statusBar.update(p.workspace, p.usage);
    prompts.refresh(p.workspace);
  });
  srv.onNotification(ServerNotification.memoryUpdated, (params) => {
    const p = params as MemoryUpdatedParams;
    log.info(`${p.file}: ${p.operation} ${formatBytes(p.before_size_bytes)} -> ${formatBytes(p.after_size_bytes)}`);
    prompts.refresh(p.workspace);
    const folder = folderFromKey(p.workspace);
    updated.fire(toUpdatedEvent(p, folder?.uri ?? vscode.Uri.parse(p.workspace)));
  });
  // One eviction message per file at a time: an agent's burst of writes must not stack toasts.
  const evictionShown = new Set<string>();
  srv.onNotification(ServerNotification.memoryEviction, (params) => {
    const p = params as MemoryEvictionParams;
    const key = `${p.workspace}|${p.file}`;
    if (evictionShown.has(key)) return;
    evictionShown.add(key);
    const folder = folderFromKey(p.workspace);
    const cap = folder ? statusBar.get(folder.uri)?.[p.file]?.soft_cap : undefined;
    const capText = cap !== undefined ? `, over its ${formatBytes(cap)} soft cap` : ', over its soft cap';
    const consolidate = 'Consolidate…';
    void vscode.window
      .showWarningMessage(
        `${p.file}${folder ? ` in ${folder.name}` : ''} is now ${formatBytes(p.size_after_bytes)}${capText}: ` +
          'consolidate it so memory stays sharp (writes past the hard cap will be refused).',
        consolidate,
      )
      .then((choice) => {
        evictionShown.delete(key);
        if (choice === consolidate) void consolidation.openFor(p.workspace, p.file, chooseFolder);
      });
  });

  const run = (fn: () => Promise<unknown>) => async () => {
    try {
      await fn();
    } catch (err) {
      const text = err instanceof MetisCommandError ? err.message : err instanceof Error ? err.message : String(err);
      log.error(text);
      void vscode.window.showErrorMessage(text);
    }
  };
  const register = (id: string, fn: (...args: never[]) => Promise<unknown>) =>
    context.subscriptions.push(
      vscode.commands.registerCommand(id, async (...args: unknown[]) => run(() => fn(...(args as never[])))()),
    );

  register('metis.open.memory', () => openMemoryFile('MEMORY.md'));
  register('metis.open.user', () => openMemoryFile('USER.md'));
  register('metis.addEntry', () => addEntry(srv));
  register('metis.consolidate.memory', async () => {
    const folder = await chooseFolder();
    if (folder) await consolidation.open(folder, 'MEMORY.md');
  });
  register('metis.consolidate.user', async () => {
    const folder = await chooseFolder();
    if (folder) await consolidation.open(folder, 'USER.md');
  });
  register(ClientCommand.openConsolidation, async (args?: OpenConsolidationArgs) => {
    const file = isMemoryFileName(args?.file) ? args.file : await pickFile('Consolidate which file?');
    if (file) await consolidation.openFor(args?.workspace, file, chooseFolder);
  });
  register('metis.applyConsolidation', (uri?: vscode.Uri) => consolidation.apply(uri));
  register('metis.draftWithModel', () => consolidation.draftWithModel());
  register(ClientCommand.replaceEntryPrompt, (args?: ReplaceEntryPromptArgs) => replaceEntry(srv, args));
  register('metis.showPrompt', async () => {
    const folder = await chooseFolder();
    if (!folder) return;
    const doc = await vscode.workspace.openTextDocument(PromptDocuments.uriFor(folder));
    await vscode.window.showTextDocument(doc, { preview: false });
  });
  register('metis.copyPrompt', async () => {
    const folder = await chooseFolder();
    if (!folder) return;
    const text = await assemblePrompt(srv, folder.uri);
    await vscode.env.clipboard.writeText(text);
    void vscode.window.showInformationMessage(
      `Copied the assembled prompt of ${folder.name} (${formatBytes(new TextEncoder().encode(text).length)}).`,
    );
  });
  register('metis.restartServer', async () => {
    log.info('restart requested');
    if (await srv.restart()) void vscode.window.setStatusBarMessage('Metis Memory: server restarted', 3000);
  });
  register('metis.selectInterpreter', () => selectInterpreter());
  register('metis.showLog', () => {
    log.show();
    return Promise.resolve();
  });
  register('metis.showActions', () => showActions());
  register('metis.setUpAgents', async () => {
    const folder = await chooseFolder();
    if (folder) await connectAgents(srv, folder, log);
  });

  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration('metis.interpreter')) void srv.restart();
    }),
  );
  void updateModelContext();
  context.subscriptions.push(vscode.lm.onDidChangeChatModels(() => void updateModelContext()));

  // Activated by a markdown file (a memory file opened outside every folder has no other
  // event): start the server only once memory is in sight, not for every README.
  let started = false;
  const startServer = () => {
    if (started) return;
    started = true;
    void srv.start().then((ok) => (ok ? offerAgentSetup(context, srv, log) : undefined));
  };
  if (memoryInSight()) startServer();
  else {
    const watch = [
      vscode.workspace.onDidOpenTextDocument((doc) => {
        if (isMemoryDocument(doc.uri)) startServer();
      }),
      vscode.workspace.onDidChangeWorkspaceFolders(() => {
        if (memoryInSight()) startServer();
      }),
    ];
    context.subscriptions.push(...watch);
  }
  const declared = (context.extension.packageJSON as { version?: unknown }).version;
  const version = typeof declared === 'string' ? declared : '0';
  context.subscriptions.push(registerMcpServerProvider(srv, version));

  const folderOrActive = (folder?: vscode.Uri): string => {
    const f = folder ?? activeFolder()?.uri;
    if (!f) throw new MetisCommandError('No workspace folder is open.', 'no_workspace');
    return f.toString();
  };
  const api: MetisMemoryApi = {
    apiVersion: API_VERSION,
    assemblePrompt: (base, folder) =>
      srv.command<string>(ServerCommand.assemblePrompt, { base, workspace: folderOrActive(folder) }),
    usage: (folder) => srv.command<Usage>(ServerCommand.usage, { workspace: folderOrActive(folder) }),
    memoryAdd: (file, entry, folder) =>
      srv.command<WriteResult>(ServerCommand.memoryAdd, { file, entry, workspace: folderOrActive(folder) }),
    memoryReplace: (file, oldText, newText, folder) =>
      srv.command<WriteResult>(ServerCommand.memoryReplace, {
        file,
        old: oldText,
        new: newText,
        workspace: folderOrActive(folder),
      }),
    memoryConsolidate: (file, content, folder) =>
      srv.command<WriteResult>(ServerCommand.memoryConsolidate, { file, content, workspace: folderOrActive(folder) }),
    onDidUpdateMemory: updated.event,
    mcpServerDefinition: async (folder) => {
      const wanted = folderOrActive(folder);
      if (!vscode.workspace.workspaceFolders?.some((f) => f.uri.toString() === wanted)) {
        throw new MetisCommandError(`${wanted} is not a workspace folder of this window.`, 'no_workspace');
      }
      const specs = await currentMcpServerSpecs(srv, version);
      return specs.find((s) => s.folder.uri.toString() === wanted)?.spec;
    },
  };
  return api;
}

export async function deactivate(): Promise<void> {
  await server?.stop();
  server = undefined;
}

/** A memory file is open, or a folder holds `.metis/` (as the workspaceContains events say). */
function memoryInSight(): boolean {
  if (vscode.workspace.textDocuments.some((d) => isMemoryDocument(d.uri))) return true;
  return (vscode.workspace.workspaceFolders ?? []).some(
    (f) => f.uri.scheme !== 'file' || fs.existsSync(path.join(memoryRoot(f.uri).fsPath, '.metis')),
  );
}

async function updateModelContext(): Promise<void> {
  let available: boolean;
  try {
    available = (await vscode.lm.selectChatModels()).length > 0;
  } catch {
    available = false;
  }
  await vscode.commands.executeCommand('setContext', 'metis.lmAvailable', available);
}

async function pickFile(placeHolder: string): Promise<MemoryFileName | undefined> {
  const picked = await vscode.window.showQuickPick(
    [
      { label: 'MEMORY.md', description: 'facts about this workspace' },
      { label: 'USER.md', description: 'facts about the user' },
    ],
    { placeHolder },
  );
  return picked && isMemoryFileName(picked.label) ? picked.label : undefined;
}

/** Open a memory file; a missing one opens as an unsaved editor, so `.metis/` appears on save. */
async function openMemoryFile(file: MemoryFileName): Promise<void> {
  const folder = await chooseFolder();
  if (!folder) return;
  const uri = memoryUri(folder, file);
  const exists = (await readDisk(uri)) !== undefined;
  const target = exists ? uri : uri.with({ scheme: 'untitled' });
  const doc = await vscode.workspace.openTextDocument(target);
  await vscode.window.showTextDocument(doc, { preview: false });
}

async function addEntry(srv: MetisServer): Promise<void> {
  const folder = await chooseFolder();
  if (!folder) return;
  const file = await pickFile('Add an entry to which file?');
  if (!file) return;
  const entry = await vscode.window.showInputBox({
    title: `Add an entry to ${file}`,
    prompt: 'One short, specific fact (a "- " list item is added when you leave it out).',
    validateInput: (v) => (v.trim() === '' ? 'An entry cannot be empty.' : undefined),
  });
  if (entry === undefined) return;
  const result = await srv.command<WriteResult>(ServerCommand.memoryAdd, {
    file,
    entry,
    workspace: folder.uri.toString(),
  });
  // Over the soft cap, the server's eviction notification says so (with "Consolidate…").
  if (!result.over_soft_cap) void vscode.window.showInformationMessage(result.message);
}

async function replaceEntry(srv: MetisServer, args?: ReplaceEntryPromptArgs): Promise<void> {
  const folder = folderFromKey(args?.workspace) ?? (await chooseFolder());
  if (!folder) return;
  const file = isMemoryFileName(args?.file) ? args.file : await pickFile('Replace text in which file?');
  if (!file) return;
  const old =
    typeof args?.old === 'string'
      ? args.old
      : await vscode.window.showInputBox({
          title: `Text to replace in ${file}`,
          prompt: 'It must occur exactly once.',
        });
  if (old === undefined) return;
  const replacement = await vscode.window.showInputBox({
    title: `Replace entry in ${file}`,
    prompt: 'The new text (empty removes the entry).',
    value: old,
  });
  if (replacement === undefined) return;
  const result = await srv.command<WriteResult>(ServerCommand.memoryReplace, {
    file,
    old,
    new: replacement,
    workspace: folder.uri.toString(),
  });
  if (!result.over_soft_cap) void vscode.window.showInformationMessage(result.message);
}

async function selectInterpreter(): Promise<void> {
  const names = ['python3.13', 'python3.12', 'python3.11', 'python3.10', 'python3', 'python'];
  const paths = [...new Set(names.map((name) => findOnPath([name])).filter((p): p is string => p !== undefined))];
  // Offer only interpreters that run, with their version (pyenv shims, for one, may not).
  const checked = await Promise.all(paths.map(async (p) => ({ path: p, version: await pythonVersion(p) })));
  const items: (vscode.QuickPickItem & { value?: string })[] = [
    ...checked
      .filter((c): c is { path: string; version: string } => c.version !== undefined)
      .map((c) => ({ label: c.path, description: `Python ${c.version}`, value: c.path })),
    { label: '$(folder-opened) Browse…', value: '<browse>' },
    {
      label: '$(clear-all) Automatic',
      description: 'the Python extension’s interpreter, else python3 on PATH',
      value: '',
    },
  ];
  const picked = await vscode.window.showQuickPick(items, {
    placeHolder: 'Python (CPython 3.10–3.13) for the Metis Memory server',
  });
  if (!picked) return;
  let value = picked.value ?? '';
  if (value === '<browse>') {
    const chosen = await vscode.window.showOpenDialog({ canSelectMany: false, title: 'Python interpreter' });
    if (!chosen?.[0]) return;
    value = chosen[0].fsPath;
  }
  // Saving the setting restarts the server (see onDidChangeConfiguration).
  await vscode.workspace.getConfiguration('metis').update('interpreter', value, vscode.ConfigurationTarget.Global);
}

function pythonVersion(exe: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile(exe, ['-c', 'import platform; print(platform.python_version())'], { timeout: 10_000 }, (err, stdout) => {
      resolve(err ? undefined : stdout.trim() || undefined);
    });
  });
}

async function showActions(): Promise<void> {
  const actions: { label: string; command: string }[] = [
    { label: '$(go-to-file) Open MEMORY.md', command: 'metis.open.memory' },
    { label: '$(go-to-file) Open USER.md', command: 'metis.open.user' },
    { label: '$(add) Add Entry…', command: 'metis.addEntry' },
    { label: '$(fold) Consolidate MEMORY.md…', command: 'metis.consolidate.memory' },
    { label: '$(fold) Consolidate USER.md…', command: 'metis.consolidate.user' },
    { label: '$(preview) Show Assembled Prompt', command: 'metis.showPrompt' },
    { label: '$(copy) Copy Assembled Prompt', command: 'metis.copyPrompt' },
    { label: '$(debug-restart) Restart Server', command: 'metis.restartServer' },
    { label: '$(symbol-namespace) Select Python Interpreter…', command: 'metis.selectInterpreter' },
    { label: '$(output) Show Log', command: 'metis.showLog' },
  ];
  const picked = await vscode.window.showQuickPick(actions, { placeHolder: 'Metis Memory' });
  if (picked) await vscode.commands.executeCommand(picked.command);
}
