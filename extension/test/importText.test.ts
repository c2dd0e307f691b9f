// What an import of agent hosts' memory says, against what the server's import library
// answers: its host registry, and a proposal it makes from a Claude Code memory laid out as
// Claude Code writes it (a user CLAUDE.md and a workspace's auto memory) in a home of its own.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { bringInLabel, HOST_TITLES, hostList, importSummary } from '../src/views/importText';
import type { ImportProposal } from '../src/protocol';

const python = process.env.METIS_PYTHON ?? path.join(__dirname, '..', '..', '.venv', 'bin', 'python');

describe('the hosts an import names', () => {
  it('titles each host as the server’s registry does', () => {
    const registry = JSON.parse(
      execFileSync(python, [
        '-c',
        'import json; from metis_memory.hosts.imports.registry import HOSTS; print(json.dumps({n: h.title for n, h in HOSTS.items()}))',
      ]).toString(),
    ) as Record<string, string>;
    assert.deepEqual(HOST_TITLES, registry);
  });

  it('lists one, two or more hosts, and the offer’s verb agrees', () => {
    assert.equal(hostList(['claude']), 'Claude Code');
    assert.equal(hostList(['claude', 'codex']), 'Claude Code and Codex');
    assert.equal(hostList(['claude', 'codex', 'gemini']), 'Claude Code, Codex and Gemini CLI');
    assert.equal(bringInLabel(['claude']), 'Bring in what Claude Code remembers…');
    assert.equal(bringInLabel(['claude', 'qwen']), 'Bring in what Claude Code and Qwen Code remember…');
    assert.equal(hostList(['newhost']), 'newhost', 'a host the extension does not know yet is named as sent');
  });
});

describe('the message an import ends with', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'metis-import-text-'));
  after(() => {
    fs.rmSync(root, { recursive: true, force: true });
  });
  const token = 'ghp_' + 'aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5';

  /** The server library's proposal for Claude Code's memory in `home`, for `workspace`. */
  const propose = (home: string, workspace: string, config: string): ImportProposal =>
    JSON.parse(
      execFileSync(
        python,
        [
          '-c',
          [
            'import json, sys',
            'from pathlib import Path',
            'from metis_memory.store.memory_store import MemoryStore',
            'from metis_memory.hosts.imports import propose',
            'print(json.dumps(propose(MemoryStore(Path(sys.argv[1])), ["claude"], home=Path(sys.argv[2]), env={}).to_json()))',
          ].join('\n'),
          workspace,
          home,
        ],
        { env: { ...process.env, XDG_CONFIG_HOME: config, HOME: home } },
      ).toString(),
    ) as ImportProposal;

  it('says what goes into each file, what was already there, and names a refused secret by rule and place', () => {
    const home = path.join(root, 'home');
    const workspace = path.join(root, 'shop');
    const config = path.join(root, 'config');
    fs.mkdirSync(path.join(workspace, '.metis'), { recursive: true });
    fs.mkdirSync(config, { mode: 0o700 });
    fs.writeFileSync(path.join(workspace, '.metis', 'USER.md'), '- Answer in British English.\n');
    const claude = path.join(home, '.claude');
    const project = fs.realpathSync(workspace).replace(/[^A-Za-z0-9]/g, '-');
    const memory = path.join(claude, 'projects', project, 'memory');
    fs.mkdirSync(memory, { recursive: true });
    fs.writeFileSync(
      path.join(claude, 'CLAUDE.md'),
      `- Answer in British English.\n- Prefer ripgrep over grep.\n- My GitHub token is ${token}.\n`,
    );
    fs.writeFileSync(path.join(memory, 'MEMORY.md'), '- The staging cluster is called blue-7.\n');
    const proposal = propose(home, workspace, config);
    const text = importSummary(proposal);
    assert.ok(!text.includes(token), 'a secret’s value is never shown');
    const refused = proposal.targets.flatMap((t) => t.refused);
    assert.equal(refused.length, 1, JSON.stringify(proposal.targets));
    assert.equal(
      text,
      'From Claude Code: 1 entry into MEMORY.md, 1 entry into your user memory. Review each proposal, then Apply ' +
        'it; nothing is written before. 1 entry left out: already there. 1 entry refused: it looks like a secret ' +
        `(${refused[0]?.rule ?? ''} in ${path.join(claude, 'CLAUDE.md')}, line 3).`,
    );
  });

  it('says when there is nothing new', () => {
    const home = path.join(root, 'home2');
    const workspace = path.join(root, 'shop2');
    const config = path.join(root, 'config2');
    fs.mkdirSync(path.join(workspace, '.metis'), { recursive: true });
    fs.mkdirSync(path.join(home, '.claude'), { recursive: true });
    fs.mkdirSync(config, { mode: 0o700 });
    fs.writeFileSync(path.join(workspace, '.metis', 'USER.md'), '- Answer in British English.\n');
    fs.writeFileSync(path.join(home, '.claude', 'CLAUDE.md'), '- Answer in British English.\n');
    assert.equal(
      importSummary(propose(home, workspace, config)),
      'Nothing new to bring in from Claude Code: 1 entry is already in your memory.',
    );
  });
});
