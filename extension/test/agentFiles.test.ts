// Which files are agent files is declared once, in the server's budget catalogue: the manifest's
// activation events and the generated module must be exactly what the generator makes of it.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { ROOT_MARKERS, WORKSPACE_AGENT_GLOBS } from '../src/generated/agentFiles';

const root = path.resolve(__dirname, '..', '..');

describe('agent file patterns', () => {
  it('are what scripts/generate_agent_patterns.mjs makes of builtin.json (run it after changing the catalogue)', () => {
    const check = (): string =>
      execFileSync(process.execPath, [path.join(root, 'scripts', 'generate_agent_patterns.mjs'), '--check'], {
        cwd: root,
        stdio: 'pipe',
      }).toString();
    assert.doesNotThrow(check);
  });

  it('cover every workspace file of every built-in budget, and activate on each at a folder’s root', () => {
    const catalogue = JSON.parse(
      fs.readFileSync(path.join(root, 'server', 'metis_memory', 'budgets', 'builtin.json'), 'utf8'),
    ) as { budgets: { files: string[] }[] };
    const manifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as {
      activationEvents: string[];
    };
    const globs = catalogue.budgets.flatMap((b) => b.files).filter((g) => !g.startsWith('~/'));
    for (const glob of globs) {
      assert.ok(WORKSPACE_AGENT_GLOBS.includes(glob), `${glob} is missing from the document selector's globs`);
      const marker = glob.replace(/^(\*\*\/)+/, '');
      assert.ok(ROOT_MARKERS.includes(marker), `${marker} is missing from the root markers`);
      assert.ok(manifest.activationEvents.includes(`workspaceContains:${marker}`), `no activation on ${marker}`);
    }
    assert.ok(manifest.activationEvents.includes('workspaceContains:.metis/budgets.toml'));
  });
});
