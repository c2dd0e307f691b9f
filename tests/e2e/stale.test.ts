/**
 * Stale references in a real VS Code: the example workspace's MEMORY.md names
 * `ratelimit/bucket.go`, which has moved to `internal/ratelimit/`. The reference is marked,
 * VS Code's own file watching brings a deleted file's entry back as stale (and clears it when
 * the file returns) without a keystroke, and the quick fixes open the consolidation on the
 * entry and point it at where the file went.
 */

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { Bridge, copyFixture, ROOT, startCodeServer, waitFor, type CodeServer } from './lib/codeServer';
import { activeTab, launchBrowser, openWorkbench, screenshot } from './lib/ui';

const VSIX = path.resolve(ROOT, process.env.METIS_VSIX ?? 'dist/metis-memory-linux-x64.vsix');
const HELPER_VSIX = path.resolve(ROOT, process.env.METIS_HELPER_VSIX ?? '.cache/e2e/metis-e2e-helper.vsix');

interface Diag {
  uri: string;
  diagnostics: { code: string; severity: number; message: string; range: [number, number, number, number] }[];
}

describe('stale references in a real VS Code', { timeout: 600_000 }, () => {
  let cs: CodeServer;
  let browser: Browser;
  let page: Page;
  let bridge: Bridge;
  let fixture: { path: string; remove(): void };
  let memoryUri = '';
  const memoryPath = () => path.join(fixture.path, '.metis', 'MEMORY.md');
  const step = (name: string, fn: () => Promise<void>) =>
    it(name, async () => {
      try {
        await fn();
      } catch (err) {
        if (page) await screenshot(page, `fail-stale-${name.replace(/[^a-z0-9]+/gi, '-').slice(0, 50)}`).catch(() => undefined);
        throw err;
      }
    });
  const stale = async () =>
    ((await bridge.call<Diag[]>('/diagnostics')).find((d) => d.uri === memoryUri)?.diagnostics ?? []).filter((d) => d.code === 'stale-reference');
  const staleAbout = (what: string, present: boolean, timeoutMs = 15_000) =>
    waitFor(
      `a stale-reference diagnostic about ${what} to be ${present ? 'shown' : 'gone'}`,
      async () => {
        const found = (await stale()).find((d) => d.message.includes(`\`${what}\``));
        return present ? found : found ? undefined : true;
      },
      timeoutMs,
    );
  /** Put the cursor at (line, character) and open the quick fix menu holding `title`. */
  const quickFix = async (line: number, character: number, title: string) => {
    await page.keyboard.press('Control+G');
    await page.keyboard.type(`${line + 1}:${character + 2}`);
    await page.keyboard.press('Enter');
    const action = page.locator('.action-widget .monaco-list-row', { hasText: title }).first();
    for (let attempt = 0; attempt < 3; attempt++) {
      await page.keyboard.press('Control+.');
      if (await action.waitFor({ timeout: 5_000 }).then(() => true, () => false)) return action.click();
      await page.keyboard.press('Escape');
    }
    throw new Error(`the quick fix menu has no "${title}" (3 tries)`);
  };

  before(async () => {
    assert.ok(fs.existsSync(VSIX), `${VSIX} is missing: run make vsix`);
    fixture = copyFixture();
    cs = await startCodeServer({ workspace: fixture.path, vsixes: [VSIX, HELPER_VSIX], label: 'stale' });
    bridge = new Bridge(cs.bridgeFile);
    browser = await launchBrowser();
    page = await openWorkbench(browser, cs.url, fixture.path);
  });

  after(async () => {
    await browser?.close().catch(() => undefined);
    await cs?.stop();
    fixture?.remove();
  });

  step('marks the one reference the workspace no longer has, at the path, as information', async () => {
    memoryUri = await bridge.call<string>('/open', { path: memoryPath() });
    const diag = await staleAbout('ratelimit/bucket.go', true, 60_000);
    assert.ok(diag && typeof diag === 'object');
    assert.equal(diag.severity, 2, 'vscode.DiagnosticSeverity.Information');
    const [line, start, endLine, end] = diag.range;
    const text = fs.readFileSync(memoryPath(), 'utf8').split('\n')[line] ?? '';
    assert.equal(endLine, line);
    assert.equal(text.slice(start, end), 'ratelimit/bucket.go');
    assert.equal((await stale()).length, 1, 'every other path and make target in the example exists');
    await screenshot(page, '10-stale-reference');
  });

  step("follows VS Code's file watcher: a deleted file's entry turns stale, and back, untouched", async () => {
    const spec = path.join(fixture.path, 'api', 'openapi.yaml');
    const saved = fs.readFileSync(spec);
    fs.rmSync(spec);
    await staleAbout('api/openapi.yaml', true);
    fs.writeFileSync(spec, saved);
    await staleAbout('api/openapi.yaml', false);
  });

  step('opens the consolidation with the stale entry selected', async () => {
    const diag = await staleAbout('ratelimit/bucket.go', true);
    assert.ok(diag && typeof diag === 'object');
    await activeTab(page).filter({ hasText: 'MEMORY.md' }).first().click();
    await quickFix(diag.range[0], diag.range[1], 'Consolidate MEMORY.md with this entry selected…');
    const selected = await waitFor(
      'the proposal with the entry selected',
      async () => {
        const s = await bridge.call<{ uri: string; text: string } | null>('/selection');
        return s?.uri.startsWith('metis-proposal:') && s.text.includes('ratelimit/bucket.go') ? s : undefined;
      },
      15_000,
    );
    assert.match(selected.text, /^- Rate limiting is per tenant.*`ratelimit\/bucket\.go`.*100 req\/s by default\.$/s);
    await bridge.call('/command', { command: 'workbench.action.closeActiveEditor' });
  });

  step('points the entry at where the file went', async () => {
    await bridge.call<string>('/open', { path: memoryPath() });
    const diag = await staleAbout('ratelimit/bucket.go', true);
    assert.ok(diag && typeof diag === 'object');
    await quickFix(diag.range[0], diag.range[1], 'Replace with `internal/ratelimit/bucket.go`');
    await waitFor(
      'the buffer to name internal/ratelimit/bucket.go',
      async () =>
        (await bridge.call<{ uri: string; text: string }[]>('/documents', { scheme: 'file' }))
          .find((d) => d.uri === memoryUri)
          ?.text.includes('(`internal/ratelimit/bucket.go`)') || undefined,
      10_000,
    );
    await staleAbout('ratelimit/bucket.go', false);
    assert.equal((await stale()).length, 0);
  });
});
