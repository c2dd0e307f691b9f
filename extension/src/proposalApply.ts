/**
 * "Apply" of a consolidation proposal: write it with `metis.memoryConsolidate` unless the file
 * changed on disk since the proposal was opened (applying then could lose that change). The
 * server decides everything else, the hard cap included, and says why when it refuses.
 */

import * as vscode from 'vscode';
import { memoryUri, readDisk } from './folders';
import { formatBytes, utf8Length } from './format';
import { ServerCommand, type MemoryFileName, type WriteResult } from './protocol';
import { MetisCommandError } from './commandError';
import type { MetisServer } from './server';

export interface AppliedProposal {
  folder: vscode.WorkspaceFolder;
  file: MemoryFileName;
  /** The file's content on disk when the proposal was opened ("" when missing). */
  baseline: string;
}

/** The write's result, or undefined when nothing was written (the user has been told why). */
export async function applyProposal(
  server: MetisServer,
  p: AppliedProposal,
  content: string,
  startOver: () => void,
): Promise<WriteResult | undefined> {
  const disk = (await readDisk(memoryUri(p.folder, p.file))) ?? '';
  if (disk !== p.baseline) {
    const reopen = 'Start Over from Current File';
    void vscode.window
      .showErrorMessage(
        `Not applied: ${p.file} changed on disk since this proposal was opened ` +
          `(${formatBytes(utf8Length(p.baseline))} then, ${formatBytes(utf8Length(disk))} now), so applying it ` +
          'could lose that change. Start over from the current file, or copy your edits first.',
        reopen,
      )
      .then((choice) => {
        if (choice === reopen) startOver();
      });
    return undefined;
  }
  try {
    return await server.command(ServerCommand.memoryConsolidate, {
      file: p.file,
      content,
      workspace: p.folder.uri.toString(),
    });
  } catch (err) {
    const text = err instanceof MetisCommandError ? err.message : String(err);
    void vscode.window.showErrorMessage(`Not applied: ${text}`);
    return undefined;
  }
}
