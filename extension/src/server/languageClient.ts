/**
 * The vscode-languageclient for one server process: how it is started, which documents it
 * sees, what the client declares, and what happens when the process fails or stops.
 */

import type { ChildProcess, ChildProcessWithoutNullStreams } from 'node:child_process';
import * as os from 'node:os';
import * as vscode from 'vscode';
import {
  CloseAction,
  ErrorAction,
  LanguageClient,
  RevealOutputChannelOn,
  type DocumentSelector,
  type LanguageClientOptions,
  type ServerOptions,
} from 'vscode-languageclient/node';
import { HOME_AGENT_GLOBS, WORKSPACE_AGENT_GLOBS } from '../generated/agentFiles';
import { errorText, spawnServer } from './serverProcess';
import { ClientCommand, type InitializationOptions } from '../protocol';

const CRASH_WINDOW_MS = 180_000;
const CRASHES_TOLERATED = 3;

export interface ClientHooks {
  log: vscode.LogOutputChannel;
  /** The server cannot run: `what` says why, for the one notification. */
  fail(what: string): void;
  /** Times of recent unexpected stops, kept by the caller across restarts. */
  crashes: number[];
  /** Each process the client talks to, the first and every restart's. */
  serving(process: ChildProcess): void;
}

/**
 * The documents the server sees: memory files, budgets.toml and every built-in budget's files
 * (generated from the server's catalogue), consolidation proposals, and Markdown (the server's
 * structural checks read notes, Copilot instructions, Cursor's ignored `.md` rules). Budgets a
 * user declares in `.metis/budgets.toml` the server adds itself, by dynamic registration.
 */
export function documentSelector(home = os.homedir()): DocumentSelector {
  const inHome = home.replace(/\\/g, '/').replace(/\/$/, '');
  return [
    ...WORKSPACE_AGENT_GLOBS.map((glob) => ({ scheme: 'file', pattern: glob.startsWith('**/') ? glob : `**/${glob}` })),
    ...HOME_AGENT_GLOBS.map((glob) => ({ scheme: 'file', pattern: `${inHome}/${glob}` })),
    // Consolidation proposals: the server analyses them as the file they are for.
    { scheme: 'metis-proposal' },
    { scheme: 'file', language: 'markdown' },
  ];
}

/**
 * A client for `first`, a server already launched (and past its launch report); a restart
 * after a crash launches `python launcher lsp` again, as a client starting it itself would.
 */
export function createLanguageClient(
  first: ChildProcessWithoutNullStreams,
  python: string,
  launcher: string,
  hooks: ClientHooks,
): LanguageClient {
  let unused: ChildProcessWithoutNullStreams | undefined = first;
  const serverOptions: ServerOptions = () => {
    const child = unused ?? spawnServer(python, launcher, hooks.log);
    unused = undefined;
    hooks.serving(child);
    // Streams, not the process: its stderr already goes to the log (spawnServer).
    return Promise.resolve({ reader: child.stdout, writer: child.stdin, detached: false });
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: documentSelector(),
    initializationOptions: {
      clientCommands: Object.values(ClientCommand),
    } satisfies InitializationOptions,
    outputChannel: hooks.log,
    traceOutputChannel: hooks.log,
    revealOutputChannelOn: RevealOutputChannelOn.Never,
    initializationFailedHandler: (error: unknown) => {
      hooks.fail(`the server failed to initialise: ${errorText(error)}`);
      return false;
    },
    errorHandler: {
      error: (_error, _message, count) => ({
        action: (count ?? 0) <= 3 ? ErrorAction.Continue : ErrorAction.Shutdown,
        handled: true,
      }),
      closed: () => {
        const now = Date.now();
        const recent = [...hooks.crashes.filter((t) => now - t < CRASH_WINDOW_MS), now];
        hooks.crashes.splice(0, hooks.crashes.length, ...recent);
        if (recent.length <= CRASHES_TOLERATED) {
          hooks.log.warn(`the server stopped unexpectedly; restarting (${recent.length} of ${CRASHES_TOLERATED})`);
          return { action: CloseAction.Restart, handled: true };
        }
        hooks.fail(
          `the server stopped ${recent.length} times in ${CRASH_WINDOW_MS / 60_000} minutes (the log shows why)`,
        );
        return { action: CloseAction.DoNotRestart, handled: true };
      },
    },
  };
  return new LanguageClient('metis', 'Metis Memory', serverOptions, clientOptions);
}
