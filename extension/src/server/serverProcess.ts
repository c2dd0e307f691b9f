/**
 * The language server's process: started with the bundled launcher (`server.py lsp`), which
 * imports the server and then writes one report line on stderr saying whether this
 * interpreter can run it. Waiting for that line turns every way a start can fail into one
 * sentence, in the same process that then serves (a separate `--check` first imported the
 * whole server twice, about 1 s of every start).
 */

import { spawn, type ChildProcess, type ChildProcessWithoutNullStreams } from 'node:child_process';
import * as fs from 'node:fs';
import { parseLaunchReport, stderrSummary, type CheckReport } from './interpreter';

export const LAUNCH_TIMEOUT_MS = 30_000;

/** The part of the log channel a server process writes to. */
export interface ProcessLog {
  info(message: string): void;
  error(message: string): void;
  append(text: string): void;
}

export type Launch = { process: ChildProcessWithoutNullStreams; report: CheckReport } | { problem: string };

/** `python launcher lsp`, its stderr going to the log for as long as it runs. */
export function spawnServer(python: string, launcher: string, log: ProcessLog): ChildProcessWithoutNullStreams {
  const child = spawn(python, [launcher, 'lsp'], {
    env: { ...process.env, PYTHONUNBUFFERED: '1', PYTHONNOUSERSITE: '1' },
    stdio: 'pipe',
  });
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => {
    log.append(chunk);
  });
  child.on('error', () => undefined); // reported by launchServer, or as a closed connection
  return child;
}

/**
 * Start the server and wait for its launch report: the running process when the interpreter
 * can run the server, else why not (the process is then gone).
 */
export function launchServer(python: string, launcher: string, log: ProcessLog): Promise<Launch> {
  if (!fs.existsSync(launcher)) {
    return Promise.resolve({
      problem: `this installation has no bundled server (${launcher} is missing); reinstall the extension`,
    });
  }
  return new Promise((resolve) => {
    const child = spawnServer(python, launcher, log);
    let stderr = '';
    let settled = false;
    const settle = (launch: Launch): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(launch);
    };
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      settle({ problem: `it did not answer within ${LAUNCH_TIMEOUT_MS / 1000} s` });
    }, LAUNCH_TIMEOUT_MS);
    child.stderr.on('data', (chunk: string) => {
      if (settled) return;
      stderr += chunk;
      const report = parseLaunchReport(stderr);
      if (report?.ok) {
        log.info(`server launched: Python ${report.version} on ${report.platform} (${report.executable})`);
        settle({ process: child, report });
      }
      // A report that it cannot: the process exits next, with the rest of its story.
    });
    child.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') settle({ problem: 'that file does not exist' });
      else if (err.code === 'EACCES') settle({ problem: 'that file is not executable' });
      else settle({ problem: `it could not be started (${err.message})` });
    });
    child.on('close', (code, signal) => {
      if (settled) return;
      const report = parseLaunchReport(stderr);
      if (report && !report.ok) {
        settle({ problem: report.problem ?? 'it cannot run the server' });
        return;
      }
      const exit = signal ? `killed by ${signal}` : `exit code ${String(code)}`;
      log.error(`the server stopped before it started (${exit})`);
      settle({ problem: `it is not a Python that can run the server (${stderrSummary(stderr) || exit})` });
    });
  });
}

/** Stop a server the client has let go of, if it has not exited by itself within `graceMs`. */
export function reap(child: ChildProcess, graceMs = 2_000): void {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const timer = setTimeout(() => {
    child.kill('SIGTERM');
  }, graceMs);
  child.once('exit', () => {
    clearTimeout(timer);
  });
}

/** The message of an error, whatever was thrown. */
export function errorText(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}
