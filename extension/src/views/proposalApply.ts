/**
 * "Apply" of a consolidation proposal: write it with `metis.memoryConsolidate`, as a
 * compare-and-swap against the bytes the diff was made from (`expectedHash`). The server
 * checks the hash under the store's lock, so a write that landed since the proposal opened
 * (an agent's add, a shell) is never overwritten: it answers `conflict`, and the diff is
 * reopened on the current file. The server decides everything else, the hard cap included.
 */

import * as vscode from 'vscode';
import type { MemoryWorkspace } from '../folders';
import { ServerCommand, type MemoryFileName, type WriteResult } from '../protocol';
import { MetisCommandError } from '../server/commandError';
import type { MetisServer } from '../server/server';

export interface AppliedProposal {
  workspace: MemoryWorkspace;
  file: MemoryFileName;
  /** The file's content on disk when the proposal was opened ("" when missing). */
  baseline: string;
  /** sha256 of those bytes: the write is refused if the file no longer hashes to it. */
  baselineHash: string;
}

/** The write's result, or undefined when nothing was written (the user has been told why). */
export async function applyProposal(
  server: MetisServer,
  p: AppliedProposal,
  content: string,
  startOver: () => void,
): Promise<WriteResult | undefined> {
  try {
    return await server.command(ServerCommand.memoryConsolidate, {
      file: p.file,
      content,
      workspace: p.workspace.uri.toString(),
      expectedHash: p.baselineHash,
    });
  } catch (err) {
    if (err instanceof MetisCommandError && err.code === 'conflict') {
      // Reopening replaces the proposal with a fresh one: the one being applied is kept on
      // the clipboard, where the browser lets us write it.
      const kept = await vscode.env.clipboard.writeText(content).then(
        () => ' The one you were applying is on the clipboard.',
        () => '',
      );
      void vscode.window.showWarningMessage(
        `Not applied: ${p.file} changed on disk since this proposal was opened, and applying it would ` +
          `have overwritten that change. The proposal was reopened on the current file.${kept}`,
      );
      startOver();
      return undefined;
    }
    const text = err instanceof MetisCommandError ? err.message : String(err);
    void vscode.window.showErrorMessage(`Not applied: ${text}`);
    return undefined;
  }
}
