/**
 * Other agents' files in a real VS Code: an over-budget CLAUDE.md and a Codex AGENTS.md
 * chain are squiggled where the agent stops reading (diagnostics from the server), and so is a
 * plain-text file under a budget declared in `.metis/budgets.toml` (which the server asks the
 * client to send it, by dynamic registration).
 */

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { Bridge, ROOT, waitFor } from './lib/codeServer';
import { EditorSession } from './lib/session';
import { docScreenshot, screenshot } from './lib/ui';

const VSIX = path.resolve(ROOT, process.env.METIS_VSIX ?? 'dist/metis-memory-linux-x64.vsix');
const HELPER_VSIX = path.resolve(ROOT, process.env.METIS_HELPER_VSIX ?? '.cache/e2e/metis-e2e-helper.vsix');

interface Diag {
  uri: string;
  diagnostics: { code: string; severity: number; message: string; range: [number, number, number, number] }[];
}

// One code-server and browser tab for the file; each describe opens its own folder in the tab.
const session = new EditorSession();

before(() => session.start({ vsixes: [VSIX, HELPER_VSIX], label: 'budgets' }));
after(() => session.stop());

describe('other agents’ files over their budgets', { timeout: 300_000 }, () => {
  let page: Page;
  let root: string;
  let claude: string;
  let deep: string;

  before(async () => {
    root = fs.mkdtempSync(path.join(ROOT, '.cache', 'e2e-ws-'));
    const ws = path.join(root, 'repo');
    fs.mkdirSync(path.join(ws, '.git'), { recursive: true });
    claude = path.join(ws, 'CLAUDE.md');
    // 8 + 2,400 × 18 = 43,208 characters: Claude Code warns past 40,000 (line 2,222).
    fs.writeFileSync(
      claude,
      '# Rules\n' + Array.from({ length: 2400 }, (_, i) => `- keep it #${String(i).padStart(4, '0')} ✓\n`).join(''),
    );
    fs.writeFileSync(path.join(ws, 'AGENTS.md'), 'r'.repeat(30_000));
    deep = path.join(ws, 'svc', 'AGENTS.md');
    fs.mkdirSync(path.dirname(deep));
    fs.writeFileSync(
      deep,
      Array.from({ length: 100 }, (_, i) => `- use the Makefile, rule ${String(i).padStart(3, '0')}\n`).join(''),
    ); // 2,900 B; 2,768 B left
    page = await session.open(ws);
  });

  after(() => {
    if (root) fs.rmSync(root, { recursive: true, force: true });
  });

  async function budgetDiagnostics(bridge: Bridge, file: string, count: number): Promise<Diag['diagnostics']> {
    const uri = pathToFileURL(file).href;
    return waitFor(
      `${count} over-budget diagnostic(s) on ${path.basename(file)}`,
      async () => {
        const all = await bridge.call<Diag[]>('/diagnostics');
        const mine = all.find((d) => d.uri === uri)?.diagnostics.filter((d) => d.code === 'over-budget');
        return mine && mine.length === count ? mine : undefined;
      },
      60_000,
    );
  }

  it('squiggles CLAUDE.md where Claude Code’s warnings begin', async () => {
    const bridge = new Bridge(session.cs.bridgeFile);
    await bridge.call('/open', { path: claude });
    const found = await budgetDiagnostics(bridge, claude, 2);
    const chars = found.find((d) => d.message.includes('40,000 characters'));
    assert.ok(chars, JSON.stringify(found));
    assert.deepEqual(chars.range.slice(0, 2), [2222, 14]);
    assert.equal(chars.severity, 1); // vscode.DiagnosticSeverity.Warning
    await bridge.call('/command', { command: 'revealLine', args: [{ lineNumber: 2222, at: 'center' }] });
    await page.locator('.monaco-editor .squiggly-warning').first().waitFor({ timeout: 20_000 });
    await screenshot(page, 'budgets-claude-md');
  });

  it('squiggles the deep AGENTS.md where Codex’s shared 32 KiB run out', async () => {
    const bridge = new Bridge(session.cs.bridgeFile);
    await bridge.call('/open', { path: deep });
    const [cut] = await budgetDiagnostics(bridge, deep, 1);
    assert.ok(cut);
    assert.deepEqual(cut.range.slice(0, 2), [95, 13]);
    assert.equal(cut.severity, 0); // vscode.DiagnosticSeverity.Error
    assert.match(cut.message, /^Codex reads only the first 2,768 B of AGENTS\.md/);
    await bridge.call('/command', { command: 'revealLine', args: [{ lineNumber: 95, at: 'center' }] });
    await page.locator('.monaco-editor .squiggly-error').first().waitFor({ timeout: 20_000 });
    await screenshot(page, 'budgets-agents-md');
  });

  it('shows each agent’s files with bars in the Agent Context view, and opens a file at its cut', async () => {
    const bridge = new Bridge(session.cs.bridgeFile);
    await bridge.call('/command', { command: 'metis.agentContext.focus' });
    const row = (text: string) => page.locator('.monaco-list-row', { hasText: text }).first();
    await row('Codex').waitFor({ timeout: 30_000 });
    // CLAUDE.md is over Claude Code's 40,000 characters and 200 lines: a row for each. The 4 MiB
    // past which Claude Code skips it is far off (1 %): no row of its own.
    await row('CLAUDE.md (characters)').waitFor({ timeout: 10_000 });
    await row('CLAUDE.md (lines)').waitFor({ timeout: 10_000 });
    assert.equal(await page.locator('.monaco-list-row', { hasText: 'CLAUDE.md (bytes)' }).count(), 0);
    assert.equal(await page.locator('.monaco-list-row', { hasText: '4,194,304 B' }).count(), 0);
    await page.keyboard.press('End'); // the deepest AGENTS.md is the last row of the tree
    const deepRow = row('svc/AGENTS.md');
    await deepRow.waitFor({ timeout: 10_000 }).catch(async (err: unknown) => {
      await screenshot(page, 'fail-agent-context');
      throw err;
    });
    assert.match(await deepRow.innerText(), /▰{10}\s*2,900 B after 30,000 B above of 32,768 B \(100%\)/);
    await row('Claude Code').waitFor({ timeout: 10_000 });
    // The status bar says an agent loses text.
    await page.locator('.statusbar-item', { hasText: 'agents' }).first().waitFor({ timeout: 10_000 });
    // Room for the view: fold the folder's file tree (its pane header toggles it).
    await page.locator('.pane-header', { hasText: 'repo' }).first().click();
    await screenshot(page, 'agent-context');
    await docScreenshot(page, 'agent-context');
    await deepRow.click();
    await page.locator('.statusbar-item', { hasText: 'Ln 96, Col 14' }).first().waitFor({ timeout: 10_000 });
  });
});

describe('a budget the user declares on a file that is not Markdown', { timeout: 300_000 }, () => {
  let page: Page;
  let root: string;
  let todo: string;

  before(async () => {
    root = fs.mkdtempSync(path.join(ROOT, '.cache', 'e2e-ws-'));
    const ws = path.join(root, 'notes-repo');
    fs.mkdirSync(path.join(ws, '.metis'), { recursive: true });
    // No memory file and no Markdown: only budgets.toml brings the extension and the server.
    fs.writeFileSync(
      path.join(ws, '.metis', 'budgets.toml'),
      '[[budget]]\nname = "todo notes"\nfiles = ["notes/*.txt"]\nunit = "bytes"\nlimit = 100\npast = "truncated"\n',
    );
    todo = path.join(ws, 'notes', 'todo.txt');
    fs.mkdirSync(path.dirname(todo));
    // 30 lines of 10 B: the budget's 100 B end where line 10 begins.
    fs.writeFileSync(todo, Array.from({ length: 30 }, (_, i) => `- item ${String(i).padStart(2, '0')}\n`).join(''));
    page = await session.open(ws);
  });

  after(() => {
    if (root) fs.rmSync(root, { recursive: true, force: true });
  });

  it('squiggles notes/todo.txt where the budget of .metis/budgets.toml runs out', async () => {
    const bridge = new Bridge(session.cs.bridgeFile);
    await bridge.call('/open', { path: todo });
    const uri = pathToFileURL(todo).href;
    const [cut] = await waitFor(
      'an over-budget diagnostic on notes/todo.txt (the server registers budgets.toml’s globs with the client)',
      async () => {
        const all = await bridge.call<Diag[]>('/diagnostics');
        const mine = all.find((d) => d.uri === uri)?.diagnostics.filter((d) => d.code === 'over-budget');
        return mine?.length ? mine : undefined;
      },
      60_000,
    ).catch(async (err: unknown) => {
      await screenshot(page, 'fail-budgets-toml');
      throw err;
    });
    assert.ok(cut);
    assert.deepEqual(cut.range.slice(0, 2), [10, 0]);
    assert.equal(cut.severity, 0); // vscode.DiagnosticSeverity.Error: the agent loses the rest
    assert.match(cut.message, /todo notes/);
    await page.locator('.monaco-editor .squiggly-error').first().waitFor({ timeout: 20_000 });
    await screenshot(page, 'budgets-toml-txt');
  });
});

describe('a folder without agent files', { timeout: 300_000 }, () => {
  let page: Page;
  let root: string;

  before(async () => {
    root = fs.mkdtempSync(path.join(ROOT, '.cache', 'e2e-ws-'));
    const ws = path.join(root, 'plain-repo');
    fs.mkdirSync(path.join(ws, '.metis'), { recursive: true });
    fs.writeFileSync(path.join(ws, '.metis', 'MEMORY.md'), '# Workspace memory\n\n- Build with make.\n');
    page = await session.open(ws);
  });

  after(() => {
    if (root) fs.rmSync(root, { recursive: true, force: true });
  });

  it('says so in the Agent Context view, with Connect Agents… and Learn More', async () => {
    const bridge = new Bridge(session.cs.bridgeFile);
    // The memory's status bar item: the server runs and has answered for this folder.
    await page.locator('.statusbar-item', { hasText: /MEMORY .*KB/ }).first().waitFor({ timeout: 60_000 });
    await bridge.call('/command', { command: 'metis.agentContext.focus' });
    const welcome = page.locator('.welcome-view-content', { hasText: 'No agent files in this folder' }).first();
    await welcome.waitFor({ timeout: 30_000 }).catch(async (err: unknown) => {
      await screenshot(page, 'fail-agent-context-welcome');
      throw err;
    });
    assert.match(await welcome.innerText(), /Claude Code \(CLAUDE\.md\), Codex \(AGENTS\.md\)/);
    await welcome.locator('.monaco-button', { hasText: 'Learn More' }).waitFor({ timeout: 5_000 });
    await page.locator('.pane-header', { hasText: 'plain-repo' }).first().click(); // room for the view
    await screenshot(page, 'agent-context-welcome');
    await welcome.locator('.monaco-button', { hasText: 'Connect Agents…' }).click();
    // The button runs Connect Agents…, which asks which agents.
    await page.locator('.quick-input-widget').waitFor({ state: 'visible', timeout: 20_000 });
    await page.keyboard.press('Escape');
  });
});
