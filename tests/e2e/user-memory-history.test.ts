/**
 * The user memory's history and review inbox in a real VS Code (code-server), in one window on a
 * copy of examples/workspace, with a user config folder of this test's own (lib/codeServer.ts's
 * CONFIG_HOME, so `$XDG_CONFIG_HOME/metis-memory/USER.md` is this test's):
 *
 * - two writes of the user memory, one from the terminal (`metis-memory add --user`) and one
 *   from the editor, are listed in Memory History under "Your user memory", beside the
 *   folder's files; selecting one opens its diff; Undo This Change takes it out of the file on
 *   disk, as the server says;
 * - with review on, the user memory's language-model tool (`user_memory_add`) waits: the
 *   notification names the user memory, the status bar counts it, To Review lists it, its diff
 *   opens, Accept writes it (the log names the agent); an agent's write staged in another
 *   process (`metis-memory add --user` in Claude Code's shell) reaches the editor too, and
 *   Reject drops it.
 */

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe } from 'node:test';
import type { Page } from 'playwright-core';
import { CONFIG_HOME, ROOT, waitFor, type Bridge } from './lib/codeServer';
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
  notification,
  runCommand,
  screenshot,
  stepsScreenshotOnFailure,
  toastText,
  widenSideBar,
} from './lib/ui';

const VSIX = path.resolve(ROOT, process.env.METIS_VSIX ?? 'dist/metis-memory-linux-x64.vsix');
const HELPER_VSIX = path.resolve(ROOT, process.env.METIS_HELPER_VSIX ?? '.cache/e2e/metis-e2e-helper.vsix');
const CLI = path.join(ROOT, '.venv', 'bin', 'metis-memory');
const USER_MEMORY = path.join(CONFIG_HOME, 'metis-memory', 'USER.md');

interface HistoryRecord {
  id: number;
  operation: string;
  door: string;
  actor: string;
  summary: string;
  person: string;
}
interface StagedChange {
  id: number;
  person: string;
}

let win: HistoryWindow | undefined;
let page: Page;
let bridge: Bridge;
let fixture: { path: string; remove(): void };
let workspace = '';

const disk = () => (fs.existsSync(USER_MEMORY) ? fs.readFileSync(USER_MEMORY, 'utf8') : '');
const memoryPath = () => path.join(fixture.path, '.metis', 'MEMORY.md');

const CLI_ENTRY = '- I review diffs in unified form.';
const EDITOR_ENTRY = '- Answer in British English.';
const AGENT_ENTRY = '- Prefers short commit messages, imperative mood.';
const SHELL_ENTRY = '- Works mostly in Go and TypeScript.';
const WORKSPACE_ENTRY = '- Deploys go through ArgoCD; never kubectl apply by hand.';

/** A `metis-memory` command as it runs in a terminal: the person's, or (`agent`) Claude Code's
 * shell's, whose writes are an agent's. */
const cli = (args: string[], agent = false) =>
  execFileSync(CLI, args, {
    cwd: fixture.path,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      XDG_CONFIG_HOME: CONFIG_HOME,
      ...(agent ? { CLAUDECODE: '1', CLAUDE_CODE_SESSION_ID: 'e2e-claude-session' } : {}),
    },
    encoding: 'utf8',
    timeout: 60_000,
  });

/** Tests that leave a screenshot of the window when they fail (`fail-user-history-<test>.png`). */
const step = stepsScreenshotOnFailure('user-history', () => page);

const rowTexts = async (): Promise<string[]> =>
  (await historyPane(page).locator('.monaco-list-row').allInnerTexts()).map((t) => t.replace(/\s+/g, ' ').trim());

/** The user memory's records, newest first, as the server lists them (what the view shows). */
const userHistory = async (): Promise<HistoryRecord[]> =>
  (
    await bridge.call<{ records: HistoryRecord[] }>('/command', {
      command: 'metis.history',
      args: [{ file: 'user-memory' }],
    })
  ).records;
const userInbox = async (): Promise<StagedChange[]> =>
  (
    await bridge.call<{ staged: StagedChange[] }>('/command', {
      command: 'metis.review',
      args: [{ file: 'user-memory' }],
    })
  ).staged;

before(async () => {
  assert.ok(fs.existsSync(VSIX), `${VSIX} is missing: run make vsix`);
  assert.ok(fs.existsSync(CLI), `${CLI} is missing: run make (the venv)`);
  win = await openHistoryWindow([VSIX, HELPER_VSIX], 'user-history');
  ({ bridge, page, fixture, workspace } = win);
});

after(async () => {
  await win?.close();
  fs.rmSync(path.dirname(USER_MEMORY), { recursive: true, force: true });
});

describe('Memory History: the user memory’s writes, beside the folder’s', { timeout: 600_000 }, () => {
  step('lists a write from the terminal and one from the editor under "Your user memory"', async () => {
    assert.equal(disk(), '', `${USER_MEMORY} is there before the test wrote it`);
    // The folder's own history, beside which the user memory's is shown.
    await bridge.call('/command', {
      command: 'metis.memoryAdd',
      args: [{ file: 'MEMORY.md', entry: WORKSPACE_ENTRY, workspace }],
    });
    cli(['add', '--user', CLI_ENTRY]);
    await bridge.call('/command', { command: 'metis.memoryAdd', args: [{ file: 'user-memory', entry: EDITOR_ENTRY }] });
    assert.equal(disk(), `${CLI_ENTRY}\n${EDITOR_ENTRY}\n`);

    await runCommand(page, 'Metis: Show Memory History');
    await page
      .locator('.pane-header', { hasText: /^\s*workspace/i })
      .first()
      .click(); // fold the folder's file tree: room for the view
    await widenSideBar(page);
    const group = historyRow(page, 'Your user memory');
    await group.waitFor({ timeout: 30_000 });
    await historyRow(page, 'Answer in British English').waitFor({ timeout: 15_000 });
    const [newest, older] = await userHistory();
    assert.ok(newest && older, 'the server lists both writes');
    assert.deepEqual([newest.door, older.door], ['editor', 'cli']);
    assert.equal(older.person, 'You with metis-memory add --user');
    assert.match(
      (await group.innerText()).replace(/\s+/g, ' '),
      /Your user memory\s*USER\.md in every workspace · 2 writes/,
    );
    // The group comes after the folder's files, its writes newest first, each with when and who.
    const rows = await rowTexts();
    const at = (text: string) => rows.findIndex((r) => r.includes(text));
    assert.ok(at('MEMORY.md') >= 0 && at('MEMORY.md') < at('Your user memory'), rows.join('\n'));
    assert.ok(at('Your user memory') < at('Answer in British English'), rows.join('\n'));
    assert.ok(at('Answer in British English') < at('I review diffs in unified form'), rows.join('\n'));
    assert.ok(rows[at('Answer in British English')]?.includes(`just now · ${newest.person}`), rows.join('\n'));
    assert.ok(at('Deploys go through ArgoCD') < at('Your user memory'), 'the folder’s write is under MEMORY.md');
    await screenshot(page, 'user-history-01-listed');
  });

  step('selecting a write opens its diff, titled for the user memory', async () => {
    await historyRow(page, 'Answer in British English').click();
    await titleAction(page, 'Undo This Change').waitFor({ timeout: 15_000 });
    const { before: beforeSide, after: afterSide } = await diffSides(bridge);
    assert.equal(beforeSide.text, `${CLI_ENTRY}\n`);
    assert.equal(afterSide.text, disk());
    assert.match(await activeTab(page).innerText(), /Your user memory: change #\d+ by you/);
    await screenshot(page, 'user-history-02-diff');
  });

  step('Undo This Change takes the entry out of the user memory on disk, and says so', async () => {
    await clearToasts(page, bridge);
    const newestId = (await userHistory())[0]?.id ?? 0;
    await titleAction(page, 'Undo This Change').click();
    await waitFor('the entry gone from disk', () => (disk() === `${CLI_ENTRY}\n` ? true : undefined), 15_000);
    const said = await toastText(page, /^Undid change/);
    assert.ok(said.startsWith(`Undid change #${newestId} to your user memory (${USER_MEMORY}): `), said);
    const [undo] = await userHistory();
    assert.equal(undo?.operation, 'undo');
    await historyRow(page, undo.summary).waitFor({ timeout: 15_000 });
    await historyRow(page, /Your user memory\s*USER\.md in every workspace · 3 writes/).waitFor({ timeout: 15_000 });
    // What the undo removed is in the user memory's archive.
    await historyRow(page, /^\s*Archive/).waitFor({ timeout: 15_000 });
    assert.ok(
      fs.readFileSync(memoryPath(), 'utf8').endsWith(`${WORKSPACE_ENTRY}\n`),
      'the folder’s memory is untouched',
    );
    await bridge.call('/command', { command: 'workbench.action.closeAllEditors' });
  });
});

describe('the review inbox: an agent’s write of the user memory waits for the user', { timeout: 600_000 }, () => {
  step('user_memory_add in the editor’s chat waits: notification, status bar, To Review, its diff', async () => {
    await clearToasts(page, bridge);
    await runCommand(page, 'Metis: Review Agent Writes: On');
    await toastText(page, /now wait for your review/);
    await clearToasts(page, bridge);
    const before = disk();
    const answer = await bridge.call<string>('/invokeTool', { name: 'user_memory_add', input: { entry: AGENT_ENTRY } });
    assert.match(answer, /Staged for the user's review as change #\d+/, answer);
    assert.equal(disk(), before, 'nothing written while it waits');
    const said = await toastText(page, /wants to add an entry to your user memory/);
    assert.ok(said.includes('Prefers short commit messages'), said);
    await reviewItem(page).waitFor({ timeout: 15_000 });
    assert.match(await reviewItem(page).innerText(), /1 to review/);
    await historyRow(page, /To Review\s*1 change waiting/).waitFor({ timeout: 15_000 });
    const row = historyRow(page, 'Prefers short commit messages');
    await row.waitFor({ timeout: 15_000 });
    assert.match((await row.innerText()).replace(/\s+/g, ' '), /your user memory · just now · .+ chat agent/);
    await row.click();
    await titleAction(page, 'Accept').waitFor({ timeout: 15_000 });
    await titleAction(page, 'Reject').waitFor({ timeout: 5_000 });
    assert.match(await activeTab(page).innerText(), /Your user memory ↔ .*change \(to review\)/);
    const sides = await bridge.call<DocInfo[]>('/documents', { scheme: 'metis-review' });
    const afterSide = sides.find((d) => d.uri.includes('/after/'));
    assert.equal(afterSide?.text, `${before}${AGENT_ENTRY}\n`, JSON.stringify(sides));
    await screenshot(page, 'user-history-03-to-review');
  });

  step('Accept writes it to the user memory; the log names the agent', async () => {
    await clearToasts(page, bridge);
    await titleAction(page, 'Accept').click();
    await waitFor('the accepted entry on disk', () => (disk().endsWith(`${AGENT_ENTRY}\n`) ? true : undefined), 15_000);
    const said = await toastText(page, /^Accepted change/);
    assert.match(
      said,
      new RegExp(`Added entry to your user memory \\(${USER_MEMORY.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}\\)`),
      said,
    );
    await reviewItem(page).waitFor({ state: 'hidden', timeout: 15_000 });
    const [accepted] = await userHistory();
    assert.equal(accepted?.door, 'language-model-tool', 'the log names the agent’s door, not the user’s');
    assert.match(accepted.person, /through user_memory_add in VS Code chat \(accepted by you\)$/);
    await historyRow(page, /Your user memory\s*USER\.md in every workspace · 4 writes/).waitFor({ timeout: 15_000 });
    assert.deepEqual(await userInbox(), []);
  });

  step('an agent’s write staged in another process reaches the editor, and Reject drops it', async () => {
    await clearToasts(page, bridge);
    const before = disk();
    const out = cli(['add', '--user', SHELL_ENTRY], true);
    assert.match(out, /^Staged for the user's review as change #\d+: your user memory/, out);
    assert.equal(disk(), before, 'staged, not written');
    const toast = notification(page, /Claude Code wants to add an entry to your user memory/);
    await toast.waitFor({ timeout: 15_000 });
    await reviewItem(page).waitFor({ timeout: 15_000 });
    await historyRow(page, 'Works mostly in Go and TypeScript').waitFor({ timeout: 15_000 });
    const [waiting] = await userInbox();
    assert.equal(waiting?.person, 'Claude Code with metis-memory add --user');
    await screenshot(page, 'user-history-04-from-a-shell');
    await toast.locator('.monaco-button', { hasText: /^Reject$/ }).click();
    await toastText(page, /Rejected Claude Code's change to your user memory: nothing was written/);
    await reviewItem(page).waitFor({ state: 'hidden', timeout: 15_000 });
    assert.equal(disk(), before);
    assert.deepEqual(await userInbox(), []);
    await runCommand(page, 'Metis: Review Agent Writes: Off');
  });
});
