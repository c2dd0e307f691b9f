/**
 * The Python side of the VSIX: the launcher picks the bundled libraries for each CPython it
 * finds, and says clearly why an interpreter it cannot serve is refused.
 */

import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { ROOT } from './lib/codeServer';

const LAUNCHER = path.join(ROOT, 'dist', 'bundled', 'tool', 'server.py');

/** Interpreters on this machine: versioned names on PATH and pyenv's installs, if any. */
function interpreters(): Map<string, string> {
  const found = new Map<string, string>();
  const candidates: string[] = [];
  for (const dir of (process.env.PATH ?? '').split(':')) {
    for (const v of ['3.9', '3.10', '3.11', '3.12', '3.13', '3.14']) candidates.push(path.join(dir, `python${v}`));
  }
  const pyenv = path.join(os.homedir(), '.pyenv', 'versions');
  if (fs.existsSync(pyenv)) {
    for (const v of fs.readdirSync(pyenv)) candidates.push(path.join(pyenv, v, 'bin', 'python3'));
  }
  for (const exe of candidates) {
    if (!fs.existsSync(exe)) continue;
    const r = spawnSync(exe, ['-c', 'import sys; print("%d.%d" % sys.version_info[:2])'], { encoding: 'utf8' });
    const version = r.stdout?.trim();
    if (r.status === 0 && version && !found.has(version)) found.set(version, exe);
  }
  return found;
}

interface Report {
  ok: boolean;
  problem: string | null;
  version: string;
}

function check(exe: string): Report {
  const r = spawnSync(exe, [LAUNCHER, '--check'], { encoding: 'utf8', env: { ...process.env, PYTHONNOUSERSITE: '1' } });
  return JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}') as Report;
}

describe('the bundled server', () => {
  it('carries libraries for CPython 3.10-3.13 and runs on each interpreter found here', () => {
    assert.ok(fs.existsSync(LAUNCHER), `${LAUNCHER} is missing: run make vsix`);
    const libs = fs.readdirSync(path.join(ROOT, 'dist', 'bundled', 'libs')).sort();
    assert.deepEqual(libs, ['common', 'cp310', 'cp311', 'cp312', 'cp313']);
    const found = interpreters();
    const supported = [...found].filter(([v]) => ['3.10', '3.11', '3.12', '3.13'].includes(v));
    assert.ok(supported.length >= 1, 'no CPython 3.10-3.13 found on this machine');
    for (const [version, exe] of supported) {
      const report = check(exe);
      assert.equal(report.problem, null, `${exe} (${version})`);
      assert.equal(report.ok, true);
    }
    console.log(`# launcher checked on CPython ${supported.map(([v]) => v).join(', ')}`);
  });

  it('refuses an interpreter older than 3.10 with a clear reason', (t) => {
    const old = [...interpreters()].find(([v]) => v === '3.9' || v === '3.8');
    const exe = old?.[1];
    if (!exe) {
      // No old interpreter on this machine: exercise the same code path through a fake one.
      const fake = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'metis-py-')), 'python');
      const real = execFileSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).trim();
      fs.writeFileSync(fake, `#!/bin/sh\nexec ${real} -c 'import sys, runpy; sys.version_info = (3, 9, 0, "final", 0); sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name="__main__")' "$@"\n`, { mode: 0o755 });
      t.diagnostic('no Python 3.8/3.9 here: used a wrapper that reports 3.9');
      const report = check(fake);
      assert.equal(report.ok, false);
      assert.match(report.problem ?? '', /needs Python 3\.10 or newer/);
      return;
    }
    const report = check(exe);
    assert.equal(report.ok, false);
    assert.match(report.problem ?? '', /it is Python 3\.\d; the server needs Python 3\.10 or newer/);
  });
});
