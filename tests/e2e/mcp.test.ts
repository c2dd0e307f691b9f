/**
 * The MCP server the extension offers VS Code (`vscode.lm.registerMcpServerDefinitionProvider`),
 * in a real code-server on a two-folder workspace: VS Code's registry holds one definition per
 * folder (read by the helper through VS Code's own `vscode.lm.mcpServerDefinitions`), VS Code's
 * MCP client starts it from "MCP: List Servers" and calls its tools, the same definition runs
 * outside VS Code, and the definitions follow folder and interpreter changes.
 */

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { Bridge, ROOT, startCodeServer, waitFor, type CodeServer } from './lib/codeServer';
import { MCP_TOOL_NAMES, MEMORY_ADD_SCHEMA, McpStdioClient, resultText } from './lib/mcpClient';
import { supportedInterpreters } from './lib/python';
import { launchBrowser, openWorkbench, runCommand, screenshot, stepsScreenshotOnFailure, waitForStatus } from './lib/ui';

const VSIX = path.resolve(ROOT, process.env.METIS_VSIX ?? 'dist/metis-memory-linux-x64.vsix');
const HELPER_VSIX = path.resolve(ROOT, process.env.METIS_HELPER_VSIX ?? '.cache/e2e/metis-e2e-helper.vsix');

interface Definition {
  label: string;
  command: string;
  args: string[];
  env: Record<string, string | number | null>;
  cwd: string;
  version: string;
}

describe('the MCP server offered to VS Code', { timeout: 420_000 }, () => {
  let cs: CodeServer;
  let browser: Browser;
  let page: Page;
  let bridge: Bridge;
  let root: string;
  let first: string;
  let second: string;
  const folder = (name: string) => path.join(root, name);
  const disk = (p: string) => fs.readFileSync(p, 'utf8');
  const step = stepsScreenshotOnFailure('mcp', () => page);
  /** The Metis Memory definitions in VS Code's MCP registry, once they satisfy `ready`. */
  const definitions = (what: string, ready: (defs: Definition[]) => boolean) =>
    waitFor(
      what,
      async () => {
        const defs = (await bridge.call<Definition[]>('/mcpDefinitions')).filter((d) => d.label.startsWith('Metis Memory ('));
        return ready(defs) ? defs : undefined;
      },
      60_000,
      250,
    );
  /** VS Code's language-model tool for one of the MCP server's tools (`mcp_<server>_<tool>`). */
  const mcpToolName = async (tool: string) => {
    const names = await bridge.call<string[]>('/tools');
    return names.find((n) => n.startsWith('mcp_') && n.endsWith(`_${tool}`));
  };

  before(async () => {
    const found = supportedInterpreters();
    assert.ok(found.length >= 1, 'no CPython 3.10-3.15 found on this machine');
    root = fs.mkdtempSync(path.join(ROOT, '.cache', 'e2e-ws-'));
    fs.cpSync(path.join(ROOT, 'examples', 'workspace'), folder('workspace'), { recursive: true });
    for (const name of ['second-project', 'third-project']) {
      fs.mkdirSync(folder(name));
      fs.writeFileSync(path.join(folder(name), 'README.md'), `# ${name}\n`);
    }
    // Two interpreters, to change from one to the other: the oldest and newest found, or the
    // same one under a second path when there is only one.
    first = found[0]![1];
    second = found.at(-1)![1];
    if (second === first) {
      fs.mkdirSync(folder('bin'));
      second = path.join(folder('bin'), 'python3');
      fs.symlinkSync(first, second);
    }
    const workspaceFile = path.join(root, 'metis.code-workspace');
    fs.writeFileSync(workspaceFile, JSON.stringify({ folders: [{ path: 'workspace' }, { path: 'second-project' }] }, null, 2));
    cs = await startCodeServer({
      workspace: workspaceFile,
      vsixes: [VSIX, HELPER_VSIX],
      label: 'mcp',
      // "MCP: List Servers" is hidden while AI features are disabled.
      settings: { 'metis.interpreter': first, 'chat.disableAIFeatures': false },
    });
    bridge = new Bridge(cs.bridgeFile);
    browser = await launchBrowser();
    page = await openWorkbench(browser, cs.url, workspaceFile);
  });

  after(async () => {
    await browser?.close().catch(() => undefined);
    await cs?.stop();
    if (root) fs.rmSync(root, { recursive: true, force: true });
  });

  step('VS Code holds one definition per folder: the language server’s interpreter running the bundled launcher in MCP mode', async () => {
    const defs = await definitions('VS Code’s MCP registry to hold a Metis Memory server for both folders', (d) => d.length === 2);
    assert.deepEqual(
      defs.map((d) => d.label),
      ['Metis Memory (workspace)', 'Metis Memory (second-project)'],
    );
    for (const [i, name] of ['workspace', 'second-project'].entries()) {
      const d = defs[i]!;
      assert.equal(d.command, first);
      assert.deepEqual(d.args.slice(1), ['mcp', folder(name)]);
      const launcher = d.args[0]!;
      assert.ok(launcher.startsWith(path.join(cs.dir, 'extensions')) && launcher.endsWith(path.join('dist', 'bundled', 'tool', 'server.py')), launcher);
      assert.ok(fs.existsSync(launcher), `${launcher} does not exist`);
      assert.equal(d.cwd, folder(name));
      assert.equal(d.env.PYTHONNOUSERSITE, '1');
      // The exported API reports exactly what VS Code was given.
      assert.deepEqual(await bridge.call<Definition>('/mcpServerDefinition', { folder: folder(name) }), d);
    }
  });

  step('"MCP: List Servers" shows both; VS Code’s MCP client starts one and gets its tools with the spec’s schemas', async () => {
    await runCommand(page, 'MCP: List Servers', 30_000);
    const row = (label: string) => page.locator('.quick-input-widget .monaco-list-row', { hasText: label }).first();
    await row('Metis Memory (second-project)').waitFor({ timeout: 10_000 });
    await row('Metis Memory (workspace)').click();
    const start = page.locator('.quick-input-widget .monaco-list-row', { hasText: /^\s*Start Server/ }).first();
    await start.waitFor({ timeout: 10_000 });
    await start.click();
    const addTool = await waitFor('VS Code to list the MCP server’s tools as language-model tools', () => mcpToolName('memory_add'), 60_000, 250);
    for (const tool of MCP_TOOL_NAMES) assert.ok(await mcpToolName(tool), `VS Code has no language-model tool for the MCP tool ${tool}`);
    const info = await bridge.call<{ inputSchema: unknown }>('/tool', { name: addTool });
    assert.deepEqual(info.inputSchema, MEMORY_ADD_SCHEMA);
    await runCommand(page, 'MCP: List Servers', 10_000);
    await page.locator('.quick-input-widget .monaco-list-row', { hasText: /Metis Memory \(workspace\)\s*Running/ }).first().waitFor({ timeout: 10_000 });
    await screenshot(page, '09-mcp-list-servers');
    await page.keyboard.press('Escape');
  });

  step('VS Code’s MCP client calls the tools: memory_read at once, memory_add once the user allows it', async () => {
    const memory = path.join(folder('workspace'), '.metis', 'MEMORY.md');
    const user = path.join(folder('workspace'), '.metis', 'USER.md');
    const read = JSON.parse(await bridge.call<string>('/invokeTool', { name: await mcpToolName('memory_read'), input: {} })) as Record<string, { content: string }>;
    assert.equal(read['MEMORY.md']?.content, disk(memory));
    const entry = '- Added by an agent through VS Code’s MCP support.';
    const added = bridge.call<string>('/invokeTool', { name: await mcpToolName('memory_add'), input: { file: 'USER.md', entry } });
    const dialog = page.locator('.monaco-dialog-box', { hasText: 'memory_add' });
    await dialog.waitFor({ timeout: 15_000 });
    await screenshot(page, '10-mcp-tool-approval');
    await dialog.locator('.monaco-button', { hasText: /^(Yes|Allow|Continue)$/ }).first().click();
    assert.match(await added, /USER\.md/);
    assert.ok(disk(user).endsWith(`${entry}\n`), 'the entry is on disk');
    // The language server sees the MCP write: the status bar follows the new size.
    const kb = (fs.statSync(user).size / 1024).toFixed(1).replace(/\.0$/, '');
    await waitForStatus(page, new RegExp(`USER ${kb.replace('.', '\\.')}/1\\.5 KB`), 10_000, 'the status bar to show the MCP write');
  });

  step('the definition runs as it is, outside VS Code: its memory_add writes into its own folder', async () => {
    const def = await bridge.call<Definition>('/mcpServerDefinition', { folder: folder('second-project') });
    const before = disk(path.join(folder('workspace'), '.metis', 'MEMORY.md'));
    const client = new McpStdioClient(def);
    try {
      assert.equal((await client.initialize()).serverInfo.name, 'metis-memory');
      const tools = await client.listTools();
      assert.deepEqual(tools.map((t) => t.name).sort(), MCP_TOOL_NAMES);
      assert.deepEqual(tools.find((t) => t.name === 'memory_add')?.inputSchema, MEMORY_ADD_SCHEMA);
      const result = await client.callTool('memory_add', { file: 'MEMORY.md', entry: '- second-project builds with make.' });
      assert.equal(result.isError ?? false, false, resultText(result));
    } finally {
      await client.close();
    }
    assert.equal(disk(path.join(folder('second-project'), '.metis', 'MEMORY.md')), '- second-project builds with make.\n');
    assert.equal(disk(path.join(folder('workspace'), '.metis', 'MEMORY.md')), before, 'the other folder is untouched');
  });

  step('follows the folders: a removed folder’s server goes, an added folder’s comes', async () => {
    await bridge.call('/workspaceFolders', { start: 1, deleteCount: 1, add: [folder('third-project')] });
    const defs = await definitions(
      'VS Code’s MCP registry to follow the folder change',
      (d) => d.map((x) => x.label).join('|') === 'Metis Memory (workspace)|Metis Memory (third-project)',
    );
    assert.deepEqual(defs[1]?.args.slice(1), ['mcp', folder('third-project')]);
  });

  step('follows the interpreter: a new metis.interpreter is the command of every definition', async () => {
    await bridge.call('/setting', { section: 'metis', key: 'interpreter', value: second });
    const defs = await definitions(`VS Code’s MCP definitions to use ${second}`, (d) => d.length === 2 && d.every((x) => x.command === second));
    const client = new McpStdioClient(defs[1]!);
    try {
      assert.equal((await client.initialize()).serverInfo.name, 'metis-memory');
    } finally {
      await client.close();
    }
  });
});
