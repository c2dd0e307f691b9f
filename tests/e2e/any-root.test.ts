/**
 * Any root: a memory file opened outside the folder that holds its `.metis/` (a monorepo opened
 * at its root, `.metis/` opened as the folder, no folder at all) gets the status bar, the
 * diagnostics, and a consolidation that finds the right file, in a real VS Code.
 */

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { Bridge, ROOT, waitFor } from './lib/codeServer';
import { EditorSession } from './lib/session';
import { screenshot, waitForStatus } from './lib/ui';

const VSIX = path.resolve(ROOT, process.env.METIS_VSIX ?? 'dist/metis-memory-linux-x64.vsix');
const HELPER_VSIX = path.resolve(ROOT, process.env.METIS_HELPER_VSIX ?? '.cache/e2e/metis-e2e-helper.vsix');

// Over the 2,048 B soft cap, with one duplicate: 2,2xx B.
const MEMORY = `# API memory\n\n- build with make\n- BUILD with make\n${Array.from({ length: 56 }, (_, i) => `- fact ${String(i).padStart(2, '0')}: the api service keeps this.\n`).join('')}`;

interface Case {
  name: string;
  /** The folder to open, relative to the project's parent ('' for no folder). */
  folder: (mono: string) => string;
}

const CASES: Case[] = [
  { name: 'a monorepo opened at its root', folder: (mono) => mono },
  { name: '.metis/ opened as the folder', folder: (mono) => path.join(mono, 'api', '.metis') },
  { name: 'no folder at all', folder: () => '' },
];

interface Diag {
  uri: string;
  diagnostics: { code: string }[];
}

interface DocInfo {
  uri: string;
  text: string;
}

describe('a memory file opened from any root', { timeout: 600_000 }, () => {
  // One code-server and browser tab; each case opens its folder in the tab, as a user opening
  // another folder would.
  const session = new EditorSession();
  let bridge: Bridge;
  const roots: string[] = [];

  before(async () => {
    await session.start({ vsixes: [VSIX, HELPER_VSIX], label: 'any-root' });
    bridge = new Bridge(session.cs.bridgeFile);
  });

  after(async () => {
    await session.stop();
    for (const root of roots) fs.rmSync(root, { recursive: true, force: true });
  });

  for (const c of CASES) {
    it(`gets its usage, diagnostics and consolidation with ${c.name}`, async () => {
      const root = fs.mkdtempSync(path.join(ROOT, '.cache', 'e2e-ws-'));
      roots.push(root);
      const mono = path.join(root, 'mono');
      const memory = path.join(mono, 'api', '.metis', 'MEMORY.md');
      fs.mkdirSync(path.dirname(memory), { recursive: true });
      fs.writeFileSync(memory, MEMORY);
      fs.mkdirSync(path.join(mono, 'web'));
      fs.writeFileSync(path.join(mono, 'web', 'README.md'), '# web\n');
      const folder = c.folder(mono);
      const page = await session.open(folder);
      try {
        const opened = await bridge.call<string>('/open', { path: memory });
        assert.equal(opened, pathToFileURL(memory).href);

        const size = Buffer.byteLength(MEMORY);
        assert.ok(size > 2048 && size < 4096, `MEMORY.md is ${size} B`);
        await waitForStatus(page, /MEMORY 2\.\d\/2 KB · USER 0\/1\.5 KB/, 60_000, 'the status bar of the memory file’s own workspace');
        const codes = await waitFor(
          'the over-soft-cap and duplicate diagnostics',
          async () => {
            const all = await bridge.call<Diag[]>('/diagnostics');
            const mine = all.find((d) => d.uri === opened)?.diagnostics.map((d) => d.code).sort();
            return mine?.includes('over-soft-cap') && mine.includes('duplicate-entry') ? mine : undefined;
          },
          30_000,
        );
        assert.deepEqual(codes, ['duplicate-entry', 'over-soft-cap']);

        // The code action's command, with the workspace the server gives it.
        const folders = await bridge.call<string[]>('/workspaceFolderUris');
        const workspace = folder.endsWith('.metis') ? folders[0]! : pathToFileURL(path.join(mono, 'api')).href;
        await bridge.call('/command', { command: 'metis.openConsolidation', args: [{ file: 'MEMORY.md', workspace }] });
        const proposal = await waitFor(
          'the consolidation proposal of the right MEMORY.md',
          async () => (await bridge.call<DocInfo[]>('/documents', { scheme: 'metis-proposal' }))[0],
          30_000,
        );
        assert.ok(proposal.text.startsWith('# API memory\n\n- build with make\n- fact 00'), proposal.text.slice(0, 80));
        assert.ok(!/BUILD with make/.test(proposal.text), 'the tidy proposal drops the duplicate');
        await screenshot(page, `any-root-${c.name.replace(/[^a-z0-9]+/gi, '-')}`);
      } catch (err) {
        await screenshot(page, `fail-any-root-${c.name.replace(/[^a-z0-9]+/gi, '-')}`).catch(() => undefined);
        throw err;
      }
    });
  }
});
