/**
 * A folder with no memory yet: the commands activate the extension, "Open USER.md" opens an
 * unsaved editor, `.metis/` appears only when the user saves, and the walkthrough's buttons
 * run the extension's commands.
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

  it('offers the walkthrough, whose first button opens MEMORY.md', async () => {
    await runCommand(page, 'Welcome: Open Walkthrough...');
    const pick = page.locator('.quick-input-widget .monaco-list-row').filter({ hasText: 'Get started with Metis Memory' });
    await pick.first().waitFor({ state: 'visible', timeout: 20_000 });
    await pick.first().click();
    const walkthrough = page.locator('.gettingStartedContainer');
    for (const title of ['Open your memory', 'See the caps', 'Consolidate', 'Connect your agents']) {
      await walkthrough.getByText(title, { exact: true }).first().waitFor({ timeout: 20_000 });
    }
    await walkthrough.getByText('Open MEMORY.md', { exact: true }).click();
    await activeTab(page).filter({ hasText: 'MEMORY.md' }).waitFor({ timeout: 30_000 });
    // The step's completion event is the command its button ran.
    await runCommand(page, 'Welcome: Open Walkthrough...');
    await pick.first().click();
    const step = walkthrough.locator('.getting-started-step').filter({ hasText: 'Open your memory' });
    await step.locator('.codicon.complete').waitFor({ timeout: 10_000 });
    const unchecked = walkthrough.locator('.getting-started-step').filter({ hasText: 'Connect your agents' });
    assert.equal(await unchecked.locator('.codicon.complete').count(), 0, 'a step whose command never ran is complete');
    await screenshot(page, '08-fresh-folder-walkthrough');
    assert.equal(fs.existsSync(path.join(ws, '.metis', 'MEMORY.md')), false, 'opening must not create MEMORY.md');
  });
});
