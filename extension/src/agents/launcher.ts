/**
 * The `metis-memory` launcher in the user's bin folder: the files Connect Agents writes run
 * the plain command `metis-memory`, and when this machine has none on PATH, this offers (one
 * prompt) a small script that runs the copy this extension carries. The server writes it
 * (`metis.installLauncher`, server/metis_memory/hosts/launcher.py): it decides where, and
 * never touches a file that is not its own. Each time the server starts, a launcher of ours
 * that runs another copy (the extension moved when it updated) is brought up to date.
 */

import * as vscode from 'vscode';
import { ServerCommand, type LauncherStatus } from '../protocol';
import type { MetisServer } from '../server/server';

export const ADD_LAUNCHER = 'Add Launcher';
const NOT_NOW = 'Not Now';
const COPY_LINE = 'Copy PATH Line';
export const PIPX = 'pipx install metis-agent-memory';

/**
 * Rewrite our launcher if it runs another copy (after an update); never create one. Only in a
 * trusted workspace: the server may run on an interpreter the workspace selected.
 */
export async function keepLauncherCurrent(srv: MetisServer, log: vscode.LogOutputChannel): Promise<void> {
  if (!vscode.workspace.isTrusted) return;
  try {
    const result = await srv.command(ServerCommand.installLauncher, { refresh: true });
    if (result.written) log.info(`metis-memory launcher: ${result.message}`);
  } catch (err) {
    log.warn(`metis-memory launcher: not brought up to date: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/**
 * When agents cannot run `metis-memory` here: offer the launcher (a modal prompt), or say
 * what is missing. Resolves to a sentence for the final message (empty when nothing is
 * missing), the shell line to copy, if any, and whether agents still cannot run it (`warn`).
 */
export async function offerLauncher(
  srv: MetisServer,
  onPath: boolean,
  launcher: LauncherStatus,
  log: vscode.LogOutputChannel,
): Promise<{ note: string; pathLine: string | null; warn: boolean }> {
  if (onPath) return { note: '', pathLine: null, warn: false };
  const place = launcher.path;
  const folder = place.replace(/\/metis-memory$/, '');
  if (launcher.state === 'current') {
    return {
      note: ` Agents find metis-memory only once ${folder} is on your PATH: add ${launcher.pathHint ?? 'it'} to your shell's startup file (~/.profile, ~/.bashrc or ~/.zshrc).`,
      pathLine: launcher.pathHint,
      warn: false,
    };
  }
  if (launcher.state !== 'absent' && launcher.state !== 'stale') {
    const theirs =
      launcher.state === 'unsupported'
        ? ''
        : ` (${place} is there but is ${launcher.state === 'edited' ? 'a launcher of this extension you edited' : "not this extension's"}, so it was left alone${launcher.binOnPath ? '' : `, and ${folder} is not on your PATH`})`;
    return {
      note: ` Agents cannot run metis-memory until it is on your PATH${theirs}: install it with ${PIPX}.`,
      pathLine: launcher.state === 'unsupported' ? null : launcher.pathHint,
      warn: true,
    };
  }
  const choice = await vscode.window.showInformationMessage(
    'The agent files run metis-memory, which is not on this machine’s PATH. Add a launcher for it?',
    {
      modal: true,
      detail:
        `${ADD_LAUNCHER} writes ${place}, a small script that runs the Metis Memory this extension carries; ` +
        'the extension keeps it current when it updates. The files name only metis-memory, so they can be ' +
        `committed: each teammate needs metis-memory too (this extension, or ${PIPX}).` +
        (launcher.binOnPath ? '' : `\n\n${folder} is not on your PATH yet: you will get the line to add.`),
    },
    { title: ADD_LAUNCHER },
    { title: NOT_NOW, isCloseAffordance: true },
  );
  if (choice?.title !== ADD_LAUNCHER) {
    return {
      note: ` Agents cannot run metis-memory until it is on your PATH: install it with ${PIPX}, or run Connect Agents… again and choose ${ADD_LAUNCHER}.`,
      pathLine: null,
      warn: true,
    };
  }
  try {
    const result = await srv.command(ServerCommand.installLauncher, {});
    log.info(`metis-memory launcher: ${result.message}`);
    const hint = result.launcher.pathHint;
    const note = hint
      ? ` Added ${place}; agents find it once ${folder} is on your PATH: add ${hint} to your shell's startup file (~/.profile, ~/.bashrc or ~/.zshrc).`
      : ` Added ${place}, which agents run as metis-memory.`;
    return { note, pathLine: hint, warn: false };
  } catch (err) {
    const text = err instanceof Error ? err.message : String(err);
    log.error(`metis-memory launcher: ${text}`);
    return { note: ` ${text}`, pathLine: null, warn: true };
  }
}

/** Show `message` with Show Log (and Copy PATH Line when there is a line to copy). */
export async function report(
  message: string,
  pathLine: string | null,
  log: vscode.LogOutputChannel,
  warn: boolean,
): Promise<void> {
  const buttons = pathLine ? [COPY_LINE, 'Show Log'] : ['Show Log'];
  const show = warn ? vscode.window.showWarningMessage : vscode.window.showInformationMessage;
  const choice = await show(message, ...buttons);
  if (choice === COPY_LINE && pathLine) {
    await vscode.env.clipboard.writeText(pathLine);
    void vscode.window.setStatusBarMessage('Metis Memory: copied the PATH line', 3000);
  } else if (choice === 'Show Log') log.show();
}
