/** The CPython interpreters on this machine, for tests that run the bundled server on each. */

import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** What the VSIX carries libraries for (scripts/bundle_python.py); `t`: free-threaded. */
export const SUPPORTED = ['3.10', '3.11', '3.12', '3.13', '3.14', '3.15', '3.14t'];

/** The bundle folder of a version: 3.14t -> cp314t. */
export function tagOf(version: string): string {
  return `cp${version.replace('.', '')}`;
}

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
    for (const v of ['3.9', ...SUPPORTED, '3.15t', '3.16']) candidates.push(path.join(dir, `python${v}`));
  }
  const pyenv = path.join(os.homedir(), '.pyenv', 'versions');
  if (fs.existsSync(pyenv)) {
    for (const v of fs.readdirSync(pyenv)) candidates.push(path.join(pyenv, v, 'bin', 'python3'));
  }
  for (const exe of candidates) {
    if (!fs.existsSync(exe)) continue;
    const probe =
      'import sys, sysconfig; print("%d.%d%s" % (*sys.version_info[:2], "t" if sysconfig.get_config_var("Py_GIL_DISABLED") else "")); print(sys.executable)';
    const r = spawnSync(exe, ['-c', probe], {
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
  const minor = (v: string): number => Number(v.split('.')[1]?.replace('t', ''));
  return [...interpreters()]
    .filter(([v]) => SUPPORTED.includes(v))
    .sort(([a], [b]) => minor(a) - minor(b) || a.localeCompare(b));
}
