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
import { MCP_TOOL_NAMES, MEMORY_ADD_SCHEMA, McpStdioClient, resultText } from './lib/mcpClient';
import { SUPPORTED, interpreters, supportedInterpreters, tagOf } from './lib/python';
import { LAUNCH_REPORT_PREFIX } from '../../extension/src/server/interpreter';

const LAUNCHER = path.join(ROOT, 'dist', 'bundled', 'tool', 'server.py');
const LIBS = path.join(ROOT, 'dist', 'bundled', 'libs');

/** A version's folders, as the launcher puts them on sys.path: its own, shared, common. */
function libPath(tag: string): string[] {
  const shared = fs.readdirSync(LIBS).filter((f) => f.includes('+') && f.split('+').includes(tag));
  return [tag, ...shared, 'common'].map((f) => path.join(LIBS, f));
}

/** Every compiled extension module under `folder`, relative to it. */
function compiled(folder: string): string[] {
  const files = fs.readdirSync(folder, { recursive: true, encoding: 'utf8' });
  return files.filter((f) => /\.(so|pyd)$/.test(f)).map((f) => f.split(path.sep).join('/'));
}

/** `pydantic_core/_pydantic_core.cpython-314-x86_64-linux-gnu.so` -> `pydantic_core/_pydantic_core`. */
function moduleOf(file: string): string {
  return file.replace(/\.(cpython-[^.]+|abi3t?|cp\d+t?-[^.]+)\.(so|pyd)$|\.(so|pyd)$/, '');
}

/** Whether CPython `version` imports this build (PEP 3149 tags, abi3 from its version on). */
function loads(version: string, file: string): boolean {
  const free = version.endsWith('t');
  const nodot = version.replace('.', '').replace('t', '');
  const tag = /\.cpython-(\d+)(t?)-/.exec(file);
  if (tag) return tag[1] === nodot && (tag[2] === 't') === free;
  if (/\.abi3t\./.test(file)) return free;
  if (/\.abi3\./.test(file)) return !free;
  return true; // an untagged `name.so` loads anywhere the platform matches
}

/**
 * The launcher's environment: no user site-packages, and bytecode kept in a folder of the
 * tests' own (never in dist/bundled/, which the next VSIX is packaged from): each version
 * compiles the libraries once, not at every one of its ~20 runs (a machine may set
 * PYTHONDONTWRITEBYTECODE; empty, it is unset).
 */
const PYTHON_ENV = {
  PYTHONNOUSERSITE: '1',
  PYTHONDONTWRITEBYTECODE: '',
  PYTHONPYCACHEPREFIX: path.join(ROOT, '.cache', 'e2e', 'bundle-pycache'),
};

interface Report {
  ok: boolean;
  problem: string | null;
  version: string;
}

/** `server.py --check MODE`'s report on stdout. */
function check(exe: string, mode: 'lsp' | 'mcp' = 'lsp'): Report {
  const r = spawnSync(exe, [LAUNCHER, '--check', mode], {
    encoding: 'utf8',
    env: { ...process.env, ...PYTHON_ENV },
  });
  return JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}') as Report;
}

/**
 * What the extension reads: the language server's launch report, its first line on stderr
 * (then, with stdin at its end at once, a running server exits).
 */
function launch(exe: string): Report & { status: number | null; stderr: string } {
  const r = spawnSync(exe, [LAUNCHER, 'lsp'], {
    encoding: 'utf8',
    input: '',
    timeout: 60_000,
    env: { ...process.env, ...PYTHON_ENV },
  });
  const line = r.stderr.split('\n').find((l) => l.startsWith(LAUNCH_REPORT_PREFIX));
  assert.ok(line, `${exe}: no launch report on stderr:\n${r.stderr}`);
  return { ...(JSON.parse(line.slice(LAUNCH_REPORT_PREFIX.length)) as Report), status: r.status, stderr: r.stderr };
}

describe('the bundled server', () => {
  it('carries libraries for CPython 3.10-3.15 and 3.14t and runs on each interpreter found here', () => {
    assert.ok(fs.existsSync(LAUNCHER), `${LAUNCHER} is missing: run make vsix`);
    const libs = fs.readdirSync(LIBS).sort();
    const tags = SUPPORTED.map(tagOf);
    for (const folder of ['common', ...tags]) assert.ok(libs.includes(folder), `libs/${folder} is missing`);
    // The rest are folders shared by some versions, named for them (cp311+cp312+cp313).
    for (const folder of libs.filter((f) => f !== 'common' && !tags.includes(f))) {
      assert.ok(
        folder.split('+').length >= 2 && folder.split('+').every((t) => tags.includes(t)),
        `unexpected libs/${folder}`,
      );
    }
    const supported = supportedInterpreters();
    assert.ok(supported.length >= 1, 'no CPython 3.10-3.15 found on this machine');
    for (const [version, exe] of supported) {
      const launched = launch(exe);
      assert.equal(launched.problem, null, `${exe} (${version}), the language server`);
      assert.equal(launched.ok, true);
      // Stdin ended with no `exit`: an error exit (1) by the LSP spec; 3 would be a refusal.
      assert.equal(launched.status, 1, `${exe} (${version}): the server did not run:\n${launched.stderr}`);
      const report = check(exe, 'mcp');
      assert.equal(report.problem, null, `${exe} (${version}), mcp`);
      assert.equal(report.ok, true);
    }
    console.log(`# launcher checked on CPython ${supported.map(([v]) => v).join(', ')}`);
  });

  it('holds a build of every compiled module for each version it carries, run or not', () => {
    // Most of these interpreters are not on this machine: the proof for them is that each
    // version's folders hold, for every compiled module any version has, a build whose tag
    // that version loads (cpython-314-..., abi3 from 3.X on, or cpython-314t-... alone for
    // a free-threaded build, which cannot load abi3).
    const modules = new Set<string>();
    const builds = new Map<string, string[]>();
    for (const version of SUPPORTED) {
      const found: string[] = [];
      for (const folder of libPath(tagOf(version))) found.push(...compiled(folder));
      builds.set(version, found);
      for (const file of found) modules.add(moduleOf(file));
    }
    assert.ok(
      [...modules].some((m) => m.endsWith('_pydantic_core')),
      `no pydantic-core build: ${[...modules].join(', ')}`,
    );
    assert.ok(
      [...modules].some((m) => m.endsWith('_rust_notify')),
      'no watchfiles build',
    );
    for (const version of SUPPORTED) {
      const loadable = (builds.get(version) ?? []).filter((file) => loads(version, file));
      const stray = (builds.get(version) ?? []).filter((file) => !loads(version, file));
      assert.deepEqual(stray, [], `CPython ${version} cannot load these bundled builds`);
      const have = new Set(loadable.map(moduleOf));
      assert.deepEqual(
        [...modules].filter((m) => !have.has(m)),
        [],
        `CPython ${version} has no build of these`,
      );
    }
    console.log(`# ${modules.size} compiled modules, a loadable build of each for ${SUPPORTED.join(', ')}`);
  });

  it('runs the MCP server (mcp WORKSPACE) on each CPython 3.10-3.15 found here', async () => {
    const supported = supportedInterpreters();
    assert.ok(supported.length >= 1, 'no CPython 3.10-3.15 found on this machine');
    for (const [version, exe] of supported) {
      const ws = fs.mkdtempSync(path.join(os.tmpdir(), 'metis-mcp-'));
      const client = new McpStdioClient({ command: exe, args: [LAUNCHER, 'mcp', ws], env: PYTHON_ENV });
      try {
        const init = await client.initialize();
        assert.equal(init.serverInfo.name, 'metis-memory', `Python ${version}`);
        const tools = await client.listTools();
        assert.deepEqual(
          tools.map((t) => t.name).sort(),
          MCP_TOOL_NAMES,
          `Python ${version}`,
        );
        assert.deepEqual(tools.find((t) => t.name === 'memory_add')?.inputSchema, MEMORY_ADD_SCHEMA);
        const added = await client.callTool('memory_add', {
          file: 'MEMORY.md',
          entry: `- Written by CPython ${version}.`,
        });
        assert.equal(added.isError ?? false, false, resultText(added));
        assert.equal(
          fs.readFileSync(path.join(ws, '.metis', 'MEMORY.md'), 'utf8'),
          `- Written by CPython ${version}.\n`,
        );
      } finally {
        await client.close();
        fs.rmSync(ws, { recursive: true, force: true });
      }
    }
    console.log(`# MCP server run on CPython ${supported.map(([v]) => v).join(', ')}`);
  });

  it('says why it cannot start the MCP server, on stderr, with nothing on stdout', () => {
    const [, exe] = supportedInterpreters()[0] ?? [];
    assert.ok(exe, 'no CPython 3.10-3.15 found on this machine');
    const missing = path.join(os.tmpdir(), 'metis-no-such-folder');
    const r = spawnSync(exe, [LAUNCHER, 'mcp', missing], { encoding: 'utf8', input: '', timeout: 30_000 });
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /workspace .*metis-no-such-folder.* is not a directory/);
    assert.notEqual(r.status, 0);
  });

  it('refuses a free-threaded build it carries nothing for, by name', () => {
    // No free-threaded CPython here: a wrapper makes the real one report 3.15t.
    const fake = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'metis-py-')), 'python');
    const real = execFileSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).trim();
    const pretend =
      'import sys, runpy, sysconfig; real = sysconfig.get_config_var; ' +
      'sysconfig.get_config_var = lambda name: 1 if name == "Py_GIL_DISABLED" else real(name); ' +
      'sys.version_info = (3, 15, 0, "final", 0); sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name="__main__")';
    fs.writeFileSync(fake, `#!/bin/sh\nexec ${real} -c '${pretend}' "$@"\n`, { mode: 0o755 });
    const report = check(fake);
    assert.equal(report.ok, false);
    assert.match(
      report.problem ?? '',
      /it is the free-threaded build of Python 3\.\d+, and this package carries the server for Python 3\.10, .*3\.14, 3\.14t, 3\.15 only/,
    );
  });

  it('refuses an interpreter older than 3.10 with a clear reason', (t) => {
    const old = [...interpreters()].find(([v]) => v === '3.9' || v === '3.8');
    let exe = old?.[1];
    if (!exe) {
      // No old interpreter on this machine: exercise the same code path through a fake one.
      const fake = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'metis-py-')), 'python');
      const real = execFileSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).trim();
      fs.writeFileSync(
        fake,
        `#!/bin/sh\nexec ${real} -c 'import sys, runpy; sys.version_info = (3, 9, 0, "final", 0); sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name="__main__")' "$@"\n`,
        { mode: 0o755 },
      );
      t.diagnostic('no Python 3.8/3.9 here: used a wrapper that reports 3.9');
      exe = fake;
    }
    // What the extension reads when it starts the server, and then the sentence for a person.
    const report = launch(exe);
    assert.equal(report.ok, false);
    assert.match(report.problem ?? '', /it is Python 3\.\d; the server needs Python 3\.10 or newer/);
    assert.equal(report.status, 3);
    assert.match(report.stderr, /cannot start the language server: it is Python 3\.\d; the server needs/);
  });
});
