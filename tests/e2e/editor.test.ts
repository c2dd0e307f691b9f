/**
 * End-to-end: the built VSIX in a real VS Code (code-server), driven by Playwright and Debian's
 * Chromium, against a copy of examples/workspace (MEMORY.md over its soft cap, USER.md near it).
 * The tests run in order and share one editor: each step starts from the previous one's state.
 */

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { Bridge, copyFixture, ROOT, startCodeServer, waitFor, type CodeServer } from './lib/codeServer';
import {
  activeTab,
  chooseCodeAction,
  escapeRegExp,
  docScreenshot,
  launchBrowser,
  notification,
  openWorkbench,
  runCommand,
  screenshot,
  statusItem,
  statusText,
  waitForStatus,
} from './lib/ui';

const VSIX = path.resolve(ROOT, process.env.METIS_VSIX ?? 'dist/metis-memory-linux-x64.vsix');
const HELPER_VSIX = path.resolve(ROOT, process.env.METIS_HELPER_VSIX ?? '.cache/e2e/metis-e2e-helper.vsix');

interface DocInfo {
  uri: string;
  text: string;
  dirty: boolean;
}

describe('Metis Memory in a real VS Code', { timeout: 600_000 }, () => {
  let cs: CodeServer;
  let browser: Browser;
  let page: Page;
  let bridge: Bridge;
  let ws: string;
  let fixture: { path: string; remove(): void } | undefined;
  const memoryPath = () => path.join(ws, '.metis', 'MEMORY.md');
  const userPath = () => path.join(ws, '.metis', 'USER.md');
  const disk = (p: string) => fs.readFileSync(p, 'utf8');
  const bytes = (p: string) => fs.statSync(p).size;
  const started = Date.now();
  const lap = (label: string) => console.log(`# ${label}: ${((Date.now() - started) / 1000).toFixed(1)} s`);
  /** A test that leaves a screenshot of the editor when it fails. */
  const step = (name: string, fn: () => Promise<void> | void) =>
    it(name, async () => {
      try {
        await fn();
      } catch (err) {
        const slug = name.replace(/[^a-z0-9]+/gi, '-').slice(0, 60);
        if (page) await screenshot(page, `fail-${slug}`).catch(() => undefined);
        throw err;
      }
    });

  /**
   * VS Code keeps a closed file's document open and reloads it about a second after a write on
   * disk; until then the server follows the stale buffer and refuses writes as "unsaved" (see
   * docs/vscode.md, "Known issues"). Wait for the reload where a test writes twice in a row.
   */
  const buffersInSync = () =>
    waitFor(
      'VS Code to reload the memory files changed on disk',
      async () => {
        const docs = await bridge.call<DocInfo[]>('/documents', { scheme: 'file' });
        return (
          docs
            .filter((d) => /\/\.metis\/(MEMORY|USER)\.md$/.test(d.uri))
            .every((d) => !d.dirty && d.text === disk(d.uri.endsWith('MEMORY.md') ? memoryPath() : userPath())) ||
          undefined
        );
      },
      10_000,
    );

  before(async () => {
    assert.ok(fs.existsSync(VSIX), `${VSIX} is missing: run make vsix`);
    assert.ok(fs.existsSync(HELPER_VSIX), `${HELPER_VSIX} is missing: run make test-e2e`);
    fixture = copyFixture();
    ws = fixture.path;
    cs = await startCodeServer({ workspace: ws, vsixes: [VSIX, HELPER_VSIX], label: 'editor' });
    bridge = new Bridge(cs.bridgeFile);
    lap('code-server up');
    browser = await launchBrowser();
    page = await openWorkbench(browser, cs.url, ws);
    lap('workbench rendered');
  });

  after(async () => {
    if (page) await screenshot(page, 'zz-last-state').catch(() => undefined);
    await browser?.close().catch(() => undefined);
    await cs?.stop();
    fixture?.remove();
    lap('stopped');
  });

  step('starts from the fixture: MEMORY.md over its soft cap, USER.md under its own', () => {
    assert.ok(bytes(memoryPath()) > 2048 && bytes(memoryPath()) < 4096, `MEMORY.md is ${bytes(memoryPath())} B`);
    assert.ok(bytes(userPath()) < 1536, `USER.md is ${bytes(userPath())} B`);
  });

  step('shows both files in the status bar as soon as the server runs', async () => {
    const text = await waitForStatus(
      page,
      /MEMORY 2\.\d\/2 KB · USER 1\.\d\/1\.5 KB/,
      60_000,
      'the Metis status bar item',
    );
    assert.equal(
      text,
      `MEMORY ${(bytes(memoryPath()) / 1024).toFixed(1)}/2 KB · USER ${(bytes(userPath()) / 1024).toFixed(1)}/1.5 KB`,
    );
    lap('server running');
  });

  step('shows the over-soft-cap warning in the Problems panel and as a squiggle', async () => {
    await runCommand(page, 'Metis: Open MEMORY.md');
    await activeTab(page).filter({ hasText: 'MEMORY.md' }).waitFor({ timeout: 10_000 });
    await page.locator('.monaco-editor .squiggly-warning').first().waitFor({ timeout: 10_000 });
    // The usage lens above line 1, waited for while the editor has the focus: VS Code asks for
    // an editor's code lenses a moment (a debounce of 250 ms or more) after it shows the file,
    // cancels that request when the editor loses the focus, and asks again only at the next
    // focus or edit. The Problems panel opened sooner (its squiggles are there at once: the
    // server published them from the disk) left the editor without a lens in 2 runs of 3.
    const lens = page
      .locator('.monaco-editor .codelens-decoration', { hasText: /MEMORY\.md: 2,\d{3} B · 1\d\d% of 2,048 B soft cap/ })
      .first();
    await lens.waitFor({ timeout: 10_000 });
    await page.keyboard.press('Control+Shift+M');
    const row = page.locator('.markers-panel .monaco-list-row', {
      hasText: /MEMORY\.md is 2,\d{3} B, over its 2,048 B soft cap/,
    });
    await row.first().waitFor({ timeout: 10_000 });
    assert.equal((await page.locator('.markers-panel .monaco-list-row .codicon-warning').count()) > 0, true);
    // The README's picture: the status bar, the squiggles and the Problems panel's rows of one
    // over-cap MEMORY.md, and the usage lens in sight above line 1 (a view zone, which VS Code
    // keeps in the DOM when scrolled just out of the editor's box: the boxes are compared).
    const [lensBox, editorBox] = await Promise.all([
      lens.boundingBox(),
      page.locator('.editor-instance .monaco-editor .overflow-guard').first().boundingBox(),
    ]);
    assert.ok(
      lensBox && editorBox && lensBox.y >= editorBox.y,
      `the lens is above the editor's top: ${JSON.stringify({ lensBox, editorBox })}`,
    );
    // workbench.welcomePage.walkthroughs.openOnInstall is off (a machine setting: codeServer.ts).
    assert.doesNotMatch(cs.metisLog(), /opening the walkthrough/);
    assert.equal(
      await page.locator('.tabs-container .tab', { hasText: 'Welcome' }).count(),
      0,
      'a Welcome tab beside the files',
    );
    await page.mouse.move(0, 0); // no hover in the picture
    await docScreenshot(page, 'memory-in-the-editor');
    await screenshot(page, '01-soft-cap-warning');
  });

  step('names the entry in each quick fix of a line, and offers one removal of it', async () => {
    await page.locator('.editor-instance .monaco-editor .view-lines').first().click();
    /** The titles of the quick-fix menu at `line`:`column` (1-based), once it holds `expected`. */
    const menu = async (line: number, column: number, expected: string): Promise<string[]> => {
      const rows = page.locator('.action-widget .monaco-list-row');
      for (let attempt = 0; attempt < 3; attempt++) {
        await page.keyboard.press('Escape');
        await page.keyboard.press('Control+G');
        await page.keyboard.type(`${line}:${column}`);
        await page.keyboard.press('Enter');
        await page.keyboard.press('Control+.');
        const shown = await rows
          .filter({ hasText: expected })
          .first()
          .waitFor({ timeout: 5_000 })
          .then(
            () => true,
            () => false,
          );
        if (shown) return (await rows.allInnerTexts()).map((t) => t.replace(/\s+/g, ' ').trim());
      }
      await page.keyboard.press('Escape'); // no menu left open over the next step
      throw new Error(`the quick fix menu on line ${line} has no "${expected}" (3 tries)`);
    };
    const removals = (titles: string[]) => titles.filter((t) => t.startsWith('Remove'));
    // Line 10 names `ratelimit/bucket.go`, which moved. On the name (column 60): the stale
    // entry's fixes, and one removal, the stale one, saying why.
    const rateLimit = '“Rate limiting is per tenant, a token bucket in…”';
    const stale = `Remove stale entry ${rateLimit} (\`ratelimit/bucket.go\` does not exist)`;
    const onStale = await menu(10, 60, stale);
    await screenshot(page, '01b-quick-fix-titles');
    await page.keyboard.press('Escape');
    const all = onStale.join(' | ');
    assert.equal(removals(onStale).length, 1, all);
    assert.ok(removals(onStale)[0]?.includes(stale), all);
    assert.ok(
      onStale.some((t) => t.includes('Replace with `internal/ratelimit/bucket.go`')),
      all,
    );
    assert.ok(
      onStale.some((t) => t.includes(`Move entry ${rateLimit} to USER.md`)),
      all,
    );
    assert.ok(
      onStale.some((t) => t.includes(`Replace entry ${rateLimit}…`)),
      all,
    );
    // Line 13 repeats line 3: one removal, the duplicate's.
    const duplicate = 'Remove duplicate entry “Build with `make build`; the binary lands in…” (it repeats line 3)';
    const onDuplicate = await menu(13, 3, duplicate).finally(() => page.keyboard.press('Escape'));
    assert.deepEqual(
      removals(onDuplicate).map((t) => t.includes(duplicate)),
      [true],
      onDuplicate.join(' | '),
    );
    await page.keyboard.press('Escape');
  });

  step(
    'turns the warning into an error while typing past the hard cap, unsaved, and the status bar follows',
    async () => {
      const before = await statusText(page);
      await page.locator('.editor-instance .monaco-editor .view-lines').first().click();
      await page.keyboard.press('Control+End');
      // Paste to just under the hard cap (one edit), then type the rest key by key.
      // Paste exactly to 20 bytes under the hard cap (one edit), then type the rest key by key.
      const target = 4096 - 20;
      const line = (i: number) =>
        `- Pasted fact number ${String(i).padStart(2, '0')} that fills this memory file up to its hard cap.\n`;
      let pasted = '\n';
      for (let i = 0; Buffer.byteLength(disk(memoryPath())) + Buffer.byteLength(pasted + line(i)) <= target; i++)
        pasted += line(i);
      const short = target - Buffer.byteLength(disk(memoryPath())) - Buffer.byteLength(pasted);
      pasted += `- ${'x'.repeat(Math.max(0, short - 3))}\n`;
      assert.equal(Buffer.byteLength(disk(memoryPath())) + Buffer.byteLength(pasted), target);
      await page.evaluate(`navigator.clipboard.writeText(${JSON.stringify(pasted)})`);
      await page.keyboard.press('Control+V');
      await page
        .locator('.markers-panel .monaco-list-row', { hasText: /MEMORY\.md is 4,076 B, over its 2,048 B soft cap/ })
        .first()
        .waitFor({ timeout: 5_000 });
      assert.equal(await page.locator('.monaco-editor .squiggly-error').count(), 0, 'no error before the hard cap');
      await page.keyboard.type('- Typed by hand, key by key, until this file is past its hard cap.');
      // How soon is the bench's to measure (keystroke to diagnostics); here only that it comes
      // from the unsaved buffer, bounded so that a missing squiggle fails with a message.
      const t0 = Date.now();
      await page
        .locator('.monaco-editor .squiggly-error')
        .first()
        .waitFor({ timeout: 15_000 })
        .catch(() => {
          throw new Error('no over-hard-cap error squiggle 15 s after typing past 4,096 B');
        });
      const elapsed = Date.now() - t0;
      await page
        .locator('.markers-panel .monaco-list-row', { hasText: /over its 4,096 B hard cap/ })
        .first()
        .waitFor({ timeout: 10_000 });
      // Over the hard cap the figure is against the hard cap (4 KB), not the soft cap.
      const after = await waitForStatus(
        page,
        /MEMORY 4\.\d\/4 KB/,
        10_000,
        'the status bar to show the size against the hard cap',
      );
      assert.match(after, /^MEMORY 4\.\d\/4 KB · USER \d(\.\d)?\/1\.5 KB$/);
      assert.notEqual(after, before);
      assert.match(await statusItem(page).locator('.codicon-error').count().then(String), /^[1-9]/);
      await statusItem(page).hover();
      const tip = page
        .locator('.workbench-hover, .monaco-hover', { hasText: 'hard cap (writes past it are refused)' })
        .first();
      await tip.waitFor({ timeout: 10_000 }).catch(() => {
        throw new Error('no status bar tooltip naming the hard cap within 10 s of hovering it');
      });
      assert.match(
        await tip.innerText(),
        /MEMORY\.md: 4,\d{3} B \(as in the open editor\) — 10\d% of the 4,096 B hard cap/,
      );
      await page.mouse.move(700, 300);
      console.log(`# hard-cap error shown ${elapsed} ms after typing`);
      await screenshot(page, '02-hard-cap-error');
      // Leave the file as it is on disk for the next steps.
      await runCommand(page, 'File: Revert File');
      await waitForStatus(page, /MEMORY 2\.\d\/2 KB/, 5_000, 'the status bar to return to the disk size after revert');
    },
  );

  step('updates the status bar when another process writes USER.md', async () => {
    const before = await statusText(page);
    const extra = '\n- Written by another process: prefers tabs of width 4 in Go files, as gofmt does anyway.\n'.repeat(
      2,
    );
    fs.appendFileSync(userPath(), extra);
    const size = bytes(userPath());
    assert.ok(size > 1536, 'the write should take USER.md over its soft cap');
    const after = await waitForStatus(
      page,
      new RegExp(`USER ${(size / 1024).toFixed(1).replace('.', '\\.')}/1\\.5 KB`),
      5_000,
      'USER.md written on disk to show',
    );
    assert.notEqual(after, before);
  });

  step('shows what a chosen agent receives, with its size against that agent’s limit, and follows memory', async () => {
    await runCommand(page, 'Metis: Show Assembled Prompt…');
    const pick = (title: string) =>
      page
        .locator('.quick-input-widget .monaco-list-row')
        .filter({ has: page.locator('.label-name', { hasText: new RegExp(`^${escapeRegExp(title)}$`) }) })
        .first();
    await pick('Claude Code').waitFor({ timeout: 10_000 });
    // Each agent with the size of what it receives; Claude Code's against its 10,000 characters.
    assert.match(await pick('Claude Code').innerText(), /[\d,]+ B, \d+% of its 10,000-character limit/);
    assert.match(await pick('Cursor').innerText(), /[\d,]+ B, no documented limit/);
    await screenshot(page, '03-assembled-prompt-agents');
    await pick('Claude Code').click();
    await activeTab(page).filter({ hasText: 'Assembled Prompt — Claude Code' }).waitFor({ timeout: 10_000 });
    const promptDoc = (host: string, has = '') =>
      waitFor(
        `the ${host} prompt document${has ? ` holding "${has}"` : ''}`,
        async () =>
          (await bridge.call<DocInfo[]>('/documents', { scheme: 'metis-prompt' })).find(
            (d) => d.uri.includes(`/${host}/`) && d.text.includes(has),
          ),
        10_000,
      );
    const doc = await promptDoc('claude');
    // What the hook sends Claude Code: the header, both sections as on disk now, the end mark.
    assert.match(doc.text, /^<metis-memory>\nThis is the persistent memory of this workspace/);
    assert.match(doc.text, /^## User context \(USER\.md\)\n\n# About the user/m);
    assert.match(doc.text, /^## Workspace memory \(MEMORY\.md\)\n\n# Workspace memory/m);
    assert.ok(doc.text.includes('Written by another process'), 'the prompt shows USER.md as now on disk');
    assert.ok(doc.text.trimEnd().endsWith('</metis-memory>'));
    // Its size, over the text: the bytes and characters of exactly this text, against the limit.
    const bytes = Buffer.byteLength(doc.text);
    const chars = [...doc.text].length;
    const lens = page.locator('.monaco-editor .codelens-decoration', { hasText: 'Claude Code receives' }).first();
    await lens.waitFor({ timeout: 10_000 });
    const sized =
      `^Claude Code receives ${bytes.toLocaleString('en-US')} B \\(${chars.toLocaleString('en-US')} characters\\), ` +
      `${Math.round(chars / 100)}% of its 10,000-character limit \\| Show for Another Agent…$`;
    assert.match((await lens.innerText()).replace(/\s+/g, ' ').trim(), new RegExp(sized));
    console.log(`# Claude Code receives ${bytes} B (${chars} characters) of the example's memory`);
    await screenshot(page, '03-assembled-prompt');
    fs.appendFileSync(memoryPath(), '- Refresh marker: the prompt view follows the disk.\n');
    await promptDoc('claude', 'Refresh marker');
    // Another agent, from the lens; the last one shown comes first.
    await page.locator('.monaco-editor .codelens-decoration a', { hasText: 'Show for Another Agent…' }).first().click();
    await pick('Gemini CLI').waitFor({ timeout: 10_000 });
    const first = page.locator('.quick-input-widget .monaco-list-row .label-name').first();
    assert.equal((await first.innerText()).trim(), 'Claude Code');
    await pick('Gemini CLI').click();
    const gemini = await promptDoc('gemini', 'Refresh marker');
    assert.match(gemini.text, /^\[metis-memory\]\n/, 'Gemini escapes < and >: brackets mark the memory off');
    await page
      .locator('.monaco-editor .codelens-decoration', {
        hasText: /Gemini CLI receives [\d,]+ B \([\d,]+ characters\), no documented limit/,
      })
      .first()
      .waitFor({ timeout: 10_000 });
  });

  step(
    'refuses to apply a consolidation when the file changed on disk since the proposal opened, and reopens it on the new text',
    async () => {
      await runCommand(page, 'Metis: Consolidate MEMORY.md…');
      const apply = page.locator('.editor-actions .action-label[aria-label^="Apply Consolidation"]').first();
      await apply.waitFor({ timeout: 15_000 });
      const beforeWrite = disk(memoryPath());
      fs.writeFileSync(memoryPath(), `${beforeWrite}- Late fact written while the proposal was open.\n`);
      const changed = disk(memoryPath());
      await apply.click();
      // The server refuses it (the hash Apply sent is the one the diff was made from).
      await notification(page, /changed on disk since this proposal was opened/).waitFor({ timeout: 10_000 });
      assert.equal(disk(memoryPath()), changed, 'a refused Apply writes nothing');
      await waitFor(
        'the proposal to be reopened on the file as it is now',
        async () =>
          (await bridge.call<DocInfo[]>('/documents', { scheme: 'metis-proposal' })).find((d) =>
            d.text.includes('Late fact written while the proposal was open'),
          ),
        10_000,
      );
      await page.keyboard.press('Escape');
    },
  );

  step('consolidates: the editable proposal (the tidy result) is applied and the file on disk changes', async () => {
    await runCommand(page, 'Metis: Consolidate MEMORY.md…');
    const apply = page.locator('.editor-actions .action-label[aria-label^="Apply Consolidation"]').first();
    await apply.waitFor({ timeout: 15_000 });
    // Live size feedback on the proposal itself: a status bar item, and the server's own
    // diagnostic on it (the server analyses the proposal as the file it is for).
    const proposalStatus = page.locator('.statusbar-item', { hasText: /Proposal [\d.]+\/2 KB/ }).first();
    await proposalStatus.waitFor({ timeout: 5_000 });
    const proposalDiagnostic = await waitFor(
      'the server’s diagnostics on the proposal',
      async () =>
        (await bridge.call<{ uri: string; diagnostics: { code: string; source: string }[] }[]>('/diagnostics')).find(
          (d) => d.uri.startsWith('metis-proposal:') && d.diagnostics.some((x) => x.code === 'over-soft-cap'),
        ),
      10_000,
    );
    assert.ok(proposalDiagnostic.diagnostics.every((d) => d.source === 'metis'));
    const original = disk(memoryPath());
    assert.equal(original.split('Build with `make build`').length - 1, 2, 'the fixture has a duplicate entry');
    const tidy = await waitFor(
      'the proposal document',
      async () => (await bridge.call<DocInfo[]>('/documents', { scheme: 'metis-proposal' }))[0],
      5_000,
    );
    assert.equal(tidy.text.split('Build with `make build`').length - 1, 1, 'the tidy proposal drops the duplicate');
    await screenshot(page, '04-consolidation-proposal');
    // Edit the proposal as a person would: replace it with a shorter version, under the soft cap.
    const lines = tidy.text.split('\n');
    while (Buffer.byteLength(lines.join('\n')) > 1800) lines.splice(-3, 1);
    const curated = `${lines.join('\n').trimEnd()}\n- Consolidated in the e2e test.\n`;
    await page.locator('.editor-instance .monaco-diff-editor .editor.modified .view-lines').first().click();
    await page.keyboard.press('Control+A');
    await page.evaluate(`navigator.clipboard.writeText(${JSON.stringify(curated)})`);
    await page.keyboard.press('Control+V');
    const proposal = await waitFor(
      'the edited proposal',
      async () =>
        (await bridge.call<DocInfo[]>('/documents', { scheme: 'metis-proposal' })).find((d) => d.text === curated),
      5_000,
    );
    await waitFor(
      'the proposal status to show a size within the soft cap',
      async () => /Proposal (0|1)(\.\d)?\/2 KB/.test(await proposalStatus.innerText()) || undefined,
      5_000,
    );
    await screenshot(page, '05-consolidation-edited');
    await apply.click();
    await waitFor(
      'MEMORY.md on disk to equal the applied proposal',
      () => disk(memoryPath()) === proposal.text || undefined,
      10_000,
    );
    assert.equal(disk(memoryPath()).split('Build with `make build`').length - 1, 1, 'the duplicate is gone');
    await waitForStatus(
      page,
      /MEMORY (0|1)\.\d\/2 KB|MEMORY 1\/2 KB/,
      5_000,
      'the status bar to show the consolidated size',
    );
  });

  step('"Replace entry…" from a code action prompts for the new text and rewrites the entry on disk', async () => {
    await buffersInSync();
    await runCommand(page, 'Metis: Open MEMORY.md');
    await activeTab(page).filter({ hasText: 'MEMORY.md' }).waitFor({ timeout: 10_000 });
    // The last entry is the one the consolidation added: put the cursor on it.
    await page.keyboard.press('Control+End');
    await page.keyboard.press('ArrowUp');
    await page
      .locator('.editor-instance .view-line', { hasText: 'Consolidated in the e2e test.' })
      .first()
      .waitFor({ timeout: 10_000 });
    // The menu lists what the server answered for the document version it had: on a busy
    // machine the first request can come before the reopened buffer's analysis, so ask again
    // (bounded) rather than fail on the first menu.
    await chooseCodeAction(page, 'Replace entry “Consolidated in the e2e test.”…');
    const input = page.locator('.quick-input-widget .quick-input-box input');
    await input.waitFor({ state: 'visible', timeout: 10_000 });
    assert.equal(await input.inputValue(), '- Consolidated in the e2e test.');
    await input.fill('- Consolidated in the e2e test, then reworded through the code action.');
    await page.keyboard.press('Enter');
    await waitFor(
      'MEMORY.md on disk to hold the replaced entry',
      () =>
        disk(memoryPath()).includes('- Consolidated in the e2e test, then reworded through the code action.') ||
        undefined,
      10_000,
    );
    assert.ok(!disk(memoryPath()).includes('- Consolidated in the e2e test.\n'));
  });

  step('registers the seven language-model tools (the user memory’s three among them)', async () => {
    // From here on the files are not open: the server reports what is on disk.
    await runCommand(page, 'View: Close All Editors');
    const tools = await waitFor(
      'vscode.lm.tools to list the Metis tools',
      async () => {
        const names = await bridge.call<string[]>('/tools');
        const ours = ['memory_add', 'memory_replace', 'memory_consolidate', 'memory_read'];
        ours.push('user_memory_add', 'user_memory_replace', 'user_memory_consolidate');
        return ours.every((n) => names.includes(n))
          ? names
          : undefined;
      },
      20_000,
      250,
    );
    assert.ok(tools.includes('memory_read'));
  });

  step('memory_add appends an entry on disk', async () => {
    const text = await bridge.call<string>('/invokeTool', {
      name: 'memory_add',
      input: { file: 'USER.md', entry: 'Prefers dark themes in every editor.' },
    });
    assert.match(text, /USER\.md/);
    assert.ok(disk(userPath()).includes('Prefers dark themes in every editor.'));
  });

  step('memory_replace replaces a unique substring on disk', async () => {
    const text = await bridge.call<string>('/invokeTool', {
      name: 'memory_replace',
      input: {
        file: 'USER.md',
        old: 'Prefers dark themes in every editor.',
        new: 'Prefers light themes, except at night.',
      },
    });
    assert.ok(!text.startsWith('Error'), text);
    const now = disk(userPath());
    assert.ok(now.includes('Prefers light themes, except at night.') && !now.includes('Prefers dark themes'));
  });

  step('a tool error comes back as text the model can act on, and nothing is written', async () => {
    const beforeText = disk(userPath());
    const text = await bridge.call<string>('/invokeTool', {
      name: 'memory_replace',
      input: { file: 'USER.md', old: 'This text is not in the file.', new: 'x' },
    });
    assert.match(text, /^Error \(not_found\): /);
    const invalid = await bridge.call<string>('/invokeTool', {
      name: 'memory_add',
      input: { file: 'NOTES.md', entry: 'x' },
    });
    assert.match(invalid, /^Error \(invalid_input\): /);
    assert.equal(disk(userPath()), beforeText);
  });

  step('memory_consolidate replaces the whole file on disk', async () => {
    const content =
      '# Workspace memory\n\n- tallyd: Go 1.23 HTTP API counting events per tenant.\n- `make test` before every push.\n';
    const text = await bridge.call<string>('/invokeTool', {
      name: 'memory_consolidate',
      input: { file: 'MEMORY.md', content },
    });
    assert.ok(!text.startsWith('Error'), text);
    assert.equal(disk(memoryPath()), content);
  });

  step('memory_read returns both files and their usage, as the MCP tool does', async () => {
    await buffersInSync();
    const text = await bridge.call<string>('/invokeTool', { name: 'memory_read', input: {} });
    const read = JSON.parse(text) as Record<string, { content: string; size_bytes: number; soft_cap: number }>;
    assert.equal(read['MEMORY.md']?.content, disk(memoryPath()));
    assert.equal(read['MEMORY.md']?.size_bytes, bytes(memoryPath()));
    assert.equal(read['USER.md']?.content, disk(userPath()));
    assert.equal(read['USER.md']?.soft_cap, 1536);
  });

  step('no secret reaches the model through the language-model tools', async () => {
    // In pieces, so that secret scanners do not flag this file.
    const token = ['ghp_', 'aB3dE5gH7jK9mN1p', 'Q3sT5vW7yZ9bC1dE3fG5'].join('');
    const before = disk(userPath());
    const refused = await bridge.call<string>('/invokeTool', {
      name: 'memory_add',
      input: { file: 'USER.md', entry: `- deploy key: ${token}` },
    });
    assert.match(refused, /^Error \(secret_detected\): .*GitHub.*line 1, column 15/s);
    assert.ok(!refused.includes(token.slice(4, 12)), refused);
    assert.equal(disk(userPath()), before, 'nothing written');
    // A secret typed into the file by hand is redacted in what the model reads, the rest is not.
    fs.writeFileSync(userPath(), `${before}- typed by hand: ${token}\n`);
    try {
      await buffersInSync();
      const read = JSON.parse(await bridge.call<string>('/invokeTool', { name: 'memory_read', input: {} })) as Record<
        string,
        { content: string }
      >;
      const content = read['USER.md']?.content ?? '';
      assert.ok(!content.includes(token.slice(4, 12)), content);
      assert.match(content, /- typed by hand: \[redacted: [^\]]*GitHub[^\]]*\]/);
      assert.ok(content.startsWith(before.trimEnd()), 'every other entry reaches the model');
      const added = await bridge.call<string>('/invokeTool', {
        name: 'memory_add',
        input: { file: 'USER.md', entry: '- Reviews on Fridays.' },
      });
      assert.ok(!added.startsWith('Error') && !added.includes(token.slice(4, 12)), added);
      assert.match(added, /\[redacted: [^\]]*GitHub[^\]]*\]/);
    } finally {
      fs.writeFileSync(userPath(), before);
    }
    await buffersInSync();
  });

  step('the exported API reports usage and fires onDidUpdateMemory for every write', async () => {
    assert.equal(await bridge.call<number>('/apiVersion'), 1);
    const usage = await bridge.call<Record<string, { size_bytes: number; soft_cap: number }>>('/api', {
      method: 'usage',
    });
    assert.equal(usage['MEMORY.md']?.size_bytes, bytes(memoryPath()));
    assert.equal(usage['USER.md']?.size_bytes, bytes(userPath()));
    await bridge.call('/api', { method: 'memoryAdd', args: ['MEMORY.md', 'Added through the exported API.'] });
    const events = await waitFor(
      'onDidUpdateMemory to report the API write',
      async () => {
        const ev = await bridge.call<{ file: string; operation: string; afterSizeBytes: number }[]>('/events');
        return ev.some((e) => e.operation === 'add' && e.file === 'MEMORY.md') ? ev : undefined;
      },
      5_000,
    );
    assert.equal(events.at(-1)?.afterSizeBytes, bytes(memoryPath()));
    await buffersInSync();
  });

  step('an agent write over the soft cap shows the eviction message with "Consolidate…"', async () => {
    const long = Array.from(
      { length: 30 },
      (_, i) => `- Bulk fact ${i}: the nightly rollup writes daily_counts for every tenant.`,
    ).join('\n');
    await bridge.call<string>('/invokeTool', { name: 'memory_add', input: { file: 'MEMORY.md', entry: long } });
    const toast = notification(page, /MEMORY\.md .*over its 2,048 B soft cap/);
    await toast.waitFor({ timeout: 10_000 });
    await toast.locator('.monaco-button', { hasText: 'Consolidate…' }).waitFor({ timeout: 5_000 });
    await waitForStatus(page, /MEMORY 2\.\d\/2 KB/, 5_000, 'the status bar to show the agent write');
    await screenshot(page, '06-eviction-message');
    // A second write over the soft cap while the message is up does not stack another one.
    await buffersInSync();
    const second = await bridge.call<string>('/invokeTool', {
      name: 'memory_add',
      input: { file: 'MEMORY.md', entry: `- One more bulk fact: ${'the rollup is idempotent. '.repeat(8)}` },
    });
    assert.ok(!second.startsWith('Error'), second);
    const shown = (bytes(memoryPath()) / 1024).toFixed(1).replace(/\.0$/, '').replace('.', '\\.');
    await waitForStatus(page, new RegExp(`MEMORY ${shown}/2 KB`), 5_000, 'the status bar to show the second write');
    assert.equal(
      await page
        .locator('.notifications-toasts .notification-toast', { hasText: /MEMORY\.md .*over its 2,048 B soft cap/ })
        .count(),
      1,
    );
  });

  step('"Metis: Restart Server" restarts the server, and it answers again', async () => {
    await runCommand(page, 'Metis: Restart Server');
    await page
      .locator('.statusbar-item', { hasText: 'Metis Memory: server restarted' })
      .first()
      .waitFor({ timeout: 30_000 });
    const usage = await bridge.call<Record<string, { size_bytes: number }>>('/api', { method: 'usage' });
    assert.equal(usage['MEMORY.md']?.size_bytes, bytes(memoryPath()));
  });
});
