/**
 * When the server cannot start: one clear notification naming the interpreter and what failed,
 * with a button to pick another; picking a working one starts the server.
 */

import assert from 'node:assert/strict';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { Bridge, copyFixture, ROOT, startCodeServer, type CodeServer } from './lib/codeServer';
import { launchBrowser, notification, openWorkbench, screenshot, waitForStatus } from './lib/ui';

const VSIX = path.resolve(ROOT, process.env.METIS_VSIX ?? 'dist/metis-memory-linux-x64.vsix');
const HELPER_VSIX = path.resolve(ROOT, process.env.METIS_HELPER_VSIX ?? '.cache/e2e/metis-e2e-helper.vsix');
const MISSING = '/nonexistent/bin/python3';

describe('a server that cannot start', { timeout: 300_000 }, () => {
  let cs: CodeServer;
  let browser: Browser;
  let page: Page;
  let fixture: { path: string; remove(): void } | undefined;

  before(async () => {
    fixture = copyFixture();
    const ws = fixture.path;
    cs = await startCodeServer({
      workspace: ws,
      vsixes: [VSIX, HELPER_VSIX],
      label: 'startup',
      settings: { 'metis.interpreter': MISSING },
    });
    browser = await launchBrowser();
    page = await openWorkbench(browser, cs.url, ws);
  });

  after(async () => {
    await browser?.close().catch(() => undefined);
    await cs?.stop();
    fixture?.remove();
  });

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
    await waitForStatus(page, /MEMORY [\d.]+\/2 KB · USER [\d.]+\/1\.5 KB/, 60_000, 'the server to start with the picked interpreter');
  });
});
