/**
 * Metis Memory for VS Code: a thin shell around the language server (`metis-memory lsp`).
 * It starts the server, renders what the server computes (diagnostics, usage, the assembled
 * prompt) and forwards commands; every memory rule lives in the server. It also tells VS Code's
 * MCP support how to start the MCP server (`metis-memory mcp`) for each folder. Here: the
 * wiring; the command table is in commands.ts, the notifications in notifications.ts, the
 * first run (Create Workspace Memory, the walkthrough) in views/firstRun.ts.
 *
 * It activates in every window once VS Code has started (`onStartupFinished`), so that a folder
 * with no memory yet shows "Create Memory" in the status bar; what costs anything (the Python
 * server, the language-model query) waits until memory is in sight, or, once per folder ever,
 * until it has looked for agents' memory to offer to bring in (views/importMemory.ts).
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { AgentContextView } from './views/agentContext';
import { offerAgentSetup } from './agents/connect';
import { createApi, type MemoryUpdatedEvent, type MetisMemoryApi } from './api';
import { registerCommands } from './commands';
import { Consolidation } from './views/consolidation';
import { MemoryPresence, openWalkthroughOnce, registerFirstRun } from './views/firstRun';
import { isMemoryDocument } from './folders';
import { ROOT_MARKERS } from './generated/agentFiles';
import { registerMcpServerProvider } from './agents/mcp';
import { handleNotifications } from './views/notifications';
import { PromptDocuments } from './views/prompt';
import { onDidChangePythonInterpreter } from './server/pythonExtension';
import { MetisServer } from './server/server';
import { UsageStatusBar } from './views/statusBar';
import { HistoryDocuments } from './views/historyDiff';
import { HistoryView } from './views/history';
import { ReviewInbox } from './views/reviewInbox';
import { HostMemoryImport } from './views/importMemory';
import { registerTools } from './agents/tools';

let server: MetisServer | undefined;

export function activate(context: vscode.ExtensionContext): MetisMemoryApi {
  const began = performance.now();
  const log = vscode.window.createOutputChannel('Metis Memory', { log: true });
  const srv = new MetisServer(context, log);
  server = srv;
  const presence = new MemoryPresence();
  const statusBar = new UsageStatusBar(srv, presence);
  const agentContext = new AgentContextView(srv);
  agentContext.onDidChangeWorst((level) => {
    statusBar.setAgentLevel(level);
  });
  const prompts = new PromptDocuments(srv);
  const consolidation = new Consolidation(srv);
  const updated = new vscode.EventEmitter<MemoryUpdatedEvent>();
  const inbox = new ReviewInbox(srv, statusBar);
  const historyDocuments = new HistoryDocuments(srv, (workspace, id) => inbox.find(workspace, id));
  const history = new HistoryView(srv, historyDocuments, inbox);
  const imports = new HostMemoryImport(context, srv, consolidation, log);
  context.subscriptions.push(
    log,
    srv,
    presence,
    statusBar,
    agentContext,
    prompts,
    consolidation,
    updated,
    inbox,
    historyDocuments,
    history,
    imports,
    updated.event(() => {
      history.refresh();
    }),
    registerTools(srv),
  );

  handleNotifications(srv, { log, statusBar, prompts, consolidation, updated });
  registerCommands(context, srv, log, consolidation, agentContext, history, inbox, imports);

  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration('metis.interpreter')) void srv.restart();
    }),
  );

  // Activated in every window (and by a markdown file, a memory file opened outside every
  // folder having no other event): start the server only once memory is in sight, not for
  // every README or every folder.
  let started = false;
  const startServer = () => {
    if (started) return;
    started = true;
    void srv.start().then((ok) => (ok ? offerAgentSetup(context, srv, log) : undefined));
    void onDidChangePythonInterpreter(() => void srv.pythonInterpreterChanged(), log).then((listening) => {
      if (listening) context.subscriptions.push(listening);
    });
    // Asking for models may activate their providers: only where a proposal can be drafted.
    void updateModelContext();
    context.subscriptions.push(vscode.lm.onDidChangeChatModels(() => void updateModelContext()));
  };
  registerFirstRun(context, { srv, presence, startServer });
  // …or once per folder ever, to look for agents' memory to bring in (views/importMemory.ts).
  const startIfInSight = async () => {
    if ((await memoryInSight()) || imports.wantsToLook()) startServer();
  };
  context.subscriptions.push(
    vscode.workspace.onDidOpenTextDocument((doc) => {
      if (isMemoryDocument(doc.uri)) startServer();
    }),
    vscode.workspace.onDidChangeWorkspaceFolders(() => void startIfInSight()),
  );
  void startIfInSight();
  const declared = (context.extension.packageJSON as { version?: unknown }).version;
  const version = typeof declared === 'string' ? declared : '0';
  context.subscriptions.push(registerMcpServerProvider(srv, version));
  void openWalkthroughOnce(context, log);
  log.info(`activated in ${(performance.now() - began).toFixed(1)} ms`);

  return createApi(srv, updated, version);
}

export async function deactivate(): Promise<void> {
  await server?.stop();
  server = undefined;
}

/** A memory file is open, or a folder is a `.metis/` or holds a file that means an agent reads it
 * (the generated markers, the same as the workspaceContains events). */
async function memoryInSight(): Promise<boolean> {
  if (vscode.workspace.textDocuments.some((d) => isMemoryDocument(d.uri))) return true;
  for (const folder of vscode.workspace.workspaceFolders ?? []) {
    if (folder.uri.scheme !== 'file' || path.basename(folder.uri.fsPath) === '.metis') return true;
    for (const marker of ROOT_MARKERS) {
      const found = /[*?[{]/.test(marker)
        ? (await vscode.workspace.findFiles(new vscode.RelativePattern(folder, marker), null, 1)).length > 0
        : fs.existsSync(path.join(folder.uri.fsPath, marker));
      if (found) return true;
    }
  }
  return false;
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
