import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import {
  bar,
  formatBytes,
  formatUsage,
  percent,
  statusText,
  statusTooltip,
  stripFences,
  usageLine,
  utf8Length,
  worstLevel,
} from '../src/views/format';
import type { FileUsage, Usage } from '../src/protocol';

/** A payload as the server sends it: the level and its sentence are the server's. */
function fu(size: number, soft: number, hard: number): FileUsage {
  const [level, state] =
    size > hard
      ? (['error', 'over the hard cap: writes are refused until it is consolidated'] as const)
      : size > soft
        ? (['warning', 'over the soft cap: consolidate before adding more'] as const)
        : (['ok', 'within budget'] as const);
  return {
    size_bytes: size,
    soft_cap: soft,
    hard_cap: hard,
    over_soft_cap: size > soft,
    over_hard_cap: size > hard,
    level,
    state,
  };
}
const usage = (mem: number, user: number): Usage => ({
  'MEMORY.md': fu(mem, 2048, 4096),
  'USER.md': fu(user, 1536, 3072),
});

describe('formatBytes', () => {
  it('groups thousands like the server messages', () => {
    assert.equal(formatBytes(0), '0 B');
    assert.equal(formatBytes(999), '999 B');
    assert.equal(formatBytes(2311), '2,311 B');
    assert.equal(formatBytes(1234567), '1,234,567 B');
  });
});

describe('formatUsage', () => {
  it('shows KB of 1,024 bytes with at most one decimal', () => {
    assert.equal(formatUsage(1843, 2048), '1.8/2 KB');
    assert.equal(formatUsage(410, 1536), '0.4/1.5 KB');
    assert.equal(formatUsage(0, 2048), '0/2 KB');
    assert.equal(formatUsage(2048, 2048), '2/2 KB');
  });
  it('never shows a non-empty file as 0', () => {
    assert.equal(formatUsage(3, 2048), '0.1/2 KB');
  });
  it('never shows an over-cap file as equal to the cap', () => {
    assert.equal(formatUsage(2049, 2048), '2.1/2 KB');
    assert.equal(formatUsage(4100, 2048), '4/2 KB');
  });
  it('never rounds a file at or under the cap above it', () => {
    assert.equal(formatUsage(2047, 2048), '2/2 KB');
    assert.equal(formatUsage(1530, 1536), '1.5/1.5 KB');
  });
});

describe('level and status text', () => {
  it('takes the worse of the two levels the server sent', () => {
    assert.equal(worstLevel(usage(100, 100)), 'ok');
    assert.equal(worstLevel(usage(2049, 100)), 'warning');
    assert.equal(worstLevel(usage(2049, 3100)), 'error');
  });
  it('shows the level the server sent, not one of its own from the numbers', () => {
    const u = usage(100, 100);
    const judged: Usage = { ...u, 'USER.md': { ...u['USER.md'], level: 'warning', state: 'as the server says' } };
    assert.equal(statusText(judged), '$(warning) MEMORY 0.1/2 KB · USER 0.1/1.5 KB');
    assert.match(
      statusTooltip('proj', judged),
      /USER\.md: 100 B — 7% of the 1,536 B soft cap, 3% of the 3,072 B hard cap; as the server says/,
    );
  });
  it('shows both files against their soft caps', () => {
    assert.equal(statusText(usage(1843, 410)), 'MEMORY 1.8/2 KB · USER 0.4/1.5 KB');
  });
  it('leads with the worst state of either file', () => {
    assert.equal(statusText(usage(2311, 410)), '$(warning) MEMORY 2.3/2 KB · USER 0.4/1.5 KB');
    assert.equal(statusText(usage(1000, 3100)), '$(error) MEMORY 1/2 KB · USER 3/1.5 KB');
  });
  it('puts bytes and percentages of both caps in the tooltip', () => {
    const line = usageLine('MEMORY.md', fu(2311, 2048, 4096));
    assert.equal(
      line,
      'MEMORY.md: 2,311 B — 113% of the 2,048 B soft cap, 56% of the 4,096 B hard cap; ' +
        'over the soft cap: consolidate before adding more',
    );
    const tip = statusTooltip('proj', usage(2311, 410));
    assert.match(tip, /proj/);
    assert.match(tip, /USER\.md: 410 B — 27% of the 1,536 B soft cap/);
  });
  it('marks sizes that follow unsaved editor text', () => {
    assert.match(usageLine('USER.md', { ...fu(10, 1536, 3072), source: 'buffer' }), /10 B \(as in the open editor\)/);
  });
  it('shows an unreadable file as an error with its reason, never as 0 B within caps', () => {
    const reason = 'it is a directory, not a regular file';
    const broken: Usage = {
      ...usage(100, 410),
      'USER.md': { ...fu(0, 1536, 3072), error: reason, level: 'error', state: `cannot be read — ${reason}` },
    };
    assert.equal(statusText(broken), '$(error) MEMORY 0.1/2 KB · USER unreadable');
    assert.equal(usageLine('USER.md', broken['USER.md']), `USER.md: cannot be read — ${reason}`);
  });
  it('handles a zero cap without dividing by it', () => {
    assert.equal(percent(5, 0), '—');
  });
});

describe('utf8Length', () => {
  it('counts UTF-8 bytes, not characters', () => {
    assert.equal(utf8Length('aé😀'), 1 + 2 + 4);
  });
});

describe('stripFences', () => {
  it('keeps what a model put inside a code fence', () => {
    assert.equal(stripFences('```markdown\n- a\n- b\n```\n'), '- a\n- b\n');
    assert.equal(stripFences('- a\n'), '- a\n');
  });
});

describe('the same numbers as the server', () => {
  // One formatter per side: this compares the extension's with the server's on the same inputs.
  const python = process.env.METIS_PYTHON ?? path.join(__dirname, '..', '..', '.venv', 'bin', 'python');
  const sizes = [0, 1, 999, 1000, 2047, 2048, 2049, 4096, 4097, 123456, 10_485_760];
  const script = [
    'import json, sys',
    'from metis_memory.store.errors import fmt_bytes',
    'print(json.dumps([fmt_bytes(n) for n in json.loads(sys.argv[1])]))',
  ].join('\n');
  const py = JSON.parse(execFileSync(python, ['-c', script, JSON.stringify(sizes)]).toString()) as string[];
  it('formats bytes as the server does', () => {
    assert.deepEqual(sizes.map(formatBytes), py);
  });
});

describe('bar', () => {
  it('has ten cells, rounded, clamped at empty and full', () => {
    assert.equal(bar(0), '▱▱▱▱▱▱▱▱▱▱');
    assert.equal(bar(4), '▱▱▱▱▱▱▱▱▱▱');
    assert.equal(bar(61), '▰▰▰▰▰▰▱▱▱▱');
    assert.equal(bar(100), '▰▰▰▰▰▰▰▰▰▰');
    assert.equal(bar(250), '▰▰▰▰▰▰▰▰▰▰');
  });
});
