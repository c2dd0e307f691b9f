/**
 * Memory History and the review inbox in a real VS Code (code-server), in one window on a copy
 * of examples/workspace whose MEMORY.md is cut to its first entries (under the soft cap, so
 * no over-cap warning joins the notifications):
 *
 * - two writes, one from the terminal (`metis-memory add`) and one from the editor, are listed
 *   newest first with when and who; selecting one opens its diff; Undo This Change, a refused
 *   second undo, Put Back of the entry it archived, and Restore This Version change the file
 *   on disk as the server says;
 * - with review on, a language-model tool's write waits: the notification, the status bar's
 *   count, the diff of the staged change, Accept writes it, Reject does not, a burst brings one
 *   notification, an accept the file no longer allows is refused; the `metis.reviewAgentWrites`
 *   setting reaches the server when it changes and when the editor starts.
 */

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe } from 'node:test';
import type { Page } from 'playwright-core';
import { CONFIG_HOME, ROOT, waitFor, type Bridge, type CodeServer } from './lib/codeServer';
import {
  diffSides,
  historyPane,
  historyRow,
  openHistoryWindow,
  reviewItem,
  titleAction,
  type DocInfo,
  type HistoryWindow,
} from './lib/historyWindow';
import {
  activeTab,
  clearToasts,
  docScreenshot,
  notification,
  openInWindow,
  runCommand,
  stepsScreenshotOnFailure,
  toastText,
  waitForStatus,
  widenSideBar,
} from './lib/ui';

const VSIX = path.resolve(ROOT, process.env.METIS_VSIX ?? 'dist/metis-memory-linux-x64.vsix');
const HELPER_VSIX = path.resolve(ROOT, process.env.METIS_HELPER_VSIX ?? '.cache/e2e/metis-e2e-helper.vsix');
const CLI = path.join(ROOT, '.venv', 'bin', 'metis-memory');

interface HistoryRecord {
  id: number;
  operation: string;
  door: string;
  summary: string;
  person: string;
}

let win: HistoryWindow | undefined;
let cs: CodeServer;
let page: Page;
let bridge: Bridge;
let fixture: { path: string; remove(): void };
let workspace = '';

const memoryPath = () => path.join(fixture.path, '.metis', 'MEMORY.md');
const disk = () => fs.readFileSync(memoryPath(), 'utf8');

const CLI_ENTRY = '- Deploys go through ArgoCD; never kubectl apply by hand.';
const EDITOR_ENTRY = '- Staging runs the nightly load test at 02:00 UTC.';
const AGENT_ENTRY = '- Use pnpm, not npm: the lock file is pnpm-lock.yaml.';
const REJECTED_ENTRY = '- The team prefers tabs over spaces everywhere.';
const BURST_KEPT = '- Releases are cut on Thursdays after the freeze.';
const BURST_DROPPED = '- Every handler logs its request body.';
const LANDED_ENTRY = '- Code review needs one approval from the owning team.';

/** Tests that leave a screenshot of the window when they fail (`fail-history-<test>.png`). */
const step = stepsScreenshotOnFailure('history', () => page);

/** The first line number each side of the diff editor shows at its top. */
const topLines = async (): Promise<string[]> =>
  page.evaluate<string[]>(`['original', 'modified'].map((side) => {
    const editor = document.querySelector('.monaco-diff-editor .editor.' + side);
    if (!editor) return '';
    const top = editor.getBoundingClientRect().top;
    const numbers = [...editor.querySelectorAll('.line-numbers')]
      .filter((el) => !el.closest('.sticky-widget'))
      .map((el) => ({ text: el.textContent.trim(), top: el.getBoundingClientRect().top }))
      .filter((n) => n.text !== '' && n.top >= top)
      .sort((a, b) => a.top - b.top);
    return numbers[0] ? numbers[0].text : '';
  })`);

/** For a picture: the diff's two sides scrolled together (the second loads a moment later). */
const diffSettled = () =>
  waitFor(
    'both sides of the diff scrolled to the same line',
    async () => {
      const [left, right] = await topLines();
      return left && left === right ? true : undefined;
    },
    10_000,
  );

/** Whether review is on and what waits, as the server says. */
const reviewState = async (): Promise<{ on: boolean; staged: unknown[] }> =>
  bridge.call('/command', { command: 'metis.review', args: [{ workspace }] });

/** The server's own record list, through its command (what the view shows comes from it). */
const history = async (): Promise<HistoryRecord[]> =>
  (
    await bridge.call<{ records: HistoryRecord[] }>('/command', {
      command: 'metis.history',
      args: [{ workspace, file: 'MEMORY.md' }],
    })
  ).records;

/** The text of the error notification matching `text`: its toast, or, when VS Code kept the
 * toast back (it holds one that comes on the heels of others), its row in the notification
 * centre. The server's refusal is in its log either way; the person must be able to read it. */
const errorShown = async (text: RegExp, timeout = 15_000): Promise<string> => {
  const overdue = Date.now() + 3_000;
  return waitFor(
    'the error notification',
    async () => {
      for (const where of [
        '.notifications-toasts .notification-toast',
        '.notifications-center .notification-list-item',
      ]) {
        const found = page.locator(where, { has: page.locator('.codicon-error') }).filter({ hasText: text });
        if ((await found.count()) > 0) return (await found.first().innerText()).replace(/\s+/g, ' ');
      }
      // Only once the toast is overdue: an open centre takes every later notification in.
      if (Date.now() > overdue) await bridge.call('/command', { command: 'notifications.showList' });
      return undefined;
    },
    timeout,
    250,
  );
};

before(async () => {
  assert.ok(fs.existsSync(VSIX), `${VSIX} is missing: run make vsix`);
  assert.ok(fs.existsSync(CLI), `${CLI} is missing: run make (the venv)`);
  win = await openHistoryWindow([VSIX, HELPER_VSIX], 'history');
  ({ cs, bridge, page, fixture, workspace } = win);
});

after(async () => {
  await win?.close();
});

describe('Memory History: see, undo, put back and restore a write', { timeout: 600_000 }, () => {
  step('lists a write from the terminal and one from the editor, newest first, with when and who', async () => {
    // The terminal's write, as a person runs it (no agent host's environment around it).
    execFileSync(CLI, ['add', 'MEMORY.md', CLI_ENTRY], {
      cwd: fixture.path,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', XDG_CONFIG_HOME: CONFIG_HOME },
      timeout: 60_000,
    });
    // The editor's own write (what Add Entry… sends).
    await bridge.call('/command', {
      command: 'metis.memoryAdd',
      args: [{ file: 'MEMORY.md', entry: EDITOR_ENTRY, workspace }],
    });
    assert.ok(disk().endsWith(`${CLI_ENTRY}\n${EDITOR_ENTRY}\n`));

    await runCommand(page, 'Metis: Show Memory History');
    // Room for the view: fold the folder's file tree; a wider side bar shows when and who.
    await page
      .locator('.pane-header', { hasText: /^\s*workspace/i })
      .first()
      .click();
    await widenSideBar(page);
    const editorRow = historyRow(page, 'Staging runs the nightly load test');
    const cliRow = historyRow(page, 'Deploys go through ArgoCD');
    await editorRow.waitFor({ timeout: 30_000 });
    await cliRow.waitFor({ timeout: 10_000 });
    const [newest, older] = await history();
    assert.ok(newest && older, 'the server lists both writes');
    assert.equal(newest.door, 'editor');
    assert.equal(older.door, 'cli');
    // Newest first, each with its time and the server's words for who made it.
    const rows = (await historyPane(page).locator('.monaco-list-row').allInnerTexts()).map((t) => t.replace(/\s+/g, ' '));
    const at = (text: string) => rows.findIndex((r) => r.includes(text));
    assert.ok(at('MEMORY.md') >= 0, rows.join('\n'));
    assert.ok(at('MEMORY.md') < at('Staging runs the nightly'), rows.join('\n'));
    assert.ok(at('Staging runs the nightly') < at('Deploys go through ArgoCD'), rows.join('\n'));
    const editorText = (await editorRow.innerText()).replace(/\s+/g, ' ');
    assert.ok(editorText.includes(newest.summary), editorText);
    assert.ok(editorText.includes(`just now · ${newest.person}`), editorText);
    assert.ok((await cliRow.innerText()).replace(/\s+/g, ' ').includes(older.person));
  });

  step('selecting a write opens its diff, before ↔ after', async () => {
    await historyRow(page, 'Staging runs the nightly load test').click();
    await titleAction(page, 'Undo This Change').waitFor({ timeout: 15_000 });
    await titleAction(page, 'Restore This Version').waitFor({ timeout: 5_000 });
    const { before: beforeSide, after: afterSide } = await diffSides(bridge);
    assert.ok(!beforeSide.text.includes(EDITOR_ENTRY) && beforeSide.text.includes(CLI_ENTRY));
    assert.equal(afterSide.text, disk());
    assert.match(await activeTab(page).innerText(), /MEMORY\.md/);
    await diffSettled();
    await docScreenshot(page, 'memory-history');
  });

  step('Undo This Change takes the entry out of the file on disk, and says so', async () => {
    await clearToasts(page, bridge);
    const newestId = (await history())[0]?.id ?? 0;
    await titleAction(page, 'Undo This Change').click();
    await waitFor('the entry gone from disk', () => (!disk().includes(EDITOR_ENTRY) ? true : undefined), 15_000);
    assert.ok(disk().includes(CLI_ENTRY), 'the older write stays');
    const [undo] = await history();
    assert.equal(undo?.operation, 'undo');
    await historyRow(page, undo.summary).waitFor({ timeout: 15_000 });
    // The server's words: what was undone, and the sizes.
    await toastText(page, new RegExp(`^Undid change #${newestId} to MEMORY\\.md: [\\d,]+ B → [\\d,]+ B`));
  });

  step('a second undo of the same write is refused with what blocks it, and writes nothing', async () => {
    await clearToasts(page, bridge);
    const now = disk();
    await titleAction(page, 'Undo This Change').click();
    const toast = page
      .locator('.notifications-toasts .notification-toast', { has: page.locator('.codicon-error') })
      .first();
    await toast.waitFor({ timeout: 15_000 });
    const said = (await toast.innerText()).replace(/\s+/g, ' ');
    assert.match(said, /cannot be undone: .*Staging runs the nightly load test.*Nothing was written/, said);
    assert.equal(disk(), now, 'a refused undo writes nothing');
  });

  step('the undone entry is in the archive, and Put Back adds it again', async () => {
    await clearToasts(page, bridge);
    await historyRow(page, /^\s*Archive/).click(); // expands it
    const archived = historyPane(page)
      .locator('.monaco-list-row', {
        has: page.locator('.codicon-trash'),
        hasText: 'Staging runs the nightly load test',
      })
      .first();
    await archived.waitFor({ timeout: 15_000 });
    await archived.hover();
    await archived.locator('.action-label[aria-label^="Put Back"]').click();
    await waitFor('the entry back on disk', () => (disk().includes(EDITOR_ENTRY) ? true : undefined), 15_000);
    const [putBack] = await history();
    assert.equal(putBack?.operation, 'unarchive');
  });

  step('Restore This Version makes the file what it was right after that write', async () => {
    await clearToasts(page, bridge);
    await bridge.call('/command', { command: 'workbench.action.closeAllEditors' });
    await historyRow(page, 'Deploys go through ArgoCD').click();
    await titleAction(page, 'Restore This Version').waitFor({ timeout: 15_000 });
    const afterCli = await waitFor(
      'the CLI write’s after side',
      async () =>
        (await bridge.call<DocInfo[]>('/documents', { scheme: 'metis-history' })).find(
          (d) => d.uri.includes('/after/') && !d.text.includes(EDITOR_ENTRY) && d.text.includes(CLI_ENTRY),
        ),
      15_000,
    );
    await titleAction(page, 'Restore This Version').click();
    await waitFor(
      'the file as it was after the CLI write',
      () => (disk() === afterCli.text ? true : undefined),
      15_000,
    );
    const [restore] = await history();
    assert.equal(restore?.operation, 'restore');
    await bridge.call('/command', { command: 'workbench.action.closeAllEditors' });
  });
});

describe('the review inbox: an agent’s write waits for the user', { timeout: 600_000 }, () => {
  step('"Review Agent Writes: On" turns review on in the server', async () => {
    await bridge.call('/command', { command: 'workbench.action.closeAllEditors' });
    await clearToasts(page, bridge);
    await runCommand(page, 'Metis: Review Agent Writes: On');
    await toastText(page, /now wait for your review/);
    assert.equal((await reviewState()).on, true);
  });

  step(
    'a language-model tool’s write is staged: the file is unchanged, a notification and the status bar say so',
    async () => {
      await clearToasts(page, bridge);
      const before = disk();
      const answer = await bridge.call<string>('/invokeTool', {
        name: 'memory_add',
        input: { file: 'MEMORY.md', entry: AGENT_ENTRY },
      });
      assert.match(answer, /#\d+/, `the model is told its change is staged, with its id: ${answer}`);
      assert.equal(disk(), before, 'nothing written while it waits');
      const said = await toastText(page, /wants to add an entry to MEMORY\.md/);
      assert.ok(said.includes('Use pnpm, not npm'), said);
      await reviewItem(page).waitFor({ timeout: 15_000 });
      assert.match(await reviewItem(page).innerText(), /1 to review/);
      await historyRow(page, 'To Review').waitFor({ timeout: 15_000 });
      // The staged change from the view: its diff, with Accept and Reject, the notification still up.
      await historyRow(page, 'Use pnpm, not npm').click();
      await titleAction(page, 'Accept').waitFor({ timeout: 15_000 });
      await notification(page, /wants to add an entry to MEMORY\.md/).waitFor({ timeout: 5_000 });
      // (Revealed while its first side was still loading, the diff can leave the two sides
      // apart: from the top, both show the short file and the line it adds.)
      await bridge.call('/command', { command: 'revealLine', args: [{ lineNumber: 1, at: 'top' }] });
      await diffSettled();
      await docScreenshot(page, 'review-inbox');
    },
  );

  step('Review opens the staged change as a diff; Accept writes it', async () => {
    const toast = notification(page, /wants to add an entry to MEMORY\.md/);
    await toast.locator('.monaco-button', { hasText: /^Review$/ }).click();
    await titleAction(page, 'Accept').waitFor({ timeout: 15_000 });
    await titleAction(page, 'Reject').waitFor({ timeout: 5_000 });
    const sides = await bridge.call<DocInfo[]>('/documents', { scheme: 'metis-review' });
    const afterSide = sides.find((d) => d.uri.includes('/after/'));
    assert.ok(afterSide?.text.includes(AGENT_ENTRY), JSON.stringify(sides));
    assert.ok(!disk().includes(AGENT_ENTRY));
    await clearToasts(page, bridge);
    await titleAction(page, 'Accept').click();
    await waitFor('the accepted entry on disk', () => (disk().includes(AGENT_ENTRY) ? true : undefined), 15_000);
    await reviewItem(page).waitFor({ state: 'hidden', timeout: 15_000 });
    const [accepted] = await history();
    assert.equal(accepted?.door, 'language-model-tool', 'the log names the agent’s door, not the user’s');
    await historyRow(page, 'Use pnpm, not npm').waitFor({ timeout: 15_000 });
  });

  step('Reject from the notification drops the change; nothing is written', async () => {
    await clearToasts(page, bridge);
    const before = disk();
    await bridge.call<string>('/invokeTool', {
      name: 'memory_add',
      input: { file: 'MEMORY.md', entry: REJECTED_ENTRY },
    });
    const toast = notification(page, /wants to add an entry to MEMORY\.md.*tabs over spaces/);
    await toast.waitFor({ timeout: 15_000 });
    await reviewItem(page).waitFor({ timeout: 15_000 });
    await toast.locator('.monaco-button', { hasText: /^Reject$/ }).click();
    await toastText(page, /Rejected .*change to MEMORY\.md: nothing was written/);
    await reviewItem(page).waitFor({ state: 'hidden', timeout: 15_000 });
    assert.equal(disk(), before);
    assert.deepEqual((await reviewState()).staged, []);
  });

  step(
    'a burst of agent writes brings one notification and the count; each is accepted or rejected on its own',
    async () => {
      await clearToasts(page, bridge);
      // VS Code shows no toast that comes within 800 ms of the last of three or more (its spam
      // protection counts on while each follows the last that closely): this file's steps,
      // faster than a person, have just shown three. No event says the interval is over.
      await page.waitForTimeout(1_000);
      const before = disk();
      await Promise.all(
        [BURST_KEPT, BURST_DROPPED].map((entry) =>
          bridge.call<string>('/invokeTool', { name: 'memory_add', input: { file: 'MEMORY.md', entry } }),
        ),
      );
      await page
        .locator('.statusbar-item', { hasText: /2 to review/ })
        .first()
        .waitFor({ timeout: 15_000 });
      await notification(page, /wants to add an entry to MEMORY\.md/).waitFor({ timeout: 15_000 });
      assert.equal(await page.locator('.notifications-toasts .notification-toast').count(), 1, 'one notification');
      // The status bar item lists what waits; one picked opens as its diff.
      await reviewItem(page).click();
      const pick = page.locator('.quick-input-widget .monaco-list-row', {
        hasText: 'Every handler logs its request body',
      });
      await pick.waitFor({ timeout: 10_000 });
      assert.equal(await page.locator('.quick-input-widget .monaco-list-row').count(), 2);
      await pick.click();
      await titleAction(page, 'Reject').waitFor({ timeout: 15_000 });
      await titleAction(page, 'Reject').click();
      await page
        .locator('.statusbar-item', { hasText: /1 to review/ })
        .first()
        .waitFor({ timeout: 15_000 });
      // The other, accepted from the view's row (once the view lists it alone: its rows are
      // drawn anew after the status bar's count changes).
      await historyRow(page, /To Review\s*1 change waiting/).waitFor({ timeout: 15_000 });
      const row = historyRow(page, 'Releases are cut on Thursdays');
      await row.hover();
      await row.locator('.action-label[aria-label^="Accept"]').click();
      await waitFor('the kept entry on disk', () => (disk() === `${before}${BURST_KEPT}\n` ? true : undefined), 15_000);
      await reviewItem(page).waitFor({ state: 'hidden', timeout: 15_000 });
    },
  );

  step('Accept of a change the file no longer allows is refused with the server’s reason; it still waits', async () => {
    await clearToasts(page, bridge);
    await bridge.call<string>('/invokeTool', {
      name: 'memory_replace',
      input: { file: 'MEMORY.md', old: 'Use pnpm, not npm', new: 'Use pnpm 9, not npm' },
    });
    await reviewItem(page).waitFor({ timeout: 15_000 });
    // Meanwhile the person rewrites that entry themselves: the agent's `old` is gone.
    await bridge.call('/command', {
      command: 'metis.memoryReplace',
      args: [{ file: 'MEMORY.md', old: 'Use pnpm, not npm', new: 'Use yarn, not npm', workspace }],
    });
    const now = disk();
    await clearToasts(page, bridge);
    await reviewItem(page).click(); // one waits: its diff opens at once
    await titleAction(page, 'Accept').waitFor({ timeout: 15_000 });
    await titleAction(page, 'Accept').click();
    const said = await errorShown(/cannot be applied to MEMORY\.md as it is now/);
    await bridge.call('/command', { command: 'notifications.hideList' });
    assert.match(said, /cannot be applied to MEMORY\.md as it is now\. Not replaced/, said);
    assert.doesNotMatch(said, /metis-memory review reject/, 'the editor names its buttons, not the terminal');
    assert.equal(disk(), now, 'a refused accept writes nothing');
    assert.equal((await reviewState()).staged.length, 1, 'it still waits');
    await titleAction(page, 'Reject').click();
    await reviewItem(page).waitFor({ state: 'hidden', timeout: 15_000 });
  });

  step(
    '"Review Agent Writes: Off", and the setting reaches the server when it changes and when the editor starts',
    async () => {
      const waitForReview = (on: boolean) =>
        waitFor(
          `review ${on ? 'on' : 'off'} in the server`,
          async () => ((await reviewState()).on === on ? true : undefined),
          15_000,
        );
      await clearToasts(page, bridge);
      await runCommand(page, 'Metis: Review Agent Writes: Off');
      await toastText(page, /land at once again/);
      await waitForReview(false);
      // (VS Code writes no user setting equal to the default: true first, then back.)
      await bridge.call('/setting', { section: 'metis', key: 'reviewAgentWrites', value: true });
      await waitForReview(true);
      // The command turns it off in the server; the setting, still true, applies again at the next start.
      await clearToasts(page, bridge);
      await runCommand(page, 'Metis: Review Agent Writes: Off');
      const said = await toastText(page, /land at once again/);
      assert.match(said, /The setting metis\.reviewAgentWrites \(true\) applies again when the editor restarts\./);
      await waitForReview(false);
      bridge.forgetWindow();
      await openInWindow(page, cs.url, fixture.path);
      await waitForStatus(page, /MEMORY \d/, 60_000, 'the Metis status bar item after the window reloaded');
      await waitForReview(true);
      await bridge.call('/setting', { section: 'metis', key: 'reviewAgentWrites', value: false });
      await waitForReview(false);
      const before = disk();
      await bridge.call<string>('/invokeTool', {
        name: 'memory_add',
        input: { file: 'MEMORY.md', entry: LANDED_ENTRY },
      });
      assert.equal(disk(), `${before}${LANDED_ENTRY}\n`, 'with review off an agent’s write lands at once');
    },
  );
});
