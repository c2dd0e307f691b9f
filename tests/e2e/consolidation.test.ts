/**
 * Consolidation in a real VS Code (code-server), in one window on a copy of examples/workspace
 * (its MEMORY.md over the soft cap, naming `ratelimit/bucket.go`, which has moved to
 * `internal/ratelimit/`), two suites in turn:
 *
 * - "Draft with Language Model", against a language model the e2e helper extension registers
 *   (`vscode.lm.registerLanguageModelChatProvider`) and answers from a script each test sets:
 *   what the request carries, the draft in the editable proposal with the server's diagnostics
 *   on it, an over-cap draft never applied, cancelling, and no model at all. None of it writes
 *   the memory files.
 * - Stale references: the one the workspace no longer has is marked, VS Code's own file
 *   watching brings a deleted file's entry back as stale (and clears it when the file returns)
 *   without a keystroke, and the quick fixes open the consolidation on the entry and point it
 *   at where the file went.
 *
 * One window for both: a window costs about 20 s of CPU (code-server, Chromium, the extension
 * host, the server), and the first suite leaves the files as the second needs them.
 */

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { Bridge, copyFixture, ROOT, startCodeServer, waitFor, type CodeServer } from './lib/codeServer';
import { activeTab, docScreenshot, launchBrowser, notification, openWorkbench, runCommand, screenshot, waitForStatus } from './lib/ui';

const VSIX = path.resolve(ROOT, process.env.METIS_VSIX ?? 'dist/metis-memory-linux-x64.vsix');
const HELPER_VSIX = path.resolve(ROOT, process.env.METIS_HELPER_VSIX ?? '.cache/e2e/metis-e2e-helper.vsix');
const MODEL = 'Metis Scripted Model';

interface DocInfo {
  uri: string;
  text: string;
}
interface FileDiagnostics {
  uri: string;
  diagnostics: { code: string; source: string }[];
}
interface Diag {
  uri: string;
  diagnostics: { code: string; severity: number; message: string; range: [number, number, number, number] }[];
}

let cs: CodeServer;
let browser: Browser;
let page: Page;
let bridge: Bridge;
let fixture: { path: string; remove(): void };

const memoryPath = () => path.join(fixture.path, '.metis', 'MEMORY.md');
/** Tests that leave a screenshot of the window when they fail (`fail-<suite>-<test>.png`). */
const stepIn = (suite: string) => (name: string, fn: () => Promise<void>) =>
  it(name, async () => {
    try {
      await fn();
    } catch (err) {
      if (page) await screenshot(page, `fail-${suite}-${name.replace(/[^a-z0-9]+/gi, '-').slice(0, 50)}`).catch(() => undefined);
      throw err;
    }
  });

before(async () => {
  assert.ok(fs.existsSync(VSIX), `${VSIX} is missing: run make vsix`);
  fixture = copyFixture();
  cs = await startCodeServer({ workspace: fixture.path, vsixes: [VSIX, HELPER_VSIX], label: 'consolidation' });
  bridge = new Bridge(cs.bridgeFile);
  browser = await launchBrowser();
  page = await openWorkbench(browser, cs.url, fixture.path);
  // The first test's command needs the server: with three editors starting on two cores, it
  // ran once before the server did and the proposal took longer than the test's 15 s.
  await waitForStatus(page, /MEMORY \d/, 60_000, 'the Metis status bar item (the server running)');
});

after(async () => {
  await browser?.close().catch(() => undefined);
  await cs?.stop();
  fixture?.remove();
});

/** Script the model's next answers; it is offered to the editor from then on. */
const script = async (answers: unknown[]) => {
  await bridge.call('/lm', { answers });
  await waitFor(`${MODEL} among the editor's models`, async () => (await bridge.call<string[]>('/models')).includes(MODEL) || undefined, 20_000);
};

describe('Draft with Language Model, against a scripted model', { timeout: 600_000 }, () => {
  const step = stepIn('model');

  const proposal = () =>
    waitFor('the proposal document', async () => (await bridge.call<DocInfo[]>('/documents', { scheme: 'metis-proposal' }))[0], 10_000);
  const proposalCodes = async () =>
    (await bridge.call<FileDiagnostics[]>('/diagnostics')).find((d) => d.uri.startsWith('metis-proposal:'))?.diagnostics.map((d) => d.code) ?? [];
  /** A fresh proposal (the tidy result, just over the soft cap): the server's diagnostics
   * on it say when it replaced whatever the previous step left in it. */
  const openProposal = async () => {
    await runCommand(page, 'Metis: Consolidate MEMORY.md…');
    await page.locator('.editor-actions .action-label[aria-label^="Apply Consolidation"]').first().waitFor({ timeout: 15_000 });
    await waitFor(
      'the fresh proposal, over the soft cap only',
      async () => {
        const codes = await proposalCodes();
        return (codes.includes('over-soft-cap') && !codes.includes('over-hard-cap')) || undefined;
      },
      15_000,
    );
    return proposal();
  };
  /** Run the draft; VS Code asks once whether Metis Memory may use another extension's model. */
  const draft = async (how: 'palette' | 'command' = 'command') => {
    if (how === 'palette') await runCommand(page, 'Metis: Draft with Language Model');
    else void bridge.call('/command', { command: 'metis.draftWithModel' }).catch(() => undefined);
    const allow = page.locator('.monaco-dialog-box .monaco-button', { hasText: /^Allow$/ });
    await allow.click({ timeout: 3_000 }).catch(() => undefined);
  };



  step('with no model at all, says so and leaves the proposal alone', async () => {
    assert.deepEqual(await bridge.call<string[]>('/models'), [], 'code-server has no model of its own');
    const before = await openProposal();
    await docScreenshot(page, 'consolidation-diff'); // the file against its editable proposal
    await bridge.call('/command', { command: 'metis.draftWithModel' });
    await notification(page, /No language model is available in this editor/).waitFor({ timeout: 10_000 });
    assert.equal((await proposal()).text, before.text);
    await page.keyboard.press('Escape');
  });

  step("sends the file's text, its caps and the instruction, and fills the proposal with the answer", async () => {
    await script([{ chunks: ['```markdown\n# Memory\n\n', '- Builds with `make build`.\n', '- Drafted by the model.\n```\n'] }]);
    const before = await openProposal();
    await draft('palette');
    const drafted = await waitFor(
      'the drafted proposal',
      async () => (await bridge.call<DocInfo[]>('/documents', { scheme: 'metis-proposal' })).find((d) => d.text !== before.text),
      20_000,
    );
    assert.equal(drafted.text, '# Memory\n\n- Builds with `make build`.\n- Drafted by the model.\n', 'fences stripped');
    const [request] = await bridge.call<{ text: string }[]>('/lm/requests');
    assert.ok(request, 'the model got no request');
    assert.ok(request.text.includes(`<MEMORY.md>\n${before.text}\n</MEMORY.md>`), 'the request carries the proposal text');
    assert.match(request.text, /at most 2,048 B of UTF-8 \(its soft cap; it is [\d,]+ B now\)\. Never exceed 4,096 B, its hard cap/);
    assert.match(request.text, /Reply with the new file content only: no preamble, no code fences\./);
    // The server judges the draft like any edit: under the soft cap, its warning is gone.
    await waitFor('the soft-cap warning to leave the drafted proposal', async () => !(await proposalCodes()).includes('over-soft-cap') || undefined, 15_000);
    await page.locator('.statusbar-item', { hasText: /Proposal 0(\.\d)?\/2 KB/ }).first().waitFor({ timeout: 10_000 });
    await screenshot(page, '09-model-draft');
  });

  step('shows an answer over the hard cap as such, and never applies it', async () => {
    const huge = `# Memory\n\n${Array.from({ length: 90 }, (_, i) => `- A long drafted fact number ${i} that the model should never have written.`).join('\n')}\n`;
    assert.ok(Buffer.byteLength(huge) > 4096);
    await script([{ chunks: [huge] }]);
    await openProposal();
    await draft();
    await waitFor('the over-hard-cap error on the drafted proposal', async () => (await proposalCodes()).includes('over-hard-cap') || undefined, 20_000);
    assert.equal((await proposal()).text, huge);
    const onDisk = fs.readFileSync(memoryPath(), 'utf8');
    await page.locator('.editor-actions .action-label[aria-label^="Apply Consolidation"]').first().click();
    await notification(page, /Not applied: .*hard cap/).waitFor({ timeout: 10_000 });
    assert.equal(fs.readFileSync(memoryPath(), 'utf8'), onDisk, 'an over-cap draft is never written');
    await page.keyboard.press('Escape');
  });

  step('cancelling leaves the proposal as it was', async () => {
    await script([{ hang: true }]);
    const before = await openProposal();
    await draft();
    const progress = notification(page, new RegExp(`Drafting MEMORY\\.md with ${MODEL}`));
    await progress.waitFor({ timeout: 15_000 });
    await progress.locator('.monaco-button', { hasText: 'Cancel' }).click();
    await waitFor('the model to see the cancellation', async () => (await bridge.call<{ cancelled: boolean }[]>('/lm/requests'))[0]?.cancelled || undefined, 10_000);
    assert.equal((await proposal()).text, before.text);
  });
});

describe('Apply, as a person meets it', { timeout: 600_000 }, () => {
  const step = stepIn('apply');
  const applyButton = () => page.locator('.editor-actions .action-label[aria-label^="Apply Consolidation"]').first();
  const bytes = (n: number) => `${n.toLocaleString('en-US')} B`;
  const visibleToasts = async () => {
    const toasts = page.locator('.notifications-toasts .notification-toast');
    const shown: string[] = [];
    for (let i = 0; i < (await toasts.count()); i++) {
      const toast = toasts.nth(i);
      if (await toast.isVisible()) shown.push((await toast.innerText()).replace(/\s+/g, ' ').trim());
    }
    return shown;
  };
  /** What the editors show after their lines: decorations, drawn as CSS `::after` content
   * (on line 1 itself, or on its copy in sticky scroll when the diff opens further down). */
  const shownAfterLines = async () =>
    page.evaluate<string[]>(`Array.from(document.querySelectorAll('.monaco-editor *'))
      .map((el) => getComputedStyle(el, '::after').content || '')
      .filter((c) => c && c !== 'none' && c !== 'normal')`);
  const closeEverything = async () => {
    void bridge.call('/command', { command: 'workbench.action.closeAllEditors' }).catch(() => undefined);
    const dontSave = page.locator('.monaco-dialog-box .monaco-button', { hasText: "Don't Save" });
    await waitFor(
      'every editor closed',
      async () => {
        if (await dontSave.isVisible()) await dontSave.click().catch(() => undefined);
        return (await page.locator('.tabs-container .tab').count()) === 0 || undefined;
      },
      15_000,
    );
  };
  const clearToasts = async () => {
    await bridge.call('/command', { command: 'notifications.clearAll' });
    await waitFor('every notification cleared', async () => (await visibleToasts()).length === 0 || undefined, 5_000);
  };
  let original = '';
  before(() => {
    original = fs.readFileSync(memoryPath(), 'utf8');
  });
  // The stale-reference suite below needs the example's file as it was, in a full window.
  after(async () => {
    fs.writeFileSync(memoryPath(), original);
    await page.setViewportSize({ width: 1400, height: 900 });
  });

  step('Add Entry… adds the fact as a "- " list item, with one message naming the command to shorten the file', async () => {
    const before = Buffer.byteLength(fs.readFileSync(memoryPath(), 'utf8'));
    await clearToasts();
    await runCommand(page, 'Metis: Add Entry…');
    await page.locator('.quick-input-widget .monaco-list-row', { hasText: 'MEMORY.md' }).first().click({ timeout: 10_000 });
    const input = page.locator('.quick-input-widget .quick-input-box input');
    await page.locator('.quick-input-widget', { hasText: 'added as a "- " list item unless it starts with one' }).waitFor({ timeout: 10_000 });
    await input.fill('Deploys go out on Tuesdays after the 10:00 stand-up.');
    await page.keyboard.press('Enter');
    const line = '- Deploys go out on Tuesdays after the 10:00 stand-up.\n';
    await waitFor('the entry on disk', () => fs.readFileSync(memoryPath(), 'utf8').endsWith(line) || undefined, 10_000);
    const after = before + Buffer.byteLength(line);
    const message = notification(page, /Added entry to MEMORY\.md: /);
    await message.waitFor({ timeout: 10_000 });
    assert.equal(
      (await message.locator('.notification-list-item-message').innerText()).trim(),
      `Added entry to MEMORY.md: ${bytes(before)} → ${bytes(after)} (soft cap 2,048 B, hard cap 4,096 B), ` +
        `${bytes(after - 2048)} over the soft cap: run "Metis: Consolidate MEMORY.md…" to shorten it.`,
    );
    assert.equal((await visibleToasts()).length, 1, `one message, not the eviction too: ${JSON.stringify(await visibleToasts())}`);
  });

  step('a proposal still over the hard cap says so with its numbers, offers the draft, and Apply says what to do', async () => {
    // Written by hand, past the hard cap: the tidy proposal drops one duplicate and stays over.
    const extra = Array.from({ length: 40 }, (_, i) => `- Hand-written fact ${i}: the release checklist step that must not be skipped.`).join('\n');
    fs.writeFileSync(memoryPath(), `${original}${extra}\n`);
    const onDisk = fs.readFileSync(memoryPath(), 'utf8');
    await script([{ chunks: ['# Workspace memory\n\n- Drafted under the cap after Apply was refused.\n'] }]);
    await clearToasts();
    await closeEverything();
    await runCommand(page, 'Metis: Consolidate MEMORY.md…');
    await applyButton().waitFor({ timeout: 15_000 });
    assert.equal((await applyButton().innerText()).trim(), 'Apply', 'the Apply button shows its title, not a bare ✓');
    const tidy = await waitFor(
      'the proposal made from the file as it is now',
      async () => (await bridge.call<DocInfo[]>('/documents', { scheme: 'metis-proposal' })).find((d) => d.text.includes('Hand-written fact 39')),
      10_000,
    );
    const size = Buffer.byteLength(tidy.text);
    assert.ok(size > 4096, `the tidy proposal is still over the hard cap (${size} B)`);
    const still = `⚠ ${bytes(size - 4096)} over the hard cap`;
    await waitFor('the over-cap note after the proposal’s first line', async () => (await shownAfterLines()).some((t) => t.includes(still)) || undefined, 15_000);
    const told = notification(page, new RegExp(`The proposal for MEMORY\\.md is still ${bytes(size)}, over the 4,096 B hard cap by ${bytes(size - 4096)}: Apply would be refused`));
    await told.waitFor({ timeout: 10_000 });
    await told.locator('.monaco-button', { hasText: 'Draft with Language Model' }).waitFor({ timeout: 5_000 });
    await screenshot(page, '11-proposal-over-the-hard-cap');
    await clearToasts();
    await applyButton().click();
    const refused = notification(page, /Not applied: the proposal is [\d,]+ B, [\d,]+ B over MEMORY\.md's 4,096 B hard cap\. Nothing was written\. Remove or shorten entries in it until it is at most 4,096 B/);
    await refused.waitFor({ timeout: 10_000 });
    const refusedText = await refused.innerText();
    for (const word of ['memory_consolidate', 'memory_add', '{"file"', 'Expected {']) assert.ok(!refusedText.includes(word), refusedText);
    assert.equal(fs.readFileSync(memoryPath(), 'utf8'), onDisk, 'a refused Apply writes nothing');
    // The refusal's own button runs the draft on this proposal.
    await refused.locator('.monaco-button', { hasText: 'Draft with Language Model' }).click();
    await page.locator('.monaco-dialog-box .monaco-button', { hasText: /^Allow$/ }).click({ timeout: 3_000 }).catch(() => undefined);
    await waitFor(
      'the drafted proposal',
      async () =>
        (await bridge.call<DocInfo[]>('/documents', { scheme: 'metis-proposal' })).some((d) =>
          d.text.includes('Drafted under the cap after Apply was refused'),
        ) || undefined,
      20_000,
    );
    assert.equal(fs.readFileSync(memoryPath(), 'utf8'), onDisk, 'drafting writes nothing');
  });

  step('a file with nothing to remove says so when its proposal opens, once', async () => {
    const facts = Array.from({ length: 30 }, (_, i) => `- Distinct fact ${i}: the deploy job ${i} runs after the migration step.`);
    fs.writeFileSync(memoryPath(), `# Workspace memory\n\n${facts.join('\n')}\n`);
    await clearToasts();
    await closeEverything();
    await runCommand(page, 'Metis: Consolidate MEMORY.md…');
    await applyButton().waitFor({ timeout: 15_000 });
    const told = notification(page, /MEMORY\.md has no duplicate or empty entries, so the proposal starts as the file: merge, shorten or drop entries in it, then Apply/);
    await told.waitFor({ timeout: 10_000 });
    // It stands for the over-cap notice: one message about the proposal's content. (Other
    // toasts may come: the test's own write brings the eviction notice.)
    const texts = await page.locator('.notifications-toasts .notification-toast').allInnerTexts();
    const about = texts.filter((t) => /proposal starts as the file|The proposal for MEMORY\.md is still/.test(t));
    assert.equal(about.length, 1, texts.join('\n---\n'));
  });

  step('Apply shows the file from its top, with one message that names the next command', async () => {
    await closeEverything();
    fs.writeFileSync(memoryPath(), original);
    // The file open and scrolled to its end, as a person reading the last entries leaves it
    // (a window too short for the whole file, so that its end is a scroll away).
    await page.setViewportSize({ width: 1400, height: 520 });
    await bridge.call<string>('/open', { path: memoryPath() });
    await page.locator('.editor-instance .view-line', { hasText: '# Workspace memory' }).first().waitFor({ timeout: 10_000 });
    await page.locator('.editor-instance .view-lines').first().click();
    await page.keyboard.press('Control+End');
    await waitFor(
      'MEMORY.md scrolled past its first line',
      async () => (await page.locator('.editor-instance .view-line', { hasText: '# Workspace memory' }).count()) === 0 || undefined,
      5_000,
    );
    await runCommand(page, 'Metis: Consolidate MEMORY.md…');
    await applyButton().waitFor({ timeout: 15_000 });
    const applied = (
      await waitFor(
        'the proposal made from the example file',
        async () =>
          (await bridge.call<DocInfo[]>('/documents', { scheme: 'metis-proposal' })).find(
            (d) => d.text.includes('Events older than 400 days') && !d.text.includes('Hand-written fact'),
          ),
        10_000,
      )
    ).text;
    const size = Buffer.byteLength(applied);
    assert.ok(size > 2048 && size <= 4096, `the tidy proposal is over the soft cap only (${size} B)`);
    const still = `⚠ ${bytes(size - 2048)} over the soft cap`;
    await waitFor('the soft-cap note after the proposal’s first line', async () => (await shownAfterLines()).some((t) => t.includes(still)) || undefined, 15_000);
    await clearToasts();
    await applyButton().click();
    const message = notification(page, /Consolidated MEMORY\.md: /);
    await message.waitFor({ timeout: 10_000 });
    const text = (await message.innerText()).replace(/\s+/g, ' ');
    assert.ok(
      text.includes(
        `Consolidated MEMORY.md: ${bytes(Buffer.byteLength(original))} → ${bytes(size)} (soft cap 2,048 B, hard cap 4,096 B), ` +
          `still ${bytes(size - 2048)} over the soft cap: run "Metis: Consolidate MEMORY.md…" to shorten it.`,
      ),
      text,
    );
    assert.ok(!text.includes('memory_consolidate'), text);
    assert.equal(fs.readFileSync(memoryPath(), 'utf8'), applied);
    // The eviction the server sent for this write came before the command's answer: had it
    // been shown, it would be here too.
    assert.deepEqual((await visibleToasts()).length, 1, `one message after Apply: ${JSON.stringify(await visibleToasts())}`);
    await activeTab(page).filter({ hasText: 'MEMORY.md' }).first().waitFor({ timeout: 10_000 });
    assert.equal(await page.locator('.tabs-container .tab', { hasText: 'Proposal' }).count(), 0, 'the proposal is closed');
    await page.locator('.editor-instance .view-line', { hasText: '# Workspace memory' }).first().waitFor({ state: 'visible', timeout: 10_000 });
    // The editor draws only the lines in view (its sticky-scroll heading is no .view-line).
    const numbers = await page.locator('.editor-instance .margin-view-overlays .line-numbers').allInnerTexts();
    assert.ok(numbers.map((n) => n.trim()).includes('1'), `the applied file is shown from its first line, not lines ${numbers.join(', ')}`);
    await screenshot(page, '12-applied');
  });
});

describe('stale references in a real VS Code', { timeout: 600_000 }, () => {
  let memoryUri = '';
  before(async () => {
    // The drafts above leave their proposal edited: close every editor without saving, so the
    // quick fix below opens a fresh proposal, as in a window of its own.
    void bridge.call('/command', { command: 'workbench.action.closeAllEditors' }).catch(() => undefined);
    const dontSave = page.locator('.monaco-dialog-box .monaco-button', { hasText: "Don't Save" });
    await waitFor(
      'every editor closed',
      async () => {
        if (await dontSave.isVisible()) await dontSave.click().catch(() => undefined);
        return (await page.locator('.tabs-container .tab').count()) === 0 || undefined;
      },
      15_000,
    );
  });
  const step = stepIn('stale');
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
