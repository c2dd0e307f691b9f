/** The CPython interpreters on this machine, for tests that run the bundled server on each. */

import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

export const SUPPORTED = ['3.10', '3.11', '3.12', '3.13'];

/**
 * Version ("3.12") -> the interpreter's real executable (`sys.executable`, so a pyenv shim
 * becomes the binary it runs), from versioned names on PATH and pyenv's installs. Looked up
 * once per test process (running every candidate takes seconds).
 */
export function interpreters(): Map<string, string> {
  cached ??= find();
  return cached;
}

let cached: Map<string, string> | undefined;

function find(): Map<string, string> {
  const found = new Map<string, string>();
  const candidates: string[] = [];
  for (const dir of (process.env.PATH ?? '').split(':')) {
    for (const v of ['3.9', ...SUPPORTED, '3.14']) candidates.push(path.join(dir, `python${v}`));
  }
  const pyenv = path.join(os.homedir(), '.pyenv', 'versions');
  if (fs.existsSync(pyenv)) {
    for (const v of fs.readdirSync(pyenv)) candidates.push(path.join(pyenv, v, 'bin', 'python3'));
  }
  for (const exe of candidates) {
    if (!fs.existsSync(exe)) continue;
    const r = spawnSync(exe, ['-c', 'import sys; print("%d.%d" % sys.version_info[:2]); print(sys.executable)'], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    const [version, executable] = (r.stdout ?? '').trim().split('\n');
    if (r.status === 0 && version && executable && !found.has(version)) found.set(version, executable);
  }
  return found;
}

/** The supported interpreters found here, oldest first. */
export function supportedInterpreters(): [string, string][] {
  return [...interpreters()].filter(([v]) => SUPPORTED.includes(v)).sort(([a], [b]) => Number(a.split('.')[1]) - Number(b.split('.')[1]));
}
