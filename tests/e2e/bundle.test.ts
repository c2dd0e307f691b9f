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
import { MEMORY_ADD_SCHEMA, McpStdioClient, resultText } from './lib/mcpClient';
import { interpreters, supportedInterpreters } from './lib/python';

const LAUNCHER = path.join(ROOT, 'dist', 'bundled', 'tool', 'server.py');

interface Report {
  ok: boolean;
  problem: string | null;
  version: string;
}

function check(exe: string, mode: 'lsp' | 'mcp' = 'lsp'): Report {
  const r = spawnSync(exe, [LAUNCHER, '--check', mode], { encoding: 'utf8', env: { ...process.env, PYTHONNOUSERSITE: '1' } });
  return JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}') as Report;
}

describe('the bundled server', () => {
  it('carries libraries for CPython 3.10-3.13 and runs on each interpreter found here', () => {
    assert.ok(fs.existsSync(LAUNCHER), `${LAUNCHER} is missing: run make vsix`);
    const libs = fs.readdirSync(path.join(ROOT, 'dist', 'bundled', 'libs')).sort();
    const tags = ['cp310', 'cp311', 'cp312', 'cp313'];
    for (const folder of ['common', ...tags]) assert.ok(libs.includes(folder), `libs/${folder} is missing`);
    // The rest are folders shared by some versions, named for them (cp311+cp312+cp313).
    for (const folder of libs.filter((f) => f !== 'common' && !tags.includes(f))) {
      assert.ok(folder.split('+').length >= 2 && folder.split('+').every((t) => tags.includes(t)), `unexpected libs/${folder}`);
    }
    const supported = supportedInterpreters();
    assert.ok(supported.length >= 1, 'no CPython 3.10-3.13 found on this machine');
    for (const [version, exe] of supported) {
      for (const mode of ['lsp', 'mcp'] as const) {
        const report = check(exe, mode);
        assert.equal(report.problem, null, `${exe} (${version}), ${mode}`);
        assert.equal(report.ok, true);
      }
    }
    console.log(`# launcher checked on CPython ${supported.map(([v]) => v).join(', ')}`);
  });

  it('runs the MCP server (mcp WORKSPACE) on each CPython 3.10-3.13 found here', async () => {
    const supported = supportedInterpreters();
    assert.ok(supported.length >= 1, 'no CPython 3.10-3.13 found on this machine');
    for (const [version, exe] of supported) {
      const ws = fs.mkdtempSync(path.join(os.tmpdir(), 'metis-mcp-'));
      const client = new McpStdioClient({ command: exe, args: [LAUNCHER, 'mcp', ws], env: { PYTHONNOUSERSITE: '1' } });
      try {
        const init = await client.initialize();
        assert.equal(init.serverInfo.name, 'metis-memory', `Python ${version}`);
        const tools = await client.listTools();
        assert.deepEqual(
          tools.map((t) => t.name).sort(),
          ['memory_add', 'memory_assemble_prompt', 'memory_consolidate', 'memory_read', 'memory_replace'],
          `Python ${version}`,
        );
        assert.deepEqual(tools.find((t) => t.name === 'memory_add')?.inputSchema, MEMORY_ADD_SCHEMA);
        const added = await client.callTool('memory_add', { file: 'MEMORY.md', entry: `- Written by CPython ${version}.` });
        assert.equal(added.isError ?? false, false, resultText(added));
        assert.equal(fs.readFileSync(path.join(ws, '.metis', 'MEMORY.md'), 'utf8'), `- Written by CPython ${version}.\n`);
      } finally {
        await client.close();
        fs.rmSync(ws, { recursive: true, force: true });
      }
    }
    console.log(`# MCP server run on CPython ${supported.map(([v]) => v).join(', ')}`);
  });

  it('says why it cannot start the MCP server, on stderr, with nothing on stdout', () => {
    const [, exe] = supportedInterpreters()[0] ?? [];
    assert.ok(exe, 'no CPython 3.10-3.13 found on this machine');
    const missing = path.join(os.tmpdir(), 'metis-no-such-folder');
    const r = spawnSync(exe, [LAUNCHER, 'mcp', missing], { encoding: 'utf8', input: '', timeout: 30_000 });
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /workspace .*metis-no-such-folder.* is not a directory/);
    assert.notEqual(r.status, 0);
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
