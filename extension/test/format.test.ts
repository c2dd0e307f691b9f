import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import {
  bar,
  fileList,
  formatBytes,
  formatUsage,
  percent,
  shownCap,
  statusLabel,
  statusText,
  statusTooltip,
  stripFences,
  usageLine,
  userMemoryLine,
  utf8Length,
  worstLevel,
} from '../src/views/format';
import type { FileUsage, Usage, UserMemoryUsage } from '../src/protocol';

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
    assert.equal(statusText(judged), 'MEMORY 0.1/2 KB · $(warning) USER 0.1/1.5 KB');
    assert.match(
      statusTooltip('proj', judged),
      /USER\.md: 100 B — 7% of the 1,536 B soft cap \(the size to aim for\), 3% of the 3,072 B hard cap \(writes past it are refused\); as the server says/,
    );
  });
  it('shows both files against their soft caps while within them', () => {
    assert.equal(statusText(usage(1843, 410)), 'MEMORY 1.8/2 KB · USER 0.4/1.5 KB');
  });
  it('puts each file’s icon by that file', () => {
    assert.equal(statusText(usage(2311, 410)), '$(warning) MEMORY 2.3/2 KB · USER 0.4/1.5 KB');
    assert.equal(statusText(usage(1000, 1600)), 'MEMORY 1/2 KB · $(warning) USER 1.6/1.5 KB');
    assert.equal(statusText(usage(2311, 3100)), '$(warning) MEMORY 2.3/2 KB · $(error) USER 3.1/3 KB');
  });
  it('shows a file against the cap its state is about: soft within and over it, hard once over that', () => {
    // Under the soft cap, between the caps, just over the hard cap, far over it.
    assert.equal(statusText(usage(1843, 0)), 'MEMORY 1.8/2 KB · USER 0/1.5 KB');
    assert.equal(statusText(usage(4000, 0)), '$(warning) MEMORY 3.9/2 KB · USER 0/1.5 KB');
    assert.equal(statusText(usage(4096, 0)), '$(warning) MEMORY 4/2 KB · USER 0/1.5 KB');
    assert.equal(statusText(usage(4097, 0)), '$(error) MEMORY 4.1/4 KB · USER 0/1.5 KB');
    assert.equal(statusText(usage(4403, 0)), '$(error) MEMORY 4.3/4 KB · USER 0/1.5 KB');
    assert.equal(statusText(usage(0, 3073)), 'MEMORY 0/2 KB · $(error) USER 3.1/3 KB');
    assert.equal(shownCap(fu(4097, 2048, 4096)).kind, 'hard');
    assert.equal(shownCap(fu(4096, 2048, 4096)).kind, 'soft');
  });
  it('puts bytes and percentages of both caps in the tooltip, the shown one first', () => {
    const line = usageLine('MEMORY.md', fu(2311, 2048, 4096));
    assert.equal(
      line,
      'MEMORY.md: 2,311 B — 113% of the 2,048 B soft cap (the size to aim for), ' +
        '56% of the 4,096 B hard cap (writes past it are refused); ' +
        'over the soft cap: consolidate before adding more',
    );
    assert.equal(
      usageLine('MEMORY.md', fu(4403, 2048, 4096)),
      'MEMORY.md: 4,403 B — 107% of the 4,096 B hard cap (writes past it are refused), ' +
        '215% of the 2,048 B soft cap (the size to aim for); ' +
        'over the hard cap: writes are refused until it is consolidated',
    );
    const tip = statusTooltip('proj', usage(2311, 410));
    assert.match(tip, /proj/);
    assert.match(tip, /USER\.md: 410 B — 27% of the 1,536 B soft cap/);
    assert.match(tip, /against its soft cap, or against its hard cap once over it/);
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
    assert.equal(statusText(broken), 'MEMORY 0.1/2 KB · $(error) USER unreadable');
    assert.equal(usageLine('USER.md', broken['USER.md']), `USER.md: cannot be read — ${reason}`);
  });
  it('handles a zero cap without dividing by it', () => {
    assert.equal(percent(5, 0), '—');
  });
});

describe('the user memory beside the workspace files', () => {
  const PATH = '/home/ada/.config/metis-memory/USER.md';
  const mine = (size: number, exists = true): UserMemoryUsage => ({
    ...fu(size, 1536, 3072),
    path: PATH,
    uri: `file://${PATH}`,
    exists,
  });
  it('shows its figure last, after the person icon, with its own level icon', () => {
    assert.equal(
      statusText({ ...usage(1843, 410), userMemory: mine(300) }),
      'MEMORY 1.8/2 KB · USER 0.4/1.5 KB · $(account) 0.3/1.5 KB',
    );
    assert.equal(
      statusText({ ...usage(100, 100), userMemory: mine(1600) }),
      'MEMORY 0.1/2 KB · USER 0.1/1.5 KB · $(warning) $(account) 1.6/1.5 KB',
    );
    assert.equal(
      statusLabel({ ...usage(100, 100), userMemory: mine(1600) }),
      'MEMORY 0.1/2 KB · USER 0.1/1.5 KB · your user memory 1.6/1.5 KB',
    );
  });
  it('counts in the item’s level once it is there, and not before', () => {
    assert.equal(worstLevel({ ...usage(100, 100), userMemory: mine(1600) }), 'warning');
    assert.equal(worstLevel({ ...usage(100, 100), userMemory: { ...mine(0, false), level: 'error' } }), 'ok');
  });
  it('is left out of the text before anything wrote it; the tooltip says where it will be', () => {
    const none = { ...usage(1843, 410), userMemory: mine(0, false) };
    assert.equal(statusText(none), 'MEMORY 1.8/2 KB · USER 0.4/1.5 KB');
    assert.equal(
      userMemoryLine(none.userMemory),
      `Your user memory (\`${PATH}\`, read in every workspace): none yet; "Metis: Open User Memory" starts it`,
    );
    assert.match(statusTooltip('proj', none), /- Your user memory \(`\/home\/ada\/\.config\/metis-memory\/USER\.md`/);
  });
  it('names its real path in the tooltip line, with its bytes against its caps', () => {
    assert.equal(
      userMemoryLine(mine(312)),
      `Your user memory (\`${PATH}\`, read in every workspace): 312 B — 20% of the 1,536 B soft cap ` +
        '(the size to aim for), 10% of the 3,072 B hard cap (writes past it are refused); within budget',
    );
    assert.ok(statusTooltip('proj', { ...usage(1, 1), userMemory: mine(312) }).includes(userMemoryLine(mine(312))));
    // A server from before the user memory sends no part: the tooltip is as it was.
    assert.ok(!statusTooltip('proj', usage(1, 1)).includes('user memory'));
  });
  it('shows an unreadable user memory as such, with the server’s reason', () => {
    const reason = 'the folder is not yours alone';
    const broken = { ...mine(0), error: reason, level: 'error' as const, state: `cannot be read — ${reason}` };
    assert.equal(
      statusText({ ...usage(1, 1), userMemory: broken }),
      'MEMORY 0.1/2 KB · USER 0.1/1.5 KB · $(error) $(account) unreadable',
    );
    assert.match(userMemoryLine(broken), /read in every workspace\): cannot be read — the folder is not yours alone$/);
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

describe('fileList', () => {
  it('names each folder once, in the order the files come', () => {
    const cline = [
      '.clinerules/hooks/TaskStart',
      '.clinerules/hooks/TaskResume',
      '.clinerules/hooks/UserPromptSubmit',
      '.cline/plugins/metis-memory.js',
    ];
    assert.equal(
      fileList(cline),
      '.clinerules/hooks/{TaskStart, TaskResume, UserPromptSubmit}, .cline/plugins/metis-memory.js',
    );
    assert.equal(
      fileList(['.opencode/plugins/metis-memory.js', 'opencode.json']),
      '.opencode/plugins/metis-memory.js, opencode.json',
    );
    assert.equal(
      fileList(['.codex/hooks.json', '.mcp.json', '.codex/config.toml']),
      '.codex/{hooks.json, config.toml}, .mcp.json',
    );
    assert.equal(fileList(['opencode.json', '.mcp.json']), 'opencode.json, .mcp.json');
    assert.equal(fileList([]), '');
  });
});
