/** Before starting the server: ask the bundled launcher (`server.py --check`) whether this
 * interpreter can run it, and turn every way it can fail into one sentence. */

import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import type * as vscode from 'vscode';
import { parseCheckReport, stderrSummary } from './interpreter';

const CHECK_TIMEOUT_MS = 30_000;

/** undefined when `python` can run the server at `launcher`, else why not. */
export async function checkInterpreter(
  python: string,
  launcher: string,
  log: vscode.LogOutputChannel,
): Promise<string | undefined> {
  if (!fs.existsSync(launcher)) {
    return `this installation has no bundled server (${launcher} is missing); reinstall the extension`;
  }
  return new Promise((resolve) => {
    execFile(
      python,
      [launcher, '--check'],
      { timeout: CHECK_TIMEOUT_MS, env: { ...process.env, PYTHONNOUSERSITE: '1' } },
      (error, stdout, stderr) => {
        const report = parseCheckReport(stdout);
        if (report) {
          log.info(`interpreter check: Python ${report.version} on ${report.platform} (${report.executable})`);
          resolve(report.ok ? undefined : (report.problem ?? 'it cannot run the server'));
          return;
        }
        const err = error as (NodeJS.ErrnoException & { killed?: boolean }) | null;
        if (stderr.trim()) log.error(`interpreter check stderr:\n${stderr.trim()}`);
        if (err?.code === 'ENOENT') resolve('that file does not exist');
        else if (err?.code === 'EACCES') resolve('that file is not executable');
        else if (err?.killed) resolve(`it did not answer within ${CHECK_TIMEOUT_MS / 1000} s`);
        else {
          resolve(`it is not a Python that can run the server (${stderrSummary(stderr) || errorText(err)})`);
        }
      },
    );
  });
}

/** The message of an error, whatever was thrown. */
export function errorText(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}
