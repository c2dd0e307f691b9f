/**
 * A first run, in one editor: a folder with no memory yet (the walkthrough opens on the first
 * start, the status bar offers "Create Memory", which writes both files from the template and
 * opens MEMORY.md, "Open USER.md" offers it too instead of an untitled editor, and the
 * walkthrough's buttons run the extension's commands); then, with the offer turned on, a folder
 * with `.metis/` and connecting agents from the editor (the one-time offer, the host picker,
 * the files the server writes, and a hook written there running for real). Each opens its
 * folder in the same tab, as File > Open Folder does.
 */

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Locator, Page } from 'playwright-core';
import { copyFixture, ROOT, waitFor } from './lib/codeServer';
import { EditorSession } from './lib/session';
import { activeTab, docScreenshot, notification, runCommand, screenshot, statusItem, waitForStatus } from './lib/ui';

const VSIX = path.resolve(ROOT, process.env.METIS_VSIX ?? 'dist/metis-memory-linux-x64.vsix');
const INSTRUCTIONS = '.github/instructions/metis-memory.instructions.md';
const OPENCODE_PLUGIN = '.opencode/plugins/metis-memory.js';
const CLINE_PLUGIN = '.cline/plugins/metis-memory.js';

const session = new EditorSession();

before(() => session.start({ vsixes: [VSIX], label: 'first-run' }));
after(() => session.stop());

describe('a folder with no memory yet', { timeout: 300_000 }, () => {
  let page: Page;
  let ws: string;
  const metis = (name = ''): string => path.join(ws, '.metis', name);
  const offer = (): Locator => page.locator('.statusbar-item', { hasText: 'Create Memory' }).first();
  const walkthrough = (): Locator => page.locator('.gettingStartedContainer');
  const STEPS = ['Create your memory', 'See the caps', 'Consolidate', 'Connect your agents'];

  before(async () => {
    // Under the file's folder, removed when the file ends: the tab shows it until then.
    ws = path.join(session.home, 'empty-project');
    fs.mkdirSync(ws);
    fs.writeFileSync(path.join(ws, 'README.md'), '# A project with no memory yet\n');
    // A fresh user-data dir is a first install; the other test files turn the walkthrough off.
    session.cs.updateSettings({ 'workbench.welcomePage.walkthroughs.openOnInstall': true });
    page = await session.open(ws);
  });

  it('opens the walkthrough on the first start, creating memory its first step', async () => {
    await walkthrough().getByText('Get started with Metis Memory').first().waitFor({ timeout: 60_000 });
    for (const title of STEPS) {
      await walkthrough().getByText(title, { exact: true }).first().waitFor({ timeout: 20_000 });
    }
    await screenshot(page, '08-fresh-folder-walkthrough');
  });

  it('offers "Create Memory" in the status bar, and writes nothing yet', async () => {
    await offer().waitFor({ timeout: 60_000 });
    assert.equal(await statusItem(page).count(), 0, 'a usage item beside the offer');
    await offer().hover();
    await page.getByText(/empty-project has no memory yet\. Click to create/).first().waitFor({ timeout: 10_000 });
    await docScreenshot(page, 'first-run-create-memory');
    await page.mouse.move(700, 300);
    assert.equal(fs.existsSync(metis()), false, 'the offer must not create .metis/');
  });

  it('"Open USER.md" offers to create memory instead of an untitled editor', async () => {
    await runCommand(page, 'Metis: Open USER.md');
    const dialog = page.locator('.monaco-dialog-box', { hasText: 'empty-project has no memory yet.' });
    await dialog.waitFor({ timeout: 20_000 });
    assert.match(await dialog.innerText(), /writes \.metis\/MEMORY\.md .* and \.metis\/USER\.md .* from a short template/s);
    await screenshot(page, '08-fresh-folder-open-user');
    await dialog.locator('.monaco-button', { hasText: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached', timeout: 10_000 });
    assert.equal(await page.locator('.tabs-container .tab', { hasText: /USER\.md|Untitled/ }).count(), 0, 'an editor opened');
    assert.equal(fs.existsSync(metis()), false, 'Cancel must not create .metis/');
  });

  it('"Create Memory" writes both files from the template and opens MEMORY.md', async () => {
    await offer().click();
    await activeTab(page).filter({ hasText: 'MEMORY.md' }).waitFor({ timeout: 60_000 });
    const memory = await waitFor('.metis/MEMORY.md', () => (fs.existsSync(metis('MEMORY.md')) ? fs.readFileSync(metis('MEMORY.md'), 'utf8') : undefined), 10_000);
    const user = fs.readFileSync(metis('USER.md'), 'utf8');
    assert.match(memory, /^# Workspace memory\n\n- What belongs here: .*\n- Keep it small: past 2,048 B .* 4,096 B/s);
    assert.match(user, /^# About the user\n\n- What belongs here: .*\n- Keep it small: past 1,536 B .* 3,072 B/s);
    assert.ok(fs.existsSync(metis('.gitignore')), 'no .metis/.gitignore');
    await page.locator('.monaco-editor .view-lines', { hasText: 'Workspace memory' }).first().waitFor({ timeout: 10_000 });
    await notification(page, /Created \.metis\/MEMORY\.md and \.metis\/USER\.md in empty-project from the template/).waitFor({ timeout: 10_000 });
    const kb = (text: string) => (Buffer.byteLength(text) / 1024).toFixed(1).replace('.', '\\.');
    await waitForStatus(page, new RegExp(`MEMORY ${kb(memory)}/2 KB · USER ${kb(user)}/1\\.5 KB`), 60_000, 'the usage of the new files');
    assert.equal(await offer().count(), 0, 'the offer stays once memory exists');
    await page.mouse.move(700, 300); // the usage item's hover (the click left the mouse on it)
    await page.getByText('Click for memory actions.').waitFor({ state: 'hidden', timeout: 10_000 });
    await docScreenshot(page, 'first-run-memory-created');
  });

  it('"Open USER.md" then opens the real file', async () => {
    const before = fs.readFileSync(metis('USER.md'), 'utf8');
    await runCommand(page, 'Metis: Open USER.md');
    const tab = activeTab(page).filter({ hasText: 'USER.md' });
    await tab.waitFor({ timeout: 30_000 });
    await page.locator('.monaco-editor .view-lines', { hasText: 'About the user' }).first().waitFor({ timeout: 10_000 });
    assert.doesNotMatch((await tab.getAttribute('class')) ?? '', /\bdirty\b/, 'the opened USER.md has unsaved changes');
    assert.equal(fs.readFileSync(metis('USER.md'), 'utf8'), before);
  });

  it('checks the walkthrough\'s first step, whose button opens the memory that exists', async () => {
    await runCommand(page, 'Welcome: Open Walkthrough...');
    const pick = page.locator('.quick-input-widget .monaco-list-row').filter({ hasText: 'Get started with Metis Memory' });
    await pick.first().waitFor({ state: 'visible', timeout: 20_000 });
    await pick.first().click();
    const step = walkthrough().locator('.getting-started-step').filter({ hasText: 'Create your memory' });
    await step.locator('.codicon.complete').waitFor({ timeout: 10_000 });
    const unchecked = walkthrough().locator('.getting-started-step').filter({ hasText: 'Connect your agents' });
    assert.equal(await unchecked.locator('.codicon.complete').count(), 0, 'a step whose command never ran is complete');
    const before = fs.readFileSync(metis('MEMORY.md'), 'utf8');
    await step.getByText('Create your memory', { exact: true }).click();
    await walkthrough().getByText('Create Workspace Memory', { exact: true }).click();
    await activeTab(page).filter({ hasText: 'MEMORY.md' }).waitFor({ timeout: 30_000 });
    await notification(page, /empty-project already has \.metis\/MEMORY\.md and \.metis\/USER\.md: nothing was written/).waitFor({ timeout: 10_000 });
    assert.equal(fs.readFileSync(metis('MEMORY.md'), 'utf8'), before);
  });
});

describe('connecting agents', { timeout: 300_000 }, () => {
  let page: Page;
  let fixture: { path: string; remove(): void };
  // The launcher goes into a folder of this run's, never the machine's ~/.local/bin: the editor
  // takes PIPX_BIN_DIR from this process's environment when the file's `before` starts it
  // (this runs first, as the suites are declared). That folder is not on the editor's PATH.
  const bin = path.join(session.home, 'user-bin');
  process.env.PIPX_BIN_DIR = bin;
  const launcher = path.join(bin, 'metis-memory');
  /** Agents run the hooks as a shell finds `metis-memory`: here, through the launcher. */
  const agentEnv = (): NodeJS.ProcessEnv => ({ ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}` });
  /** The files Connect Agents creates when every host is picked. */
  const CREATED = [
    '.claude/settings.json',
    '.mcp.json',
    '.codex/hooks.json',
    '.codex/config.toml',
    '.gemini/settings.json',
    '.cursor/hooks.json',
    '.cursor/mcp.json',
    '.clinerules/hooks/TaskStart',
    '.clinerules/hooks/TaskResume',
    '.clinerules/hooks/UserPromptSubmit',
    CLINE_PLUGIN,
    INSTRUCTIONS,
    '.github/hooks/metis-memory.json',
    OPENCODE_PLUGIN,
    '.qwen/settings.json',
  ];
  /** The user's own opencode.json, which it merges into. */
  const OPENCODE_CONFIG = 'opencode.json';
  const USERS_OPENCODE = '{\n  "model": "anthropic/claude-sonnet-4-5",\n  "autoupdate": false\n}\n';
  const WRITTEN = [...CREATED, OPENCODE_CONFIG];

  before(async () => {
    session.cs.updateSettings({ 'metis.offerAgentSetup': true });
    fixture = copyFixture();
    // Hosts in use in this folder: the picker ticks them, saying why.
    fs.writeFileSync(path.join(fixture.path, 'CLAUDE.md'), '# Rules for Claude\n');
    fs.mkdirSync(path.join(fixture.path, '.gemini'));
    fs.writeFileSync(path.join(fixture.path, OPENCODE_CONFIG), USERS_OPENCODE);
    fs.writeFileSync(path.join(fixture.path, 'QWEN.md'), '# Rules for Qwen Code\n');
    page = await session.open(fixture.path);
  });

  after(() => {
    fixture?.remove();
  });

  const hostPicker = async (): Promise<Locator> => {
    const picker = page.locator('.quick-input-widget', { hasText: 'Connect agents to the memory of workspace' });
    await picker.waitFor({ state: 'visible', timeout: 20_000 });
    return picker;
  };
  const row = (picker: Locator, title: string): Locator =>
    picker.locator('.monaco-list-row').filter({ has: page.locator('.label-name', { hasText: new RegExp(`^${title}$`) }) });
  /** A host's row, found as a person would in a list longer than the picker: by typing its name. */
  const findRow = async (picker: Locator, title: string): Promise<Locator> => {
    await picker.locator('.quick-input-filter input').fill(title);
    const item = row(picker, title);
    await item.waitFor({ timeout: 10_000 });
    return item;
  };
  const dialog = (text: string | RegExp): Locator => page.locator('.monaco-dialog-box', { hasText: text });

  it('ticks the agents it finds, shows every change, and writes nothing before Write Files', async () => {
    const offer = notification(page, /Let agents in workspace see its memory on every request\?/);
    await offer.waitFor({ timeout: 60_000 });
    await screenshot(page, '20-agents-offer');
    await offer.locator('.monaco-button', { hasText: 'Set Up' }).click();
    const picker = await hostPicker();
    await screenshot(page, '20-agents-picker');
    // Each ticked, saying why, and naming the files it would write (the user's opencode.json).
    for (const [title, found, files] of [
      ['Claude Code', 'CLAUDE.md in this folder', '.claude/settings.json, .mcp.json'],
      ['Gemini CLI', '.gemini/ in this folder', '.gemini/settings.json'],
      ['opencode', 'opencode.json in this folder', `${OPENCODE_PLUGIN}, ${OPENCODE_CONFIG}`],
      ['Qwen Code', 'QWEN.md in this folder', '.qwen/settings.json'],
    ] as const) {
      const item = await findRow(picker, title);
      assert.equal(await item.getAttribute('aria-checked'), 'true', `${title} is not ticked`);
      const text = await item.innerText();
      assert.ok(text.includes('Found: ') && text.includes(found), `${title}: ${text}`);
      assert.equal(await item.locator('.label-description').innerText(), files, `${title}'s files`);
    }
    // Cline is not in use here: picked by hand (a click on a row toggles it).
    const cline = await findRow(picker, 'Cline');
    assert.match(await cline.innerText(), /Not found in this folder or on this machine/);
    // Each folder once, so that the CLI's plugin is not cut off the row.
    const clineFiles = `.clinerules/hooks/{TaskStart, TaskResume, UserPromptSubmit}, ${CLINE_PLUGIN}`;
    assert.equal(await cline.locator('.label-description').innerText(), clineFiles, 'Cline\'s files');
    if ((await cline.getAttribute('aria-checked')) !== 'true') await cline.click();
    assert.equal(await cline.getAttribute('aria-checked'), 'true', 'Cline is not ticked');
    // The editor registers the MCP server itself: no .vscode/mcp.json among Copilot's files.
    const copilot = await findRow(picker, 'GitHub Copilot in VS Code');
    assert.equal(await copilot.locator('.label-description').innerText(), `.github/hooks/metis-memory.json, ${INSTRUCTIONS}`);
    // Then every host: the picker's own "toggle all" over the whole list, and OK.
    await picker.locator('.quick-input-filter input').fill('');
    await picker.locator('.quick-input-header .monaco-checkbox').first().click();
    assert.equal(await picker.locator('.monaco-list-row[aria-checked="false"]').count(), 0, 'an agent is not ticked');
    await picker.locator('.monaco-button', { hasText: 'OK' }).click();

    const count = `${WRITTEN.length} files`;
    const confirm = dialog(new RegExp(`Write ${count} for Claude Code, .*\\?`));
    await confirm.waitFor({ timeout: 30_000 });
    const names = /Write \d+ files for (.*)\?/.exec(await confirm.innerText())?.[1]?.split(', ') ?? [];
    for (const title of ['Claude Code', 'Cline', 'GitHub Copilot CLI', 'opencode', 'Qwen Code']) {
      assert.ok(names.includes(title), `${title} is not among the hosts to write for: ${names.join(', ')}`);
    }
    await activeTab(page).filter({ hasText: `Connect Agents: changes to write in workspace (${count})` }).waitFor({ timeout: 10_000 });
    await page.locator('.multiDiffEditor').first().waitFor({ timeout: 10_000 });
    assert.match(await confirm.innerText(), /\.claude\/settings\.json: new \(SessionStart and UserPromptSubmit hooks\)/);
    assert.match(await confirm.innerText(), /\nopencode\.json: changed \(MCP server 'metis-memory'\)/);
    assert.match(await confirm.innerText(), /\.opencode\/plugins\/metis-memory\.js: new \(plugin adding the memory to every model call\)/);
    assert.match(await confirm.innerText(), /\.cline\/plugins\/metis-memory\.js: new \(/);
    assert.match(await confirm.innerText(), /They run the command metis-memory \(no path on this machine\)/);
    for (const file of CREATED) {
      assert.equal(fs.existsSync(path.join(fixture.path, file)), false, `${file} was written before Write Files`);
    }
    assert.equal(fs.readFileSync(path.join(fixture.path, OPENCODE_CONFIG), 'utf8'), USERS_OPENCODE, 'opencode.json changed before Write Files');
    await docScreenshot(page, 'connect-agents-preview');
    await confirm.locator('.monaco-button', { hasText: 'Write Files' }).click();

    // metis-memory is not on the editor's PATH: one prompt offers the launcher.
    const offerLauncher = dialog('Add a launcher for it?');
    await offerLauncher.waitFor({ timeout: 30_000 });
    const text = await offerLauncher.innerText();
    assert.ok(text.includes(`Add Launcher writes ${launcher},`), text);
    assert.ok(text.includes(`${bin} is not on your PATH yet`), text);
    for (const file of WRITTEN) assert.ok(fs.existsSync(path.join(fixture.path, file)), `${file} was not written`);
    // The preview is closed once answered: it showed changes still to write.
    await waitFor(
      'the preview tab to close after Write Files',
      async () => (await page.locator('.tab', { hasText: 'Connect Agents: changes to write' }).count()) === 0 || undefined,
      10_000,
    );
    await screenshot(page, '21-agents-launcher-offer');
    await offerLauncher.locator('.monaco-button', { hasText: 'Add Launcher' }).click();

    const done = notification(page, new RegExp(`Metis Memory: connected Claude Code, .* in workspace \\(${count} written\\)\\.`));
    await done.waitFor({ timeout: 20_000 });
    const told = (await done.innerText()).replace(/\s+/g, ' ');
    assert.ok(told.includes(`Added ${launcher}; agents find it once ${bin} is on your PATH: add export PATH=${bin}:"$PATH"`), told);
    await done.locator('.monaco-button', { hasText: 'Copy PATH Line' }).waitFor({ timeout: 5_000 });
    await screenshot(page, '22-agents-connected');
    assert.equal(fs.statSync(launcher).mode & 0o777, 0o755);
    // VS Code gets its MCP server from the extension: no .vscode/mcp.json beside it.
    assert.equal(fs.existsSync(path.join(fixture.path, '.vscode', 'mcp.json')), false);
    const instructions = fs.readFileSync(path.join(fixture.path, INSTRUCTIONS), 'utf8');
    assert.match(instructions, /^applyTo: '\*\*'$/m);
    assert.match(instructions, /\]\(\.\.\/\.\.\/\.metis\/MEMORY\.md\)/);
  });

  it('writes no path of this machine into any file', () => {
    const extensions = path.join(session.cs.dir, 'extensions');
    const machine = ['/root', '/home', '/tmp', '/work', ROOT, session.home, extensions, 'extensions/metis.', 'python', 'server.py'];
    // A path from the root with two parts or more, where a JSON/TOML string, an argument or a
    // line could hold one (`#!/bin/sh` and the instructions' `/memories/` are not such places).
    const rooted = /(?:^|[\s"'=:([,])(\/[\w.~-]+\/[\w.~-]+)/m;
    for (const file of WRITTEN) {
      const text = fs.readFileSync(path.join(fixture.path, file), 'utf8');
      assert.ok(text.includes('metis-memory'), `${file} does not run metis-memory`);
      for (const bad of machine) assert.ok(!text.includes(bad), `${file} names ${bad}:\n${text}`);
      assert.doesNotMatch(text, rooted, `${file} names a path from the root`);
    }
    // The launcher is where the machine's paths belong: outside the workspace.
    assert.match(fs.readFileSync(launcher, 'utf8'), /^ {2}exec \S+ \S+\/dist\/bundled\/tool\/server\.py cli "\$@"$/m);
  });

  it('writes a Claude Code hook that runs, through the launcher, and carries the memory', () => {
    const settings = JSON.parse(fs.readFileSync(path.join(fixture.path, '.claude', 'settings.json'), 'utf8')) as {
      hooks: Record<string, { hooks: { command: string }[] }[]>;
    };
    const command = settings.hooks.SessionStart?.[0]?.hooks[0]?.command;
    assert.equal(command, 'metis-memory hook --host claude');
    const input = JSON.stringify({ session_id: 'e2e', hook_event_name: 'SessionStart', cwd: fixture.path, source: 'startup' });
    // As Claude Code runs it: through a shell, input on stdin.
    const out = execFileSync('/bin/sh', ['-c', command], { input, encoding: 'utf8', env: { ...agentEnv(), CLAUDE_PROJECT_DIR: fixture.path } });
    const context = (JSON.parse(out) as { hookSpecificOutput: { additionalContext: string } }).hookSpecificOutput.additionalContext;
    const memory = fs.readFileSync(path.join(fixture.path, '.metis', 'MEMORY.md'), 'utf8').trim();
    assert.ok(context.includes(memory), `the hook's context lacks MEMORY.md:\n${context.slice(0, 500)}`);
  });

  it('writes a Copilot hook that VS Code\'s agent runs and reads', () => {
    const file = JSON.parse(fs.readFileSync(path.join(fixture.path, '.github', 'hooks', 'metis-memory.json'), 'utf8')) as {
      hooks: Record<string, { bash: string }[]>;
    };
    const command = file.hooks.sessionStart?.[0]?.bash;
    assert.equal(command, 'metis-memory hook --host copilot');
    // The input Copilot Chat 0.67.0 builds for SessionStart; its answer must name the event.
    const input = JSON.stringify({
      timestamp: new Date().toISOString(),
      hook_event_name: 'SessionStart',
      session_id: 'e2e-vscode',
      transcript_path: '/tmp/e2e-vscode.jsonl',
      source: 'new',
      cwd: fixture.path,
    });
    const out = execFileSync('/bin/bash', ['-c', command], { input, encoding: 'utf8', cwd: fixture.path, env: agentEnv() });
    const answer = JSON.parse(out) as { hookSpecificOutput: { hookEventName: string; additionalContext: string } };
    assert.equal(answer.hookSpecificOutput.hookEventName, 'SessionStart');
    const memory = fs.readFileSync(path.join(fixture.path, '.metis', 'MEMORY.md'), 'utf8').trim();
    assert.ok(answer.hookSpecificOutput.additionalContext.includes(memory), `the hook's context lacks MEMORY.md:\n${out.slice(0, 500)}`);
  });

  it('merges the opencode MCP server into the user\'s opencode.json, keeping theirs as it was', () => {
    const text = fs.readFileSync(path.join(fixture.path, OPENCODE_CONFIG), 'utf8');
    assert.ok(text.startsWith(USERS_OPENCODE.slice(0, USERS_OPENCODE.lastIndexOf('\n}'))), `the user's lines changed:\n${text}`);
    const config = JSON.parse(text) as { model: string; autoupdate: boolean; mcp: Record<string, unknown> };
    assert.equal(config.model, 'anthropic/claude-sonnet-4-5');
    assert.equal(config.autoupdate, false);
    assert.deepEqual(config.mcp, { 'metis-memory': { type: 'local', command: ['metis-memory', 'mcp'] } });
  });

  it('writes an opencode plugin that puts the memory into every system prompt, through the launcher', () => {
    // As opencode 1.18 loads it: each export is a function giving the hooks, and the transform
    // is awaited before every model call with the system prompt in output.system.
    const plugin = path.join(fixture.path, OPENCODE_PLUGIN);
    const script = [
      "import { pathToFileURL } from 'node:url';",
      'const mod = await import(pathToFileURL(process.argv[1]).href);',
      'const [init, ...others] = Object.values(mod);',
      "if (others.length || typeof init !== 'function') throw new Error('exports: ' + Object.keys(mod));",
      'const hooks = await init({ directory: process.cwd() }, {});',
      "const calls = [{ system: ['You are opencode.'] }, { system: ['You are opencode.'] }];",
      "for (const output of calls) await hooks['experimental.chat.system.transform']({ sessionID: 'e2e', model: {} }, output);",
      'process.stdout.write(JSON.stringify(calls));',
    ].join('\n');
    // From another folder: the plugin serves the workspace it was written into.
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script, plugin], { encoding: 'utf8', cwd: session.home, env: agentEnv() });
    const [first, second] = JSON.parse(out) as { system: string[] }[];
    const memory = fs.readFileSync(path.join(fixture.path, '.metis', 'MEMORY.md'), 'utf8').trim();
    assert.equal(first?.system.length, 2, out.slice(0, 500));
    assert.equal(first?.system[0], 'You are opencode.');
    assert.ok(first?.system[1]?.includes(memory), `the plugin's system message lacks MEMORY.md:\n${out.slice(0, 500)}`);
    assert.deepEqual(second, first, 'the memory changed between two calls while MEMORY.md did not');
  });

  it('writes a Cline CLI plugin whose rule carries the memory, through the launcher', () => {
    // As the Cline CLI 3.0.65 loads it: the default export's setup registers rules, and each
    // rule's content is asked for when a prompt's system prompt is composed.
    const plugin = path.join(fixture.path, CLINE_PLUGIN);
    const script = [
      "import { pathToFileURL } from 'node:url';",
      'const { default: plugin } = await import(pathToFileURL(process.argv[1]).href);',
      'const rules = [];',
      'plugin.setup({ registerRule: (rule) => rules.push(rule) }, {});',
      'const texts = [];',
      'for (const rule of rules) texts.push(await rule.content(), await rule.content());',
      'process.stdout.write(JSON.stringify({ name: plugin.name, capabilities: plugin.manifest.capabilities, texts }));',
    ].join('\n');
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script, plugin], { encoding: 'utf8', cwd: session.home, env: agentEnv() });
    const { name, capabilities, texts } = JSON.parse(out) as { name: string; capabilities: string[]; texts: string[] };
    assert.equal(name, 'metis-memory');
    assert.deepEqual(capabilities, ['rules']);
    const memory = fs.readFileSync(path.join(fixture.path, '.metis', 'MEMORY.md'), 'utf8').trim();
    assert.equal(texts.length, 2, `one rule, asked twice: ${out.slice(0, 500)}`);
    assert.ok(texts[0]?.includes(memory), `the rule lacks MEMORY.md:\n${out.slice(0, 500)}`);
    assert.equal(texts[1], texts[0], 'the rule changed between two prompts while MEMORY.md did not');
  });

  it('writes Qwen Code hooks that run, through the launcher, and carry the memory', () => {
    const settings = JSON.parse(fs.readFileSync(path.join(fixture.path, '.qwen', 'settings.json'), 'utf8')) as {
      hooks: Record<string, { hooks: { command: string }[] }[]>;
      mcpServers: Record<string, unknown>;
    };
    assert.deepEqual(settings.mcpServers['metis-memory'], { command: 'metis-memory', args: ['mcp'], alwaysLoadTools: true });
    const command = settings.hooks.SessionStart?.[0]?.hooks[0]?.command;
    assert.equal(command, 'metis-memory hook --host qwen');
    assert.equal(settings.hooks.UserPromptSubmit?.[0]?.hooks[0]?.command, command);
    // The input Qwen Code 0.24.4 sends at a session's start, run as it runs hooks: through a
    // shell, in the folder, with the project folder in its variables.
    const input = JSON.stringify({
      session_id: 'e2e-qwen',
      transcript_path: path.join(session.home, 'e2e-qwen.jsonl'),
      cwd: fixture.path,
      hook_event_name: 'SessionStart',
      timestamp: new Date().toISOString(),
      permission_mode: 'default',
      source: 'startup',
      model: 'qwen3-coder-plus',
    });
    const projectDirs = { QWEN_PROJECT_DIR: fixture.path, CLAUDE_PROJECT_DIR: fixture.path, GEMINI_PROJECT_DIR: fixture.path };
    const out = execFileSync('/bin/bash', ['-c', command], { input, encoding: 'utf8', cwd: fixture.path, env: { ...agentEnv(), ...projectDirs } });
    const answer = JSON.parse(out) as { hookSpecificOutput: { hookEventName: string; additionalContext: string } };
    assert.equal(answer.hookSpecificOutput.hookEventName, 'SessionStart');
    // (Qwen shows < and > as &lt; &gt;: the memory's own lines are checked, not its markup.)
    const lines = fs.readFileSync(path.join(fixture.path, '.metis', 'MEMORY.md'), 'utf8').split('\n').filter((l) => l.startsWith('- ') && !/[<>]/.test(l));
    assert.ok(lines.length > 5, 'the example memory has too few lines to check');
    for (const line of lines) assert.ok(answer.hookSpecificOutput.additionalContext.includes(line), `the hook's context lacks "${line}":\n${out.slice(0, 500)}`);
  });

  it('brings its launcher up to date when the server starts, as after an update', async () => {
    const current = fs.readFileSync(launcher, 'utf8');
    // As the previous version left it: the same launcher, naming that version's folder.
    const previous = current.replace(/metis\.metis-memory-[^/]+\//g, 'metis.metis-memory-0.0.1/');
    assert.notEqual(previous, current);
    fs.writeFileSync(launcher, previous);
    await runCommand(page, 'Metis: Restart Server');
    await waitFor('the launcher to name this extension again', () => fs.readFileSync(launcher, 'utf8') === current || undefined, 30_000);
    assert.equal(fs.statSync(launcher).mode & 0o777, 0o755);
  });

  it('"Metis: Connect Agents…" runs again and changes nothing', async () => {
    const before = fs.readFileSync(path.join(fixture.path, INSTRUCTIONS), 'utf8');
    await runCommand(page, 'Metis: Connect Agents…');
    const picker = await hostPicker();
    // Every host's files are in the folder now: all are ticked.
    assert.equal(await picker.locator('.monaco-list-row[aria-checked="false"]').count(), 0, 'an agent is not ticked');
    await picker.locator('.monaco-button', { hasText: 'OK' }).click();
    const same = notification(page, /were already connected; nothing changed/);
    await same.waitFor({ timeout: 20_000 });
    assert.ok((await same.innerText()).includes(`Agents find metis-memory only once ${bin} is on your PATH`));
    assert.equal(fs.readFileSync(path.join(fixture.path, INSTRUCTIONS), 'utf8'), before);
  });

  it('is in the Memory Actions menu, and Cancel writes nothing', async () => {
    fs.rmSync(path.join(fixture.path, '.cursor', 'mcp.json'));
    await page.keyboard.press('Escape');
    await statusItem(page).click();
    const action = page.locator('.quick-input-widget .monaco-list-row', { hasText: 'Connect Agents…' });
    await action.waitFor({ timeout: 10_000 });
    await action.click();
    const picker = await hostPicker();
    await picker.locator('.monaco-button', { hasText: 'OK' }).click();
    const confirm = dialog('Write 1 file for');
    await confirm.waitFor({ timeout: 30_000 });
    assert.match(await confirm.innerText(), /\.cursor\/mcp\.json: new \(MCP server 'metis-memory'\)/);
    await confirm.locator('.monaco-button', { hasText: 'Cancel' }).click();
    await confirm.waitFor({ state: 'hidden', timeout: 10_000 });
    assert.equal(fs.existsSync(path.join(fixture.path, '.cursor', 'mcp.json')), false, 'Cancel wrote .cursor/mcp.json');
  });
});
