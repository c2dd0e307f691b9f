/** Driving the VS Code workbench in the browser: palette, editors, status bar, panels. */

import * as fs from 'node:fs';
import * as path from 'node:path';
import { it } from 'node:test';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import { ROOT, waitFor, type Bridge } from './codeServer';

export const ARTIFACTS = path.join(ROOT, 'tests', 'e2e', 'artifacts');

/**
 * Debian's chromium-headless-shell, the headless-only build Playwright itself drives by default:
 * the same Chromium (one Debian version), without the browser's own UI. A window loads in
 * about 19 CPU-s where `chromium --headless` takes 22, and the editors' step ran in 199 s
 * (384 CPU-s) where it took 215 (418), with the same 52 tests passing.
 */
export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.METIS_CHROMIUM ?? '/usr/bin/chromium-headless-shell',
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-quic',
    ],
  });
}

/**
 * Open the workbench on a folder, on a multi-root workspace (a `.code-workspace` file), or,
 * with `folder` empty, on an empty window (no folder at all).
 */
export async function openWorkbench(browser: Browser, url: string, folder: string): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: url });
  const page = await context.newPage();
  await openInWindow(page, url, folder);
  return page;
}

/**
 * Open `folder` (as openWorkbench takes it) in the window `page` already shows, as File > Open
 * Folder does in a browser: the tab loads the new folder's workbench, whose extension host
 * starts afresh. The tab's renderer, and what it compiled of the workbench's JavaScript, stays:
 * about 15 CPU-s a window where a new one takes 23.
 */
export async function openInWindow(page: Page, url: string, folder: string): Promise<void> {
  const kind = folder.endsWith('.code-workspace') ? 'workspace' : 'folder';
  await page.goto(folder === '' ? `${url}/?ew=true` : `${url}/?${kind}=${encodeURIComponent(folder)}`);
  await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
  await page.locator('.statusbar').waitFor({ timeout: 60_000 });
}

export async function screenshot(page: Page, name: string): Promise<string> {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  const file = path.join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path: file });
  return file;
}

/** Where docScreenshot saves; `make screenshots` copies these into docs/images/. */
export const DOC_ARTIFACTS = path.join(ARTIFACTS, 'docs');

/**
 * A picture for the documentation, taken where a test has just asserted that the UI shows it:
 * saved as tests/e2e/artifacts/docs/<name>.png (the whole window, or only `clip`'s box), which
 * `make screenshots` copies to docs/images/<name>.png with the hash of the UI sources it was
 * made from (scripts/update-doc-images.mjs), so that a changed UI fails a test until the
 * pictures are made again. The text caret is hidden so the same screen gives the same picture,
 * and so are the workbench's tooltips (a breadcrumb's "# Heading (string)" left over the
 * editor by where the pointer last was), in the picture only: the window is not touched.
 */
export async function docScreenshot(page: Page, name: string, clip?: Locator): Promise<void> {
  if (!/^[a-z0-9]+(?:-[a-z0-9]+)*$/.test(name)) {
    throw new Error(`docScreenshot: "${name}" is not a file name of lower-case words joined by "-"`);
  }
  fs.mkdirSync(DOC_ARTIFACTS, { recursive: true });
  const file = path.join(DOC_ARTIFACTS, `${name}.png`);
  const options = { path: file, caret: 'hide' as const, style: '.workbench-hover-container { display: none !important; }' };
  if (clip === undefined) {
    await page.screenshot(options);
  } else {
    await clip.screenshot(options);
  }
}

/**
 * Run a command from the palette by its full title ("Metis: Show Assembled Prompt"). Extension
 * contributions appear once the extension host has scanned them: retry until `timeoutMs`.
 */
export async function runCommand(page: Page, title: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const input = page.locator('.quick-input-widget .quick-input-box input');
  const row = page
    .locator('.quick-input-widget .monaco-list-row')
    .filter({ has: page.locator('.label-name', { hasText: new RegExp(`^${escapeRegExp(title)}$`) }) })
    .first();
  // Every step is retried: an editor that is still opening can take the focus, and the
  // palette closes under the typing (seen as "element is inert", then "not visible").
  for (;;) {
    try {
      await page.keyboard.press('Escape');
      await page.keyboard.press('F1');
      await input.waitFor({ state: 'visible', timeout: 5_000 });
      await input.fill(`>${title}`, { timeout: 3_000 });
      await row.waitFor({ state: 'visible', timeout: 2_000 });
      await row.click({ timeout: 3_000 });
      return;
    } catch (err) {
      if (Date.now() > deadline) {
        throw new Error(`could not run "${title}" from the command palette within ${timeoutMs} ms; last: ${String(err).split('\n')[0]}`);
      }
    }
  }
}

export function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The Metis status bar item. */
export function statusItem(page: Page): Locator {
  // (Each file's icon comes before its name: "MEMORY 2.4/2 KB · $(warning) USER 1.6/1.5 KB".)
  return page.locator('.statusbar-item', { hasText: /MEMORY .*KB · .*USER .*KB/ }).first();
}

export async function statusText(page: Page): Promise<string> {
  return ((await statusItem(page).innerText({ timeout: 5_000 })) ?? '').replace(/\s+/g, ' ').trim();
}

/** Wait until the status bar item's text matches; the error shows the last text seen. */
export async function waitForStatus(page: Page, pattern: RegExp, timeoutMs: number, what: string): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  let last = '(no Metis status bar item)';
  for (;;) {
    try {
      last = await statusItem(page).innerText({ timeout: 500 });
      last = last.replace(/\s+/g, ' ').trim();
      if (pattern.test(last)) return last;
    } catch {
      /* not rendered yet */
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}: status bar shows "${last}"`);
    await page.waitForTimeout(50);
  }
}

/** The active editor tab's title. */
export function activeTab(page: Page): Locator {
  return page.locator('.tabs-container .tab.active');
}

export function notification(page: Page, text: RegExp): Locator {
  return page.locator('.notifications-toasts .notification-toast', { hasText: text }).first();
}

/**
 * A file's `it`, which leaves a screenshot of the window when the test fails
 * (`fail-<prefix>-<test>.png`): `page` gives the tab the file drives, undefined before it opened.
 */
export function stepsScreenshotOnFailure(prefix: string, page: () => Page | undefined) {
  return (name: string, fn: () => Promise<void>) =>
    it(name, async () => {
      try {
        await fn();
      } catch (err) {
        const tab = page();
        if (tab) {
          const slug = name.replace(/[^a-z0-9]+/gi, '-').slice(0, 50);
          await screenshot(tab, `fail-${prefix}-${slug}`).catch(() => undefined);
        }
        throw err;
      }
    });
}

/** No notification on screen: cleared, and again for one the last step's answer brought late. */
export async function clearToasts(page: Page, bridge: Bridge): Promise<void> {
  await waitFor(
    'every notification cleared',
    async () => {
      await bridge.call('/command', { command: 'notifications.clearAll' });
      return (await page.locator('.notifications-toasts .notification-toast').count()) === 0 ? true : undefined;
    },
    5_000,
    250,
  );
}

/** The text of the toast matching `text`, once it shows, its white space folded. */
export async function toastText(page: Page, text: RegExp, timeout = 15_000): Promise<string> {
  const toast = notification(page, text);
  await toast.waitFor({ timeout });
  return (await toast.locator('.notification-list-item-message').innerText()).replace(/\s+/g, ' ').trim();
}

/** Drag the side bar's edge 360 px to the right (room for a history row's when and who). */
export async function widenSideBar(page: Page): Promise<void> {
  const box = await page.locator('.part.sidebar').first().boundingBox();
  if (!box) throw new Error('no side bar to widen');
  const x = box.x + box.width + 1;
  const y = box.y + box.height / 2;
  await page.mouse.move(x, y);
  await page.mouse.down();
  await page.mouse.move(x + 180, y, { steps: 4 });
  await page.mouse.move(x + 360, y, { steps: 4 });
  await page.mouse.up();
  const wider = await page.locator('.part.sidebar').first().boundingBox();
  if (!wider || wider.width <= box.width + 300) {
    throw new Error(`the side bar is ${wider?.width ?? 0} px wide after the drag, was ${box.width}`);
  }
}

/**
 * Open the quick fix menu where the cursor is and choose `title`. A menu shown while the
 * server's answers still change is rendered again under the pointer (its rows detach): a click
 * that cannot land closes it, and the menu is asked for again, up to `tries` times.
 */
export async function chooseCodeAction(page: Page, title: string, tries = 4): Promise<void> {
  const action = page.locator('.action-widget .monaco-list-row', { hasText: title }).first();
  for (let attempt = 0; attempt < tries; attempt++) {
    await page.keyboard.press('Control+.');
    const chosen = await action
      .waitFor({ timeout: 5_000 })
      .then(() => action.click({ timeout: 5_000 }))
      .then(
        () => true,
        () => false,
      );
    if (chosen) return;
    await page.keyboard.press('Escape');
  }
  throw new Error(`the code action menu offered no "${title}" that could be chosen (${tries} tries)`);
}
