/**
 * Which Python runs the server, in one window, two suites in turn:
 *
 * - A server that cannot start (metis.interpreter names a file that does not exist): one clear
 *   notification naming the interpreter and what failed, with a button to pick another;
 *   picking a working one starts the server.
 * - The server follows the Python extension's interpreter once that setting is cleared:
 *   selecting another one there restarts the server on it (and the MCP server definition
 *   follows), unless metis.interpreter says otherwise. The Python extension is the test
 *   stand-in (tests/e2e/python-standin), which implements the API that @vscode/python-extension
 *   declares.
 *
 * One window for both: a window costs about 20 s of CPU (code-server, Chromium, the extension
 * host, the server).
 */

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { Bridge, copyFixture, ROOT, startCodeServer, waitFor, type CodeServer } from './lib/codeServer';
import { supportedInterpreters } from './lib/python';
import { launchBrowser, notification, openWorkbench, screenshot, waitForStatus } from './lib/ui';

const VSIX = path.resolve(ROOT, process.env.METIS_VSIX ?? 'dist/metis-memory-linux-x64.vsix');
const HELPER_VSIX = path.resolve(ROOT, process.env.METIS_HELPER_VSIX ?? '.cache/e2e/metis-e2e-helper.vsix');
const STANDIN_VSIX = path.resolve(ROOT, process.env.METIS_PYTHON_STANDIN_VSIX ?? '.cache/e2e/ms-python-standin.vsix');
const STATUS = /MEMORY [\d.]+\/2 KB · USER [\d.]+\/1\.5 KB/;
const MISSING = '/nonexistent/bin/python3';

let cs: CodeServer;
let browser: Browser;
let page: Page;
let fixture: { path: string; remove(): void } | undefined;
let pythons: string;
const python = (name: string) => path.join(pythons, name, 'bin', 'python3');

/** The interpreters of this editor's running `<python> …/server.py lsp` processes (another
 * test file's editor may run its own meanwhile: its servers have another bridge). */
function languageServers(): string[] {
  const found: string[] = [];
  for (const pid of fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    let argv: string[];
    let environ: string[];
    try {
      argv = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      if (!(argv[1]?.endsWith(path.join('bundled', 'tool', 'server.py')) && argv[2] === 'lsp')) continue;
      environ = fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
    } catch {
      continue; // gone meanwhile
    }
    if (environ.includes(`METIS_E2E_BRIDGE=${cs.bridgeFile}`)) found.push(argv[0] ?? '');
  }
  return found;
}

async function serverRunsWith(python: string, what: string): Promise<void> {
  await waitFor(what, () => {
    const servers = languageServers();
    return servers.length === 1 && servers[0] === python ? true : undefined;
  }, 60_000, 200);
}

before(async () => {
  // Three names for one supported CPython, so each selection is a different interpreter.
  const [, real] = supportedInterpreters()[0] ?? [];
  assert.ok(real, 'no CPython 3.10–3.15 found on this machine');
  pythons = fs.mkdtempSync(path.join(ROOT, '.cache', 'e2e-pythons-'));
  for (const name of ['a', 'b', 'c']) {
    fs.mkdirSync(path.dirname(python(name)), { recursive: true });
    fs.symlinkSync(real, python(name));
  }
  fixture = copyFixture();
  cs = await startCodeServer({
    workspace: fixture.path,
    vsixes: [VSIX, HELPER_VSIX, STANDIN_VSIX],
    label: 'interpreter',
    env: { METIS_E2E_ACTIVE_PYTHON: python('a') },
    settings: { 'metis.interpreter': MISSING },
  });
  browser = await launchBrowser();
  page = await openWorkbench(browser, cs.url, fixture.path);
});

after(async () => {
  await browser?.close().catch(() => undefined);
  await cs?.stop();
  fixture?.remove();
  if (pythons) fs.rmSync(pythons, { recursive: true, force: true });
});

describe('a server that cannot start', { timeout: 300_000 }, () => {
  it('shows one notification naming the interpreter, and recovers when another is picked', async () => {
    const text = new RegExp(`could not start its language server with ${MISSING.replace(/\//g, '\\/')} \\(from the metis\\.interpreter setting\\): that file does not exist`);
    const toast = notification(page, text);
    await toast.waitFor({ timeout: 60_000 }).catch(async (err: unknown) => {
      await screenshot(page, 'fail-server-cannot-start');
      throw err;
    });
    // A request needing the server now fails with a clear error and shows nothing more.
    const bridge = new Bridge(cs.bridgeFile);
    const err = await bridge.call('/api', { method: 'usage' }).then(
      () => undefined,
      (e: Error & { code?: string }) => e,
    );
    assert.equal(err?.code, 'server_unavailable');
    assert.equal(await page.locator('.notifications-toasts .notification-toast', { hasText: /Metis|language server|Couldn't start/ }).count(), 1);
    await page.locator('.statusbar-item', { hasText: 'Metis Memory: server not running' }).first().waitFor({ timeout: 5_000 });
    await screenshot(page, '07-server-cannot-start');

    await toast.locator('.monaco-button', { hasText: 'Select Interpreter…' }).click();
    const row = page.locator('.quick-input-widget .monaco-list-row', { hasText: /Python 3\.1[0-3]\./ }).first();
    await row.waitFor({ timeout: 10_000 });
    await row.click();
    await waitForStatus(page, STATUS, 60_000, 'the server to start with the picked interpreter');
  });
});

describe('the interpreter the Python extension selects', { timeout: 300_000 }, () => {
  before(async () => {
    // Back to no setting: the Python extension's interpreter (a) is the server's now.
    await new Bridge(cs.bridgeFile).call('/setting', { section: 'metis', key: 'interpreter', value: undefined });
  });

  it('restarts the server on the newly selected interpreter', async () => {
    await waitForStatus(page, STATUS, 60_000, 'the server to start with the Python extension\'s interpreter');
    await serverRunsWith(python('a'), 'the server to run with interpreter a');
    assert.match(cs.metisLog(), /Python interpreter: \S+\/a\/bin\/python3 \(from the Python extension's selected interpreter\)/);

    const bridge = new Bridge(cs.bridgeFile);
    await bridge.call('/command', { command: 'metisE2e.selectPython', args: [python('b')] });
    await serverRunsWith(python('b'), 'the server to restart with interpreter b (and a to stop)');
    await waitForStatus(page, STATUS, 60_000, 'the status bar after the restart');
    const definition = (await bridge.call('/mcpServerDefinition', {})) as { command: string };
    assert.equal(definition.command, python('b'));
    await screenshot(page, 'interpreter-followed');
  });

  it('keeps the metis.interpreter setting over the Python extension', async () => {
    const bridge = new Bridge(cs.bridgeFile);
    await bridge.call('/setting', { section: 'metis', key: 'interpreter', value: python('a') });
    await serverRunsWith(python('a'), 'the server to restart with the configured interpreter a');
    const logged = cs.metisLog().length;
    await bridge.call('/command', { command: 'metisE2e.selectPython', args: [python('c')] });
    await waitFor('the extension to weigh the new selection', () =>
      cs.metisLog().slice(logged).includes('the Python extension changed its interpreter; the server keeps') ? true : undefined,
    30_000, 200);
    assert.deepEqual(languageServers(), [python('a')]);
  });
});
