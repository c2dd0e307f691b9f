/**
 * "Apply" of a consolidation proposal: write it with `metis.memoryConsolidate`, as a
 * compare-and-swap against the bytes the diff was made from (`expectedHash`). The server
 * checks the hash under the store's lock, so a write that landed since the proposal opened
 * (an agent's add, a shell) is never overwritten: it answers `conflict`, and the diff is
 * reopened on the current file. The server decides everything else, the hard cap included.
 */

import * as vscode from 'vscode';
import { docArgs, sentenceName, type MemoryDoc } from '../folders';
import { ServerCommand, type WriteResult } from '../protocol';
import { MetisCommandError, textForPeople } from '../server/commandError';
import { ownWrite } from './notifications';

/** The button that runs "Metis: Draft with Language Model" on the proposal. */
export const DRAFT = 'Draft with Language Model';
import type { MetisServer } from '../server/server';

export interface AppliedProposal {
  /** The file it is for: a workspace's, or the user memory. */
  doc: MemoryDoc;
  /** The file's content on disk when the proposal was opened ("" when missing). */
  baseline: string;
  /** sha256 of those bytes: the write is refused if the file no longer hashes to it. */
  baselineHash: string;
  /** What a refused Apply (the file changed since) opens instead: a fresh proposal of the same
   * kind (an import's is made again). Left out: the file's tidy proposal. */
  startOver?: () => void;
}

/** The write's result, or undefined when nothing was written (the user has been told why).
 * `draft` is the "Draft with Language Model" offer when a proposal is still over the hard cap
 * (undefined when the editor has no model). */
export async function applyProposal(
  server: MetisServer,
  p: AppliedProposal,
  content: string,
  startOver: () => void,
  draft?: () => void,
): Promise<WriteResult | undefined> {
  try {
    // Its eviction, if any, is in the one message the caller shows (`ownWrite`).
    return await ownWrite(p.doc.file, () =>
      server.command(ServerCommand.memoryConsolidate, { ...docArgs(p.doc), content, expectedHash: p.baselineHash }),
    );
  } catch (err) {
    if (err instanceof MetisCommandError && err.code === 'conflict') {
      // Reopening replaces the proposal with a fresh one: the one being applied is kept on
      // the clipboard, where the browser lets us write it.
      const kept = await vscode.env.clipboard.writeText(content).then(
        () => ' The one you were applying is on the clipboard.',
        () => '',
      );
      void vscode.window.showWarningMessage(
        `Not applied: ${sentenceName(p.doc)} changed on disk since this proposal was opened, and applying it would ` +
          `have overwritten that change. The proposal was reopened on the current file.${kept}`,
      );
      startOver();
      return undefined;
    }
    const text = textForPeople(err);
    const shown = /^Not applied\b/.test(text) ? text : `Not applied: ${text}`;
    if (err instanceof MetisCommandError && err.code === 'hard_cap_exceeded' && draft) {
      // Still too large: the server's words say what to cut; the model can do it.
      void vscode.window.showWarningMessage(shown, DRAFT).then((choice) => {
        if (choice === DRAFT) draft();
      });
      return undefined;
    }
    void vscode.window.showErrorMessage(shown);
    return undefined;
  }
}
