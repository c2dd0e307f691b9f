import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import {
  absoluteTime,
  agentOf,
  archivedDescription,
  parseSidePath,
  quote,
  recordDescription,
  recordTooltip,
  relativeTime,
  reviewCountText,
  sidePath,
  stagedAgent,
  stagedNotice,
} from '../src/views/historyFormat';
import { ServerCommand, type HistoryRecord, type StagedChange } from '../src/protocol';

const NOW = Date.parse('2025-03-10T12:00:00Z');
const ago = (ms: number): string => new Date(NOW - ms).toISOString();
const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

function record(over: Partial<HistoryRecord> = {}): HistoryRecord {
  return {
    id: 7,
    time: ago(2 * MIN),
    file: 'MEMORY.md',
    operation: 'add',
    door: 'mcp',
    actor: 'claude-code 2.1.4',
    session: null,
    before_hash: 'a'.repeat(64),
    after_hash: 'b'.repeat(64),
    before_size_bytes: 1200,
    after_size_bytes: 1234,
    added: ['- Use pnpm, not npm.'],
    removed: [],
    summary: 'added 1 entry: "- Use pnpm, not npm."',
    person: 'Claude Code 2.1.4 through memory_add over MCP',
    detail: null,
    ...over,
  };
}

function staged(over: Partial<StagedChange> = {}): StagedChange {
  return {
    id: 3,
    time: ago(10_000),
    file: 'MEMORY.md',
    operation: 'add',
    door: 'mcp',
    actor: 'claude-code 2.1.4',
    session: null,
    added: ['- Use pnpm, not npm.'],
    removed: [],
    before: '# Memory\n',
    after: '# Memory\n- Use pnpm, not npm.\n',
    summary: 'added “- Use pnpm, not npm.”',
    person: 'Claude Code 2.1.4 through memory_add over MCP',
    ...over,
  };
}

describe('relativeTime', () => {
  it('says how long ago, in the words a person uses, at each boundary', () => {
    const cases: [number, string][] = [
      [0, 'just now'],
      [44_000, 'just now'],
      [45_000, '1 min ago'],
      [2 * MIN, '2 min ago'],
      [59 * MIN, '59 min ago'],
      [59 * MIN + 50_000, '1 hour ago'],
      [HOUR, '1 hour ago'],
      [3 * HOUR + 10 * MIN, '3 hours ago'],
      [23 * HOUR + 40 * MIN, 'yesterday'],
      [DAY + HOUR, 'yesterday'],
      [2 * DAY, '2 days ago'],
      [29 * DAY, '29 days ago'],
      [30 * DAY, 'on 2025-02-08'],
    ];
    for (const [ms, words] of cases) assert.equal(relativeTime(ago(ms), NOW), words, `${ms} ms ago`);
  });

  it('calls a time ahead of this clock "just now", and shows a time it cannot read as sent', () => {
    assert.equal(relativeTime(new Date(NOW + 5 * MIN).toISOString(), NOW), 'just now');
    assert.equal(relativeTime('yesterday-ish', NOW), 'yesterday-ish');
    assert.equal(absoluteTime('2025-03-04T14:05:09.123Z'), '2025-03-04 14:05:09 UTC');
    assert.equal(absoluteTime('not a time'), 'not a time');
  });
});

describe('a record in the Memory History view', () => {
  it('shows when and who beside the server’s summary', () => {
    assert.equal(recordDescription(record(), NOW), '2 min ago · Claude Code 2.1.4');
    assert.equal(recordDescription(record({ person: 'You in the editor' }), NOW), '2 min ago · You in the editor');
  });

  it('has a tooltip with the record, its sizes and each entry added and removed', () => {
    const tip = recordTooltip(
      record({ operation: 'replace', added: ['- new'], removed: ['- old\n  continued'], summary: 'replaced 1 entry' }),
    );
    assert.match(tip, /^MEMORY\.md #7: replaced 1 entry\n/);
    assert.match(tip, /Claude Code 2\.1\.4 through memory_add over MCP, 2025-03-10 11:58:00 UTC\n1,200/);
    const undo = recordTooltip(record({ operation: 'undo', detail: 'undoes #5' }));
    assert.match(undo, /UTC\nundoes #5\n1,200 B/);
    assert.match(tip, /1,200 B → 1,234 B/);
    assert.match(tip, /Added:\n {4}\+ - new\nRemoved:\n {4}− - old\n/);
    assert.ok(!tip.includes('continued'), 'one line per entry');
  });

  it('says what removed an archived entry, and when', () => {
    const line = archivedDescription(
      {
        id: '12:1',
        file: 'USER.md',
        text: '- x',
        time: ago(3 * DAY),
        operation: 'consolidate',
        actor: 'user',
        person: 'you through the editor (consolidate)',
        record: 12,
      },
      NOW,
    );
    assert.equal(line, 'USER.md · 3 days ago · removed by consolidate (#12)');
  });
});

describe('the review inbox', () => {
  it('names the agent as the server does, without how it came', () => {
    assert.equal(agentOf('Claude Code 2.1.4 through memory_add over MCP'), 'Claude Code 2.1.4');
    assert.equal(agentOf('an outside edit'), 'an outside edit');
    assert.equal(agentOf(' through x'), ' through x');
  });

  it('names the agent of a staged change, however it came', () => {
    assert.equal(stagedAgent('Claude Code 2.1.4 through memory_add over MCP'), 'Claude Code 2.1.4');
    assert.equal(stagedAgent('Claude Code with metis-memory add --user'), 'Claude Code');
    assert.equal(stagedAgent('Codex with metis-memory replace through x'), 'Codex');
    assert.equal(stagedAgent(' with metis-memory add'), ' with metis-memory add');
  });

  it('names the agent, what it wants and the entry', () => {
    assert.equal(
      stagedNotice(staged(), 'Claude Code'),
      'Claude Code wants to add an entry to MEMORY.md: “- Use pnpm, not npm.”',
    );
    assert.equal(
      stagedNotice(staged({ added: ['- a', '- b'] }), 'Claude Code'),
      'Claude Code wants to add 2 entries to MEMORY.md.',
    );
    assert.equal(
      stagedNotice(staged({ operation: 'replace', added: ['- pnpm 9'], removed: ['- pnpm 8'] }), 'Copilot'),
      'Copilot wants to change an entry of MEMORY.md: “- pnpm 8” → “- pnpm 9”',
    );
    assert.equal(
      stagedNotice(staged({ operation: 'replace', added: [], removed: ['- stale'] }), 'Copilot'),
      'Copilot wants to remove an entry from MEMORY.md: “- stale”',
    );
    assert.equal(
      stagedNotice(
        staged({ operation: 'consolidate', file: 'USER.md', added: ['- a'], removed: ['- b', '- c'] }),
        'Codex',
      ),
      'Codex wants to rewrite USER.md: 2 entries removed, one added.',
    );
    assert.equal(
      stagedNotice(staged({ operation: 'str_replace', summary: 'replace 2 entries' }), 'Claude'),
      'Claude wants to change MEMORY.md: replace 2 entries',
    );
  });

  it('names the user memory as a person reads it, not as its USER.md', () => {
    const user = staged({ file: 'USER.md', added: ['- Answer in British English'] });
    assert.equal(
      stagedNotice(user, 'VS Code chat agent', 'your user memory'),
      'VS Code chat agent wants to add an entry to your user memory: “- Answer in British English”',
    );
    assert.equal(
      stagedNotice({ ...user, operation: 'consolidate', removed: ['- b'] }, 'Codex', 'your user memory'),
      'Codex wants to rewrite your user memory: one entry removed, one added.',
    );
  });

  it('cuts a long entry to one short line, never inside a character', () => {
    const long = `- ${'é'.repeat(30)}${'👩‍👩‍👧'.repeat(40)}\nsecond line`;
    const q = quote(long);
    assert.ok(q.startsWith('“- éé') && q.endsWith('…”'), q);
    assert.ok(!q.includes('second line'));
    const segments = [...new Intl.Segmenter('en', { granularity: 'grapheme' }).segment(q.slice(1, -1))];
    assert.equal(segments.length, 60);
    assert.ok(q.includes('👩‍👩‍👧'), 'whole family emoji kept');
    assert.equal(quote('  - short  '), '“- short”');
  });

  it('counts what waits in the status bar', () => {
    assert.equal(reviewCountText(1), '$(inbox) 1 to review');
    assert.equal(reviewCountText(12), '$(inbox) 12 to review');
  });
});

describe('a virtual document of a write', () => {
  it('carries the id, the side and the file (last, for its language and tab title)', () => {
    assert.equal(sidePath(42, 'before', 'MEMORY.md'), '/42/before/MEMORY.md');
    assert.deepEqual(parseSidePath('/42/after/USER.md'), { id: 42, side: 'after', file: 'USER.md' });
  });

  it('refuses any other path', () => {
    for (const bad of [
      '/x/before/MEMORY.md',
      '/1/middle/MEMORY.md',
      '/1/before/',
      '/1/before/a/b.md',
      '1/before/M.md',
      '',
    ]) {
      assert.equal(parseSidePath(bad), undefined, bad);
    }
  });
});

describe('the manifest’s history and review contributions', () => {
  const root = path.resolve(__dirname, '..', '..');
  const manifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as {
    contributes: {
      commands: { command: string; title: string }[];
      menus: Record<string, { command: string; when?: string }[]>;
      views: Record<string, { id: string; name: string }[]>;
      configuration: { properties: Record<string, { type: string; default: unknown; scope?: string }> };
    };
  };
  const source = fs.readFileSync(path.join(root, 'extension', 'src', 'commands.ts'), 'utf8');
  const registered = new Set([...source.matchAll(/register\(\s*'([^']+)'/g)].map((m) => m[1]));
  const ours = manifest.contributes.commands.filter((c) => /^metis\.(showHistory|history\.|review\.)/.test(c.command));

  it('contributes the commands a person looks for, each registered, none a server command id', () => {
    const titles = new Set(ours.map((c) => c.title));
    for (const title of [
      'Show Memory History',
      'Undo This Change',
      'Restore This Version',
      'Put Back',
      'Accept',
      'Reject',
      'Review Agent Writes: On',
      'Review Agent Writes: Off',
    ]) {
      assert.ok(titles.has(title), `no command titled "${title}"`);
    }
    const server = new Set<string>(Object.values(ServerCommand));
    for (const c of ours) {
      assert.ok(registered.has(c.command), `${c.command} is contributed but commands.ts does not register it`);
      assert.ok(!server.has(c.command), `${c.command} clashes with a server command`);
    }
  });

  it('puts Undo/Restore on a write’s diff and Accept/Reject on a staged change’s, in the title bar', () => {
    const title = manifest.contributes.menus['editor/title'] ?? [];
    const on = (command: string) => title.find((m) => m.command === command)?.when;
    assert.equal(on('metis.history.undo'), 'resourceScheme == metis-history');
    assert.equal(on('metis.history.restore'), 'resourceScheme == metis-history');
    assert.equal(on('metis.review.accept'), 'resourceScheme == metis-review');
    assert.equal(on('metis.review.reject'), 'resourceScheme == metis-review');
    for (const menu of Object.values(manifest.contributes.menus)) {
      for (const m of menu) {
        if (/^metis\.(history|review)\./.test(m.command)) assert.ok(registered.has(m.command), m.command);
      }
    }
  });

  it('shows Memory History in the Explorer, and a per-folder review setting, off by default', () => {
    assert.ok(
      manifest.contributes.views.explorer?.some((v) => v.id === 'metis.memoryHistory' && v.name === 'Memory History'),
    );
    const setting = manifest.contributes.configuration.properties['metis.reviewAgentWrites'];
    assert.deepEqual(
      { type: setting?.type, default: setting?.default, scope: setting?.scope },
      { type: 'boolean', default: false, scope: 'resource' },
    );
  });
});
