/**
 * A folder with no memory yet: the commands activate the extension, "Open USER.md" opens an
 * unsaved editor, and `.metis/` appears only when the user saves.
 */

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { ROOT, startCodeServer, waitFor, type CodeServer } from './lib/codeServer';
import { activeTab, launchBrowser, openWorkbench, runCommand, screenshot, waitForStatus } from './lib/ui';

const VSIX = path.resolve(ROOT, process.env.METIS_VSIX ?? 'dist/metis-memory-linux-x64.vsix');

describe('a folder with no memory yet', { timeout: 300_000 }, () => {
  let cs: CodeServer;
  let browser: Browser;
  let page: Page;
  let root: string;
  let ws: string;

  before(async () => {
    root = fs.mkdtempSync(path.join(ROOT, '.cache', 'e2e-ws-'));
    ws = path.join(root, 'empty-project');
    fs.mkdirSync(ws);
    fs.writeFileSync(path.join(ws, 'README.md'), '# A project with no memory yet\n');
    cs = await startCodeServer({ workspace: ws, vsixes: [VSIX], label: 'fresh' });
    browser = await launchBrowser();
    page = await openWorkbench(browser, cs.url, ws);
  });

  after(async () => {
    await browser?.close().catch(() => undefined);
    await cs?.stop();
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('creates .metis/USER.md only when the user saves it', async () => {
    await runCommand(page, 'Metis: Open USER.md');
    await activeTab(page).filter({ hasText: 'USER.md' }).waitFor({ timeout: 30_000 });
    await waitForStatus(page, /MEMORY 0\/2 KB · USER 0\/1\.5 KB/, 30_000, 'the status bar of an empty folder');
    assert.equal(fs.existsSync(path.join(ws, '.metis')), false, 'opening must not create .metis/');
    await page.keyboard.insertText('# About the user\n\n- Prefers short answers.\n');
    await page.keyboard.press('Control+S');
    const file = path.join(ws, '.metis', 'USER.md');
    const typed = '# About the user\n\n- Prefers short answers.\n';
    await waitFor('.metis/USER.md to be written by the save', () => (fs.existsSync(file) && fs.readFileSync(file, 'utf8') === typed) || undefined, 10_000);
    await waitForStatus(page, /USER 0\.1\/1\.5 KB/, 5_000, 'the status bar to count the saved USER.md');
    await screenshot(page, '08-fresh-folder-saved');
  });
});
