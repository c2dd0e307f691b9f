/**
 * The window the Memory History tests drive (history.test.ts for a folder's files,
 * user-memory-history.test.ts for the user memory's): code-server on a copy of
 * examples/workspace whose MEMORY.md is cut to its first ten entries (1.3 KB, under the soft
 * cap, so no over-cap warning joins the notifications), in a tab wide enough for a side bar
 * that shows when and who beside each write and for a diff side by side (VS Code shows it
 * inline below 900 px); and the view's parts.
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
import { Bridge, copyFixture, startCodeServer, waitFor, type CodeServer } from './codeServer';
import { launchBrowser, openWorkbench, waitForStatus } from './ui';

export interface HistoryWindow {
  cs: CodeServer;
  bridge: Bridge;
  browser: Browser;
  page: Page;
  fixture: { path: string; remove(): void };
  /** The folder's URI, as the server's commands take it. */
  workspace: string;
  /** The browser closed, code-server stopped, the folder removed. */
  close(): Promise<void>;
}

/** Start it, the server running; what was started is stopped again if a step fails. */
export async function openHistoryWindow(vsixes: string[], label: string): Promise<HistoryWindow> {
  const fixture = copyFixture();
  let cs: CodeServer | undefined;
  let browser: Browser | undefined;
  const close = async () => {
    await browser?.close().catch(() => undefined);
    await cs?.stop();
    fixture.remove();
  };
  try {
    const memory = path.join(fixture.path, '.metis', 'MEMORY.md');
    const lines = fs.readFileSync(memory, 'utf8').split('\n');
    fs.writeFileSync(memory, `${lines.slice(0, 12).join('\n')}\n`);
    cs = await startCodeServer({ workspace: fixture.path, vsixes, label });
    const bridge = new Bridge(cs.bridgeFile);
    browser = await launchBrowser();
    const page = await openWorkbench(browser, cs.url, fixture.path);
    await page.setViewportSize({ width: 1760, height: 900 });
    await waitForStatus(page, /MEMORY \d/, 60_000, 'the Metis status bar item (the server running)');
    const [workspace = ''] = await bridge.call<string[]>('/workspaceFolderUris');
    return { cs, bridge, browser, page, fixture, workspace, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/** The Memory History view (not the file tree's: it lists MEMORY.md too). */
export function historyPane(page: Page): Locator {
  return page.locator('.pane', { has: page.locator('.pane-header', { hasText: /Memory History/i }) }).first();
}

/** The view's first row holding `text`. */
export function historyRow(page: Page, text: string | RegExp): Locator {
  return historyPane(page).locator('.monaco-list-row', { hasText: text }).first();
}

/** An action in the editor's title bar (Undo This Change, Accept...), by its label's start. */
export function titleAction(page: Page, label: string): Locator {
  return page.locator(`.editor-actions .action-label[aria-label^="${label}"]`).first();
}

/** The status bar's count of changes waiting for review. */
export function reviewItem(page: Page): Locator {
  return page.locator('.statusbar-item', { hasText: /\d+ to review/ }).first();
}

/** An open document's URI and text, as the e2e helper's bridge lists them. */
export interface DocInfo {
  uri: string;
  text: string;
}

/** The two sides of the diff a history row opened, once both are open. */
export async function diffSides(bridge: Bridge): Promise<{ before: DocInfo; after: DocInfo }> {
  const docs = await waitFor(
    'both sides of the diff',
    async () => {
      const found = await bridge.call<DocInfo[]>('/documents', { scheme: 'metis-history' });
      return found.length >= 2 ? found : undefined;
    },
    15_000,
  );
  const before = docs.find((d) => d.uri.includes('/before/'));
  const after = docs.find((d) => d.uri.includes('/after/'));
  if (!before || !after) throw new Error(`no before and after side among ${JSON.stringify(docs.map((d) => d.uri))}`);
  return { before, after };
}
