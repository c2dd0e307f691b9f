/**
 * The user memory in a real VS Code (code-server), in one tab, with a user config folder of its
 * own (`XDG_CONFIG_HOME`: lib/codeServer.ts's CONFIG_HOME) and a home folder of its own
 * (`HOME`, where Claude Code keeps what it remembers):
 *
 * - On a copy of examples/workspace: before anything wrote it, the user memory is named in the
 *   status bar's tooltip; "Open User Memory" asks for its first entry, which the server writes
 *   (its folder 0700, its file 0600) and opens; "Add Entry…" offers the three files and adds to
 *   it; typed in the editor, a duplicate and a workspace's path get their diagnostics;
 *   "Consolidate User Memory…" opens the diff, Apply is a compare-and-swap (a write made
 *   meanwhile is never overwritten) and writes it; the path's quick fix moves the entry to the
 *   workspace's MEMORY.md.
 */

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe } from 'node:test';
import type { Page } from 'playwright-core';
import { Bridge, CONFIG_HOME, copyFixture, ROOT, waitFor } from './lib/codeServer';
import { EditorSession } from './lib/session';
import {
  activeTab,
  chooseCodeAction,
  clearToasts,
  docScreenshot,
  notification,
  runCommand,
  screenshot,
  statusItem,
  stepsScreenshotOnFailure,
  waitForStatus,
} from './lib/ui';

const VSIX = path.resolve(ROOT, process.env.METIS_VSIX ?? 'dist/metis-memory-linux-x64.vsix');
const HELPER_VSIX = path.resolve(ROOT, process.env.METIS_HELPER_VSIX ?? '.cache/e2e/metis-e2e-helper.vsix');

/** The editor's home folder: what agent hosts remember lives under it. */
const HOME = fs.mkdtempSync(path.join(os.tmpdir(), 'metis-e2e-home-'));
const USER_MEMORY = path.join(CONFIG_HOME, 'metis-memory', 'USER.md');
const FIRST = 'Answer in British English.';
const SECOND = 'I review diffs in unified form.';
const SPECIFIC = '- Start reading the service at `cmd/tallyd/main.go`.';

interface DocInfo {
  uri: string;
  text: string;
  dirty: boolean;
}
interface Diag {
  uri: string;
  diagnostics: { code: string; severity: number; message: string; range: [number, number, number, number] }[];
}

const session = new EditorSession();
let page: Page;
let bridge: Bridge;

before(async () => {
  assert.ok(fs.existsSync(VSIX), `${VSIX} is missing: run make vsix`);
  await session.start({ vsixes: [VSIX, HELPER_VSIX], label: 'user-memory', env: { HOME } });
  bridge = new Bridge(session.cs.bridgeFile);
});

/** Folders the suites open, removed once the editor is gone (its server writes in them until then). */
const folders: { remove(): void }[] = [];

after(async () => {
  await session.stop();
  for (const folder of folders) folder.remove();
  fs.rmSync(HOME, { recursive: true, force: true });
});

/** Tests that leave a screenshot of the window when they fail (`fail-user-memory-<test>.png`). */
const step = stepsScreenshotOnFailure('user-memory', () => page);

const disk = (file: string): string => fs.readFileSync(file, 'utf8');
const input = () => page.locator('.quick-input-widget .quick-input-box input');
const applyButton = () => page.locator('.editor-actions .action-label[aria-label^="Apply Consolidation"]').first();
const diagnosticsOf = async (uri: string) =>
  (await bridge.call<Diag[]>('/diagnostics')).find((d) => d.uri === uri)?.diagnostics ?? [];
/**
 * VS Code reloads an open file changed on disk about a second later: until then typing into it
 * makes an unsaved buffer over an old text, whose save VS Code refuses (see docs/vscode.md,
 * "Known issues"). Wait for the user memory's editor to show the disk before typing into it.
 */
const bufferShowsDisk = () =>
  waitFor(
    'the user memory’s editor to show what is on disk',
    async () => {
      const open = (await bridge.call<DocInfo[]>('/documents', { scheme: 'file' })).find((d) => d.uri.endsWith('/metis-memory/USER.md'));
      return (open !== undefined && !open.dirty && open.text === disk(USER_MEMORY)) || undefined;
    },
    10_000,
  );

describe('the user memory, beside a workspace', { timeout: 600_000 }, () => {
  let fixture: { path: string; remove(): void };
  let memoryUri = '';
  const workspaceMemory = () => path.join(fixture.path, '.metis', 'MEMORY.md');

  before(async () => {
    fixture = copyFixture();
    folders.push(fixture);
    page = await session.open(fixture.path);
    await waitForStatus(page, /MEMORY \d/, 60_000, 'the Metis status bar item (the server running)');
  });

  step('is not there yet: the status bar shows the workspace’s files, its tooltip where the user memory will be', async () => {
    assert.ok(!fs.existsSync(USER_MEMORY), `${USER_MEMORY} exists before any write`);
    await waitForStatus(page, /MEMORY [\d.]+\/2 KB · USER [\d.]+\/1\.5 KB$/, 10_000, 'the workspace’s two files');
    assert.equal(await statusItem(page).locator('.codicon-account').count(), 0, 'no user memory figure before it exists');
    await statusItem(page).hover();
    const hover = page.locator('.workbench-hover-container', { hasText: 'Your user memory' }).first();
    await hover.waitFor({ timeout: 10_000 });
    const said = (await hover.innerText()).replace(/\s+/g, ' ');
    assert.ok(
      said.includes(`Your user memory (${USER_MEMORY}, read in every workspace): none yet; "Metis: Open User Memory" starts it`),
      said,
    );
    await page.keyboard.press('Escape');
  });

  step('Open User Memory asks for its first entry, which the server writes (the user’s alone), and opens it', async () => {
    await runCommand(page, 'Metis: Open User Memory');
    await page.locator('.quick-input-widget', { hasText: 'Your user memory is empty: add its first entry' }).waitFor({ timeout: 15_000 });
    await page.locator('.quick-input-widget', { hasText: USER_MEMORY }).waitFor({ timeout: 5_000 });
    assert.ok(!fs.existsSync(USER_MEMORY), 'nothing is written before the entry is given');
    await input().fill(FIRST);
    await page.keyboard.press('Enter');
    await waitFor('the user memory on disk', () => (fs.existsSync(USER_MEMORY) && disk(USER_MEMORY) === `- ${FIRST}\n`) || undefined, 15_000);
    assert.equal(fs.statSync(USER_MEMORY).mode & 0o777, 0o600, 'the file is the user’s alone');
    assert.equal(fs.statSync(path.dirname(USER_MEMORY)).mode & 0o777, 0o700, 'its folder is the user’s alone');
    memoryUri = await waitFor(
      'the user memory open in an editor',
      async () => (await bridge.call<DocInfo[]>('/documents', { scheme: 'file' })).find((d) => d.uri.endsWith('/metis-memory/USER.md'))?.uri,
      10_000,
    );
    await activeTab(page).filter({ hasText: 'USER.md' }).waitFor({ timeout: 10_000 });
    await page.locator('.editor-instance .view-line', { hasText: FIRST }).first().waitFor({ timeout: 10_000 });
    await notification(page, /your user memory/i).waitFor({ timeout: 10_000 });
    // Its figure joins the workspace's, after the person icon.
    await waitForStatus(page, /USER [\d.]+\/1\.5 KB · 0\.1\/1\.5 KB$/, 15_000, 'the user memory’s figure');
    assert.equal(await statusItem(page).locator('.codicon-account').count(), 1);
    await screenshot(page, 'user-memory-01-first-entry');
  });

  step('Add Entry… offers the three files with what each is for, and adds to the user memory', async () => {
    const memoryBefore = disk(workspaceMemory());
    await clearToasts(page, bridge);
    await runCommand(page, 'Metis: Add Entry…');
    const rows = page.locator('.quick-input-widget .monaco-list-row');
    // The palette's rows are reused for the picker's: read them once they are the picker's.
    const shown = await waitFor(
      'the picker to list the three files',
      async () => {
        const items = await rows.evaluateAll((els) =>
          els.map((el) => `${el.querySelector('.label-name')?.textContent ?? ''} ${el.querySelector('.label-description')?.textContent ?? ''}`.trim()),
        );
        return items.length === 3 && items.every((i) => i.includes(' facts about ')) ? items : undefined;
      },
      10_000,
    );
    assert.deepEqual(shown, [
      'MEMORY.md facts about workspace',
      'USER.md facts about you, in workspace only',
      'Your user memory facts about you, in every workspace',
    ]);
    await screenshot(page, 'user-memory-02-add-entry-files');
    await rows.filter({ hasText: 'Your user memory' }).click();
    await page.locator('.quick-input-widget', { hasText: 'Add an entry to your user memory' }).waitFor({ timeout: 10_000 });
    await input().fill(SECOND);
    await page.keyboard.press('Enter');
    await waitFor('the entry in the user memory', () => disk(USER_MEMORY) === `- ${FIRST}\n- ${SECOND}\n` || undefined, 10_000);
    assert.equal(disk(workspaceMemory()), memoryBefore, 'the workspace’s MEMORY.md is left alone');
    await notification(page, /your user memory/i).waitFor({ timeout: 10_000 });
    await waitForStatus(page, /· 0\.1\/1\.5 KB$/, 10_000, 'the user memory’s new figure');
  });

  step('an agent in the editor adds to it with user_memory_add, a tool of its own', async () => {
    const before = disk(USER_MEMORY);
    const tools = await waitFor(
      'the user memory’s language-model tools',
      async () => {
        const names = await bridge.call<string[]>('/tools');
        return ['user_memory_add', 'user_memory_replace', 'user_memory_consolidate'].every((n) => names.includes(n)) ? names : undefined;
      },
      20_000,
    );
    assert.ok(tools.includes('memory_add'), 'beside the workspace’s tools');
    const answer = await bridge.call<string>('/invokeTool', { name: 'user_memory_add', input: { entry: '- Prefers tabs in Makefiles only.' } });
    assert.equal(disk(USER_MEMORY), `${before}- Prefers tabs in Makefiles only.\n`, answer);
    assert.ok(answer.includes('- Prefers tabs in Makefiles only.'), `the model gets the file back: ${answer}`);
    // Taken out again by hand, as a person would, for the steps below.
    await bridge.call('/command', {
      command: 'metis.memoryReplace',
      args: [{ file: 'user-memory', old: '- Prefers tabs in Makefiles only.\n', new: '' }],
    });
    assert.equal(disk(USER_MEMORY), before);
  });

  step('typed in the editor and saved: a duplicate and a workspace’s path get their diagnostics', async () => {
    await bridge.call('/open', { path: USER_MEMORY });
    await bufferShowsDisk();
    await page.locator('.editor-instance .view-line', { hasText: SECOND }).first().waitFor({ timeout: 10_000 });
    await page.locator('.editor-instance .view-lines').first().click();
    await page.keyboard.press('Control+End');
    await page.keyboard.type(`- ${FIRST}\n${SPECIFIC}\n`);
    await page.keyboard.press('Control+S');
    await waitFor('the typed entries saved', () => disk(USER_MEMORY).endsWith(`${SPECIFIC}\n`) || undefined, 10_000);
    const found = await waitFor(
      'the duplicate and workspace-specific diagnostics on the user memory',
      async () => {
        const diags = await diagnosticsOf(memoryUri);
        const codes = diags.map((d) => d.code);
        return codes.includes('duplicate-entry') && codes.includes('workspace-specific') ? diags : undefined;
      },
      20_000,
    );
    const specific = found.find((d) => d.code === 'workspace-specific');
    assert.ok(specific);
    assert.equal(
      specific.message,
      "This entry names `cmd/tallyd/main.go`, a file of the workspace workspace: your user memory is read in every workspace. Move it to workspace's MEMORY.md.",
    );
    // The usage lens follows the size typed and saved (VS Code kept the first lens it drew
    // until the server asked for lenses again: workspace/codeLens/refresh).
    const size = Buffer.byteLength(disk(USER_MEMORY), 'utf8').toLocaleString('en-US');
    await page
      .locator('.monaco-editor .codelens-decoration', { hasText: `Your user memory (USER.md in every workspace): ${size} B ` })
      .first()
      .waitFor({ timeout: 15_000 });
    await clearToasts(page, bridge);
    await docScreenshot(page, 'user-memory'); // its figure in the status bar, its path's finding
    await screenshot(page, 'user-memory-03-diagnostics');
  });

  step('Consolidate User Memory… opens its diff; Apply never overwrites a write made meanwhile, then writes', async () => {
    await clearToasts(page, bridge);
    await runCommand(page, 'Metis: Consolidate User Memory…');
    await applyButton().waitFor({ timeout: 15_000 });
    await activeTab(page).filter({ hasText: 'Your user memory ↔ Proposal' }).waitFor({ timeout: 10_000 });
    const proposal = await waitFor(
      'the tidy proposal (the duplicate dropped)',
      async () => (await bridge.call<DocInfo[]>('/documents', { scheme: 'metis-proposal' })).find((d) => d.text.includes(SECOND)),
      10_000,
    );
    assert.equal(proposal.text, `- ${FIRST}\n- ${SECOND}\n${SPECIFIC}\n`);
    await screenshot(page, 'user-memory-04-consolidation-diff');
    // A write behind the proposal's back (another workspace's agent, say): Apply refuses.
    const meanwhile = '- Written by another workspace meanwhile.\n';
    fs.appendFileSync(USER_MEMORY, meanwhile);
    const changed = disk(USER_MEMORY);
    await applyButton().click();
    await notification(page, /Not applied: Your user memory changed on disk since this proposal was opened/).waitFor({ timeout: 10_000 });
    assert.equal(disk(USER_MEMORY), changed, 'the write made meanwhile is kept');
    // Reopened on the file as it now is.
    const again = await waitFor(
      'the proposal reopened on the current file',
      async () => (await bridge.call<DocInfo[]>('/documents', { scheme: 'metis-proposal' })).find((d) => d.text.includes('meanwhile')),
      10_000,
    );
    await clearToasts(page, bridge);
    await applyButton().click();
    await notification(page, /your user memory/i).waitFor({ timeout: 10_000 });
    await waitFor('the proposal written', () => disk(USER_MEMORY) === again.text || undefined, 10_000);
    assert.equal(disk(USER_MEMORY).split(FIRST).length - 1, 1, 'the duplicate is gone');
    assert.equal(await page.locator('.tabs-container .tab', { hasText: 'Proposal' }).count(), 0, 'the proposal is closed');
  });

  step('the workspace’s path keeps its diagnostic, whose quick fix moves the entry to that workspace’s MEMORY.md', async () => {
    await bridge.call('/open', { path: USER_MEMORY });
    const diag = await waitFor(
      'the workspace-specific diagnostic after Apply',
      async () => (await diagnosticsOf(memoryUri)).find((d) => d.code === 'workspace-specific'),
      15_000,
    );
    const [line, character] = diag.range;
    await page.keyboard.press('Control+G');
    await page.keyboard.type(`${line + 1}:${character + 2}`);
    await page.keyboard.press('Enter');
    await chooseCodeAction(page, "Move to workspace's MEMORY.md");
    await waitFor('the entry moved', () => (!disk(USER_MEMORY).includes(SPECIFIC) && disk(workspaceMemory()).includes(SPECIFIC)) || undefined, 15_000);
    await waitFor(
      'the diagnostic gone',
      async () => !(await diagnosticsOf(memoryUri)).some((d) => d.code === 'workspace-specific') || undefined,
      15_000,
    );
  });
});

/**
 * What an agent host remembers, as it writes it: the import tests' fixtures
 * (tests/hosts/imports/fixtures/<name>/home, their README says from which host's code) copied
 * into the editor's home, the names the host computes from the workspace's path filled in.
 */
function installHostMemory(fixture: string, workspace: string): void {
  const from = path.join(ROOT, 'tests', 'hosts', 'imports', 'fixtures', fixture, 'home');
  const names: Record<string, string> = {
    '{claude_project}': fs.realpathSync(workspace).replace(/[^A-Za-z0-9]/g, '-'),
    // Built here, so that no token is committed (as tests/support/host_memory.py builds it).
    '{github_token}': 'ghp_' + 'aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5',
  };
  const fill = (text: string) => Object.entries(names).reduce((t, [k, v]) => t.split(k).join(v), text);
  for (const entry of fs.readdirSync(from, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const source = path.join(entry.parentPath, entry.name);
    const target = fill(path.join(HOME, path.relative(from, source)));
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(target, fill(fs.readFileSync(source, 'utf8')));
  }
}

/** Every file under `dir`, with its text: what an import must leave as it was. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) out[path.join(entry.parentPath, entry.name)] = fs.readFileSync(path.join(entry.parentPath, entry.name), 'utf8');
  }
  return out;
}

describe('what agent hosts remember, brought in', { timeout: 600_000 }, () => {
  let shop = '';
  let hostFiles: Record<string, string> = {};
  const metis = (name: string) => path.join(shop, '.metis', name);
  const proposals = () => bridge.call<DocInfo[]>('/documents', { scheme: 'metis-proposal' });

  before(async () => {
    // A repository of its own (Claude Code names its memory after the repository's root).
    shop = path.join(session.home, 'shop');
    fs.mkdirSync(shop);
    fs.writeFileSync(path.join(shop, 'README.md'), '# shop\n');
    fs.mkdirSync(path.join(shop, '.git'));
    installHostMemory('claude', shop);
    installHostMemory('codex-secret', shop);
    hostFiles = { ...snapshot(path.join(HOME, '.claude')), ...snapshot(path.join(HOME, '.codex')) };
    session.cs.updateSettings({ 'metis.offerImport': true });
    page = await session.open(shop);
  });

  step('offers, for a folder with agents’ memory and none of ours, to bring it in; each file’s proposal opens, nothing written', async () => {
    const offer = notification(page, /Claude Code and Codex remember things about shop or about you, and shop has no Metis memory yet/);
    await offer.waitFor({ timeout: 60_000 });
    await screenshot(page, 'user-memory-05-import-offer');
    await offer.locator('.monaco-button', { hasText: 'Bring in what Claude Code and Codex remember…' }).click();
    const summary = notification(page, /From Claude Code and Codex: /);
    await summary.waitFor({ timeout: 30_000 });
    const said = (await summary.innerText()).replace(/\s+/g, ' ');
    assert.match(said, /entr(y|ies) into MEMORY\.md, \d+ entr(y|ies) into USER\.md, \d+ entr(y|ies) into your user memory\./, said);
    assert.match(said, /left out: already there/, said);
    assert.match(said, /1 entry refused: it looks like a secret \(GitHub token in .*\.codex\/AGENTS\.md, line 2\)/, said);
    assert.ok(!said.includes('ghp_'), 'the secret’s value is never shown');
    const opened = await waitFor('the three proposals open', async () => ((await proposals()).length === 3 ? proposals() : undefined), 15_000);
    const byName = (name: string) => opened.find((d) => decodeURIComponent(d.uri).includes(name))?.text ?? '';
    assert.ok(byName('/shop/MEMORY proposal.md').includes('The staging cluster is called blue-7.'), byName('/shop/MEMORY proposal.md'));
    assert.ok(byName('/shop/USER proposal.md').includes('Do not summarise what you just did'), byName('/shop/USER proposal.md'));
    const mine = byName('/user memory/USER proposal.md');
    assert.ok(mine.startsWith(disk(USER_MEMORY)), 'the user memory’s proposal keeps what it holds');
    assert.ok(mine.includes('Prefer ripgrep over grep.'), mine);
    assert.equal(mine.split(FIRST).length - 1, 1, 'what the user memory already holds is not added again');
    for (const title of ['MEMORY.md ↔ Proposal (shop)', 'USER.md ↔ Proposal (shop)', 'Your user memory ↔ Proposal']) {
      await page.locator('.tabs-container .tab', { hasText: title }).first().waitFor({ timeout: 5_000 });
    }
    assert.ok(!fs.existsSync(path.join(shop, '.metis')), 'nothing written before Apply');
    await screenshot(page, 'user-memory-06-import-proposals');
    // A file not there yet, against an empty side.
    await page.locator('.tabs-container .tab', { hasText: 'MEMORY.md ↔ Proposal (shop)' }).first().click();
    await activeTab(page).filter({ hasText: 'MEMORY.md ↔ Proposal (shop)' }).waitFor({ timeout: 5_000 });
    await page.locator('.editor-instance .view-line', { hasText: 'The staging cluster is called blue-7.' }).first().waitFor({ timeout: 10_000 });
    await docScreenshot(page, 'import-agent-memory');
  });

  step('Apply writes each file as proposed, and the hosts’ own files are left as they were', async () => {
    const userBefore = disk(USER_MEMORY);
    const texts = await proposals();
    const applied: [string, string][] = [
      ['MEMORY.md ↔ Proposal (shop)', metis('MEMORY.md')],
      ['USER.md ↔ Proposal (shop)', metis('USER.md')],
      ['Your user memory ↔ Proposal', USER_MEMORY],
    ];
    for (const [title, file] of applied) {
      await page.locator('.tabs-container .tab', { hasText: title }).first().click();
      await activeTab(page).filter({ hasText: title }).waitFor({ timeout: 5_000 });
      await applyButton().click();
      // Apply closes the proposal and shows the file written, from its top.
      await waitFor(
        `${path.basename(file)} shown after its proposal was applied`,
        async () => (await bridge.call<{ uri: string } | null>('/selection'))?.uri.endsWith(file) || undefined,
        15_000,
      );
      assert.equal(await page.locator('.tabs-container .tab', { hasText: title }).count(), 0, `${title} closed`);
    }
    const text = (name: string) => texts.find((d) => decodeURIComponent(d.uri).includes(name))?.text;
    assert.equal(disk(metis('MEMORY.md')), text('/shop/MEMORY proposal.md'));
    assert.equal(disk(metis('USER.md')), text('/shop/USER proposal.md'));
    assert.equal(disk(USER_MEMORY), text('/user memory/USER proposal.md'));
    assert.notEqual(disk(USER_MEMORY), userBefore);
    const now = { ...snapshot(path.join(HOME, '.claude')), ...snapshot(path.join(HOME, '.codex')) };
    assert.deepEqual(now, hostFiles, 'the hosts’ files are only read');
    await waitForStatus(page, /MEMORY [\d.]+\/2 KB · USER [\d.]+\/1\.5 KB · [\d.]+\/1\.5 KB$/, 15_000, 'the new files’ usage');
  });

  step('is not offered again; Import Agent Memory… says when there is nothing new', async () => {
    const logged = session.cs.metisLog().length;
    page = await session.open(shop);
    await waitFor(
      'the new window to leave the offer out: the folder was looked at before',
      () => session.cs.metisLog().slice(logged).includes("agents' memory of shop: looked for before, not again") || undefined,
      60_000,
    );
    await runCommand(page, 'Metis: Import Agent Memory…');
    await page.locator('.quick-input-widget .monaco-list-row', { hasText: 'Codex' }).first().waitFor({ timeout: 15_000 });
    await page.keyboard.press('Enter'); // both hosts, as ticked
    await notification(page, /Nothing new to bring in from Claude Code and Codex: \d+ entries are already in your memory\./).waitFor({ timeout: 30_000 });
    assert.equal((await proposals()).length, 0, 'no proposal opens');
  });
});
