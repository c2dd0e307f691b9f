/**
 * Connecting agents from the editor: the one-time offer for a folder with `.metis/`, the host
 * picker, the files the server writes, and a hook written there running for real.
 */

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { copyFixture, ROOT, startCodeServer, waitFor, type CodeServer } from './lib/codeServer';
import { launchBrowser, notification, openWorkbench, runCommand, screenshot } from './lib/ui';

const VSIX = path.resolve(ROOT, process.env.METIS_VSIX ?? 'dist/metis-memory-linux-x64.vsix');
const INSTRUCTIONS = '.github/instructions/metis-memory.instructions.md';

describe('connecting agents', { timeout: 300_000 }, () => {
  let cs: CodeServer;
  let browser: Browser;
  let page: Page;
  let fixture: { path: string; remove(): void };

  before(async () => {
    fixture = copyFixture();
    cs = await startCodeServer({ workspace: fixture.path, vsixes: [VSIX], label: 'agents', settings: { 'metis.offerAgentSetup': true } });
    browser = await launchBrowser();
    page = await openWorkbench(browser, cs.url, fixture.path);
  });

  after(async () => {
    await browser?.close().catch(() => undefined);
    await cs?.stop();
    fixture?.remove();
  });

  const acceptPicker = async (): Promise<void> => {
    const picker = page.locator('.quick-input-widget', { hasText: 'Connect agents to the memory of workspace' });
    await picker.waitFor({ state: 'visible', timeout: 20_000 });
    // Every host is picked by default; OK accepts them all.
    await picker.locator('.monaco-button', { hasText: 'OK' }).click();
  };

  it('offers once, and Set Up writes the chosen hosts\' files', async () => {
    const offer = notification(page, /Let agents in workspace see its memory on every request\?/);
    await offer.waitFor({ timeout: 60_000 });
    await screenshot(page, '20-agents-offer');
    await offer.locator('.monaco-button', { hasText: 'Set Up' }).click();
    await acceptPicker();
    const instructions = path.join(fixture.path, INSTRUCTIONS);
    const text = await waitFor('the instructions file', () => (fs.existsSync(instructions) ? fs.readFileSync(instructions, 'utf8') : undefined), 20_000);
    assert.match(text, /^applyTo: '\*\*'$/m);
    assert.match(text, /\]\(\.\.\/\.\.\/\.metis\/MEMORY\.md\)/);
    await notification(page, /Metis Memory: connected Claude Code, .*GitHub Copilot in VS Code, GitHub Copilot CLI in workspace \(12 files written\)/).waitFor({ timeout: 10_000 });
    await screenshot(page, '21-agents-connected');
    // VS Code gets its MCP server from the extension: no .vscode/mcp.json beside it.
    assert.equal(fs.existsSync(path.join(fixture.path, '.vscode', 'mcp.json')), false);
    for (const file of ['.claude/settings.json', '.codex/hooks.json', '.codex/config.toml', '.gemini/settings.json', '.cursor/hooks.json', '.clinerules/hooks/UserPromptSubmit', '.github/hooks/metis-memory.json']) {
      assert.ok(fs.existsSync(path.join(fixture.path, file)), `${file} was not written`);
    }
  });

  it('writes a Claude Code hook that runs and carries the memory', () => {
    const settings = JSON.parse(fs.readFileSync(path.join(fixture.path, '.claude', 'settings.json'), 'utf8')) as {
      hooks: Record<string, { hooks: { command: string }[] }[]>;
    };
    const command = settings.hooks.SessionStart?.[0]?.hooks[0]?.command;
    assert.ok(command, 'no SessionStart hook in .claude/settings.json');
    const input = JSON.stringify({ session_id: 'e2e', hook_event_name: 'SessionStart', cwd: fixture.path, source: 'startup' });
    // As Claude Code runs it: through a shell, input on stdin.
    const out = execFileSync('/bin/sh', ['-c', command], { input, encoding: 'utf8', env: { ...process.env, CLAUDE_PROJECT_DIR: fixture.path } });
    const context = (JSON.parse(out) as { hookSpecificOutput: { additionalContext: string } }).hookSpecificOutput.additionalContext;
    const memory = fs.readFileSync(path.join(fixture.path, '.metis', 'MEMORY.md'), 'utf8').trim();
    assert.ok(context.includes(memory), `the hook's context lacks MEMORY.md:\n${context.slice(0, 500)}`);
  });

  it('writes a Copilot hook that VS Code\'s agent runs and reads', () => {
    const file = JSON.parse(fs.readFileSync(path.join(fixture.path, '.github', 'hooks', 'metis-memory.json'), 'utf8')) as {
      hooks: Record<string, { bash: string }[]>;
    };
    const command = file.hooks.sessionStart?.[0]?.bash;
    assert.ok(command, 'no sessionStart hook in .github/hooks/metis-memory.json');
    // The input Copilot Chat 0.67.0 builds for SessionStart; its answer must name the event.
    const input = JSON.stringify({
      timestamp: new Date().toISOString(),
      hook_event_name: 'SessionStart',
      session_id: 'e2e-vscode',
      transcript_path: '/tmp/e2e-vscode.jsonl',
      source: 'new',
      cwd: fixture.path,
    });
    const out = execFileSync('/bin/bash', ['-c', command], { input, encoding: 'utf8', cwd: fixture.path });
    const answer = JSON.parse(out) as { hookSpecificOutput: { hookEventName: string; additionalContext: string } };
    assert.equal(answer.hookSpecificOutput.hookEventName, 'SessionStart');
    const memory = fs.readFileSync(path.join(fixture.path, '.metis', 'MEMORY.md'), 'utf8').trim();
    assert.ok(answer.hookSpecificOutput.additionalContext.includes(memory), `the hook's context lacks MEMORY.md:\n${out.slice(0, 500)}`);
  });

  it('"Metis: Connect Agents…" runs again and changes nothing', async () => {
    const before = fs.readFileSync(path.join(fixture.path, INSTRUCTIONS), 'utf8');
    await runCommand(page, 'Metis: Connect Agents…');
    await acceptPicker();
    await notification(page, /were already connected; nothing changed/).waitFor({ timeout: 20_000 });
    assert.equal(fs.readFileSync(path.join(fixture.path, INSTRUCTIONS), 'utf8'), before);
  });
});
