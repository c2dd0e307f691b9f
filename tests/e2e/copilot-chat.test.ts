/**
 * GitHub Copilot Chat's agent, in a real VS Code, sends the workspace memory to its model through
 * the hooks that `metis-memory init --host copilot` writes (`.github/hooks/metis-memory.json`):
 * the memory in full at the session's first prompt, and again, marked as changed, at the first
 * prompt after a change. This is the only test that runs VS Code's own agent against those hooks
 * rather than running the hook command by hand (first-run.test.ts).
 *
 * The agent is the GitHub Copilot Chat extension bundled with code-server 4.139.1 (Copilot
 * Chat 0.67.0, VS Code 1.139.1). The workbench disables it on every fresh profile until Chat
 * setup (a Copilot sign-in) is done ("Disabling builtin chat extension as chat set up is not
 * completed"). The e2e helper's `/chat/enable` runs "Chat: Manage Language Models"
 * (`workbench.action.chat.manage`), which enables it and starts it without a reload. Its agent
 * then needs no sign-in: it takes the only model offered, the helper's scripted model (which
 * claims tool calling, without which Agent mode offers no model). The hook context arrives in the
 * turn's user message as `<context> … Additional instructions from hooks: <metis-memory> …`.
 *
 * The hooks name metis-memory by its absolute path (`init --command`): the extension host's PATH
 * comes from the login shell, not from the environment code-server was started with, so a bare
 * `metis-memory` from a virtualenv fails there silently ("/bin/sh: 1: metis-memory: not found").
 */

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { Bridge, copyFixture, ROOT, startCodeServer, waitFor, type CodeServer } from './lib/codeServer';
import { ARTIFACTS, launchBrowser, openWorkbench, screenshot } from './lib/ui';

const VSIX = path.resolve(ROOT, process.env.METIS_VSIX ?? 'dist/metis-memory-linux-x64.vsix');
const HELPER_VSIX = path.resolve(ROOT, process.env.METIS_HELPER_VSIX ?? '.cache/e2e/metis-e2e-helper.vsix');
/** The metis-memory the hooks run: the project's virtualenv (`make venv`) unless told. */
const CLI = path.resolve(ROOT, process.env.METIS_CLI ?? '.venv/bin/metis-memory');
const MODEL = 'Metis Scripted Model';
const CHAT_EXTENSION = 'GitHub.copilot-chat';
/** Where the bundled Copilot Chat extension lives in the cached code-server install. */
const COPILOT_DIR = path.join(
  ROOT,
  '.cache',
  'code-server',
  'node_modules',
  'code-server',
  'lib',
  'vscode',
  'extensions',
  'copilot',
);
const COPILOT_HOME = path.join(os.homedir(), '.copilot');
const HOOKS_FILE = path.join('.github', 'hooks', 'metis-memory.json');
const FIRST_PROMPT = 'Where does the build put the binary?';
const SECOND_PROMPT = 'And what changed in the memory?';
const ANSWER = 'The scripted model answers.';
const NEW_ENTRY = 'The e2e test added this entry between two chat prompts.';

interface RecordedRequest {
  text: string;
  messages: { role: string; text: string }[];
  tools: number;
}

/** How many times `needle` occurs in `text`. */
function count(text: string, needle: string): number {
  return text.split(needle).length - 1;
}

/** The `<metis-memory>` blocks in `text`. */
function memoryBlocks(text: string): string[] {
  return [...text.matchAll(/<metis-memory>[\s\S]*?<\/metis-memory>/g)].map((m) => m[0]);
}

/** The last user message of a request: the one the turn's hook context goes into. */
function lastUserMessage(request: RecordedRequest): string {
  const user = request.messages.filter((m) => m.role === 'user').at(-1);
  assert.ok(user, `the request has no user message: ${JSON.stringify(request.messages.map((m) => m.role))}`);
  return user.text;
}

/** Copilot Chat's log files under a user-data logs folder, by file name. */
function copilotLogs(dir: string): Map<string, string> {
  const found = new Map<string, string>();
  if (!fs.existsSync(dir)) return found;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && path.basename(entry.parentPath) === CHAT_EXTENSION) {
      found.set(entry.name, path.join(entry.parentPath, entry.name));
    }
  }
  return found;
}

describe('GitHub Copilot Chat in VS Code gets the memory from the copilot hooks', { timeout: 420_000 }, () => {
  let cs: CodeServer;
  let browser: Browser;
  let page: Page;
  let bridge: Bridge;
  let fixture: { path: string; remove(): void };
  let sessionCache: string;
  let copilotModulesExisted = true;
  let copilotHomeExisted = true;
  let copilotIdeBefore = new Set<string>();
  let copilotVersion = '(not started)';
  const disk = (name: string) => fs.readFileSync(path.join(fixture.path, '.metis', name), 'utf8');
  const step = (name: string, fn: () => Promise<void>) =>
    it(name, async () => {
      try {
        await fn();
      } catch (err) {
        if (page)
          await screenshot(page, `fail-copilot-${name.replace(/[^a-z0-9]+/gi, '-').slice(0, 50)}`).catch(
            () => undefined,
          );
        throw err;
      }
    });

  /**
   * Type a prompt into the chat input and send it; resolves to the model's request for it once
   * the chat shows the answer (turn `turn`, from 1), so that the next prompt starts a new turn.
   */
  const ask = async (prompt: string, turn: number): Promise<RecordedRequest> => {
    // A toast (MEMORY.md over its soft cap after the write) would take the click.
    await bridge.call('/command', { command: 'notifications.clearAll' });
    const input = page.locator('.interactive-input-part .monaco-editor').first();
    await input.click({ timeout: 10_000 });
    await page.keyboard.type(prompt);
    await page.keyboard.press('Enter');
    const signIn = page.locator('.monaco-dialog-box', { hasText: /Sign in to use GitHub Copilot/ });
    const found = await waitFor(
      `the scripted model to receive the request of Copilot Chat ${copilotVersion}'s agent for "${prompt}" (its logs: tests/e2e/artifacts/copilot-chat-*.log)`,
      async () => {
        if (await signIn.isVisible()) return 'sign-in' as const;
        const requests = await bridge.call<RecordedRequest[]>('/lm/requests');
        return requests.find((r) =>
          r.messages.some((m) => m.role === 'user' && m.text.includes(`<userRequest>\n${prompt}`)),
        );
      },
      90_000,
      250,
    );
    assert.notEqual(found, 'sign-in', 'Copilot Chat asks for a sign-in: it is not enabled, or offered no model');
    await page
      .locator('.interactive-item-container.interactive-response', { hasText: ANSWER })
      .nth(turn - 1)
      .waitFor({ timeout: 30_000 });
    await page.locator('.interactive-input-part .codicon-stop-circle').waitFor({ state: 'hidden', timeout: 30_000 });
    return found as RecordedRequest;
  };

  before(async () => {
    assert.ok(fs.existsSync(VSIX), `${VSIX} is missing: run make vsix`);
    assert.ok(fs.existsSync(CLI), `${CLI} is missing: run make venv, or set METIS_CLI`);
    assert.ok(
      fs.existsSync(path.join(COPILOT_DIR, 'package.json')),
      `code-server's bundled Copilot Chat is not at ${COPILOT_DIR}`,
    );
    // What Copilot Chat leaves behind when it starts, to remove in after() what this run added.
    copilotModulesExisted = fs.existsSync(path.join(COPILOT_DIR, 'node_modules'));
    copilotHomeExisted = fs.existsSync(COPILOT_HOME);
    const ide = path.join(COPILOT_HOME, 'ide');
    copilotIdeBefore = new Set(fs.existsSync(ide) ? fs.readdirSync(ide) : []);

    fixture = copyFixture();
    // As a user sets it up: the command prints what it wrote. No merge driver: the copy sits
    // inside this repository, whose git config the test must not touch.
    execFileSync(CLI, ['init', '--host', 'copilot', '--no-merge-driver', '--command', CLI, fixture.path], {
      encoding: 'utf8',
    });
    // The hooks' record of what each chat session got, kept out of the user's cache.
    sessionCache = fs.mkdtempSync(path.join(os.tmpdir(), 'metis-e2e-sessions-'));
    cs = await startCodeServer({
      workspace: fixture.path,
      vsixes: [VSIX, HELPER_VSIX],
      label: 'copilot-chat',
      env: { METIS_MEMORY_CACHE_DIR: sessionCache },
    });
    bridge = new Bridge(cs.bridgeFile);
    browser = await launchBrowser();
    page = await openWorkbench(browser, cs.url, fixture.path);
  });

  after(async () => {
    await browser?.close().catch(() => undefined);
    // Copilot Chat's own logs (its hooks log shows each hook's input and output), kept with
    // the screenshots: stop() removes the run's folder.
    if (cs) {
      for (const [name, file] of copilotLogs(path.join(cs.dir, 'user-data', 'logs'))) {
        fs.mkdirSync(ARTIFACTS, { recursive: true });
        fs.copyFileSync(file, path.join(ARTIFACTS, `copilot-chat-${name.replace(/\s+/g, '-')}`));
      }
    }
    await cs?.stop();
    fixture?.remove();
    if (sessionCache) fs.rmSync(sessionCache, { recursive: true, force: true });
    // Copilot Chat writes shims for its Copilot CLI harness (ripgrep, node-pty) into its own
    // folder of the cached code-server, node_modules/@github/copilot. They are recreated on
    // every start and harmless, but the cache is left as installed.
    if (!copilotModulesExisted) fs.rmSync(path.join(COPILOT_DIR, 'node_modules'), { recursive: true, force: true });
    // It also registers itself for the Copilot CLI in ~/.copilot/ide/<uuid>.lock; a stale lock
    // names a dead process, but ~/.copilot is also where the user's Copilot hooks live, so only
    // what this run created goes.
    if (!copilotHomeExisted) fs.rmSync(COPILOT_HOME, { recursive: true, force: true });
    else {
      const ide = path.join(COPILOT_HOME, 'ide');
      for (const name of fs.existsSync(ide) ? fs.readdirSync(ide) : []) {
        if (!copilotIdeBefore.has(name)) fs.rmSync(path.join(ide, name), { recursive: true, force: true });
      }
    }
  });

  step('init wrote the Copilot hooks, naming metis-memory by its absolute path', async () => {
    const file = JSON.parse(fs.readFileSync(path.join(fixture.path, HOOKS_FILE), 'utf8')) as {
      version: number;
      hooks: Record<string, { type: string; bash: string; timeoutSec: number }[]>;
    };
    assert.equal(file.version, 1);
    assert.deepEqual(Object.keys(file.hooks).sort(), ['sessionStart', 'userPromptSubmitted']);
    for (const [event, handlers] of Object.entries(file.hooks)) {
      assert.equal(handlers.length, 1, `${event}: one handler`);
      assert.equal(handlers[0]!.type, 'command');
      assert.equal(handlers[0]!.bash, `${CLI} hook --host copilot`, `${event}: the command`);
    }
  });

  step('the first prompt carries MEMORY.md and USER.md once, as hook context', async () => {
    // Enough answers for the chat turns and any side request (a title) the agent makes.
    const answers = Array.from({ length: 6 }, () => ({ chunks: [ANSWER] }));
    await bridge.call('/lm', { answers, toolCalling: true });
    await waitFor(
      `${MODEL} among the editor's models`,
      async () => (await bridge.call<string[]>('/models')).includes(MODEL) || undefined,
      20_000,
    );
    await bridge.call('/chat/enable');
    const chat = await waitFor(
      `${CHAT_EXTENSION} to be enabled and started`,
      async () => {
        const ext = await bridge.call<{ active: boolean; version: string } | null>('/extension', {
          id: CHAT_EXTENSION,
        });
        return ext?.active ? ext : undefined;
      },
      60_000,
      250,
    );
    // Written against 0.67.0; a later one is named in the failure messages below.
    copilotVersion = chat.version;
    await bridge.call('/command', { command: 'workbench.action.chat.open' });
    await page.locator('.interactive-input-part', { hasText: MODEL }).first().waitFor({ timeout: 30_000 });

    const request = await ask(FIRST_PROMPT, 1);
    await screenshot(page, '40-copilot-chat-first-prompt');
    const turn = lastUserMessage(request);
    assert.match(
      turn,
      /<context>[\s\S]*Additional instructions from hooks: <metis-memory>\n[\s\S]*<\/metis-memory>[\s\S]*<\/context>/,
    );
    assert.ok(request.tools > 0, 'the agent offered its tools (Agent mode)');
    const blocks = memoryBlocks(request.text);
    assert.equal(blocks.length, 1, 'one <metis-memory> block in the whole request');
    assert.match(blocks[0]!, /^<metis-memory>\nThis is the persistent memory of this workspace/);
    for (const name of ['MEMORY.md', 'USER.md']) {
      const text = disk(name).trim();
      assert.ok(blocks[0]!.includes(text), `the block lacks ${name}:\n${blocks[0]!.slice(0, 800)}`);
      assert.equal(count(request.text, text), 1, `${name} exactly once in the request`);
    }
  });

  step('after a change, the next prompt in the same chat carries the changed memory', async () => {
    await bridge.call('/api', { method: 'memoryAdd', args: ['MEMORY.md', NEW_ENTRY] });
    assert.ok(disk('MEMORY.md').includes(NEW_ENTRY), 'the entry was written');

    const request = await ask(SECOND_PROMPT, 2);
    await screenshot(page, '41-copilot-chat-second-prompt');
    assert.ok(request.text.includes(FIRST_PROMPT), 'the same chat session: the first turn is in the history');
    const turn = lastUserMessage(request);
    assert.ok(turn.includes(`<userRequest>\n${SECOND_PROMPT}`));
    const [block, ...more] = memoryBlocks(turn);
    assert.ok(block, `the second turn has no <metis-memory> block:\n${turn.slice(0, 1500)}`);
    assert.equal(more.length, 0, 'one block in the second turn');
    assert.match(
      block,
      /^<metis-memory>\nThe workspace memory changed since you last saw it; this is its current content\./,
    );
    assert.ok(block.includes(disk('MEMORY.md').trim()), 'the block holds MEMORY.md as it is now');
    assert.equal(count(request.text, NEW_ENTRY), 1, 'the new entry exactly once in the request');
    // The first turn's block is replayed as it was sent, without the entry.
    assert.equal(memoryBlocks(request.text).length, 2, "the first turn's block and the change");
  });
});
