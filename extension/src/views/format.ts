/**
 * Text the status bar and messages show. Pure functions (no `vscode` import) so they are
 * unit-tested without an editor. Sizes are UTF-8 bytes; "KB" is 1,024 bytes, as the caps are.
 * Whether a size is within its caps is the server's call (`level`, `state`): only shown here.
 */

import type { FileUsage, Usage, UsageLevel, UserMemoryUsage } from '../protocol';

/** 2311 -> "2,311 B": the same grouping the server's messages use, whatever the locale. */
export function formatBytes(bytes: number): string {
  const sign = bytes < 0 ? '-' : '';
  const digits = String(Math.trunc(Math.abs(bytes)));
  return `${sign}${digits.replace(/\B(?=(\d{3})+(?!\d))/g, ',')} B`;
}

function tenths(bytes: number): number {
  return Math.round((bytes / 1024) * 10);
}

function showTenths(t: number): string {
  return t % 10 === 0 ? String(t / 10) : (t / 10).toFixed(1);
}

/**
 * A size in KB against its cap, with one decimal at most: (1843, 2048) -> "1.8/2 KB".
 * Rounding never hides a state: a non-empty file never shows 0, and a file over its cap
 * never shows a number equal to the cap.
 */
export function formatUsage(size: number, cap: number): string {
  const capT = tenths(cap);
  let t = tenths(size);
  if (size > 0 && t === 0) t = 1;
  if (size > cap && t <= capT) t = capT + 1;
  if (size <= cap && t > capT) t = capT;
  return `${showTenths(t)}/${showTenths(capT)} KB`;
}

const LEVELS: readonly UsageLevel[] = ['ok', 'warning', 'error'];

/** The worst of the files' levels (the server's), the user memory's too once it is there: for
 * the one status bar item. */
export function worstLevel(usage: Usage): UsageLevel {
  const levels = [usage['MEMORY.md'].level, usage['USER.md'].level];
  if (usage.userMemory?.exists) levels.push(usage.userMemory.level);
  return levels.reduce((a, b) => (LEVELS.indexOf(a) >= LEVELS.indexOf(b) ? a : b));
}

/**
 * The cap a file's figure is shown against, the one its icon and colour are about: the hard cap
 * once the file is over it (writes are refused: `4.3/4 KB`), else the soft cap, the budget to
 * aim for (`1.8/2 KB` within it, `2.5/2 KB` over it). Whether it is over is the server's call.
 */
export function shownCap(u: FileUsage): { cap: number; kind: 'soft' | 'hard' } {
  return u.over_hard_cap ? { cap: u.hard_cap, kind: 'hard' } : { cap: u.soft_cap, kind: 'soft' };
}

const ICONS: Record<UsageLevel, string> = { ok: '', warning: '$(warning) ', error: '$(error) ' };

/** The user memory's mark in the status bar (a person): its figure follows it. */
export const USER_MEMORY_ICON = '$(account)';

/**
 * `MEMORY 1.8/2 KB · $(warning) USER 1.6/1.5 KB · $(account) 0.3/1.5 KB`: each file against the
 * cap its state is about (`shownCap`), with its own icon in front, so that the icon sits by the
 * file it is about; the user memory last, once it is there (a user memory not written yet is
 * named in the tooltip only).
 */
export function statusText(usage: Usage): string {
  const part = (label: string, u: FileUsage): string => {
    if (u.error !== undefined) return `${ICONS[u.level]}${label} unreadable`;
    return `${ICONS[u.level]}${label} ${formatUsage(u.size_bytes, shownCap(u).cap)}`;
  };
  const parts = [part('MEMORY', usage['MEMORY.md']), part('USER', usage['USER.md'])];
  if (usage.userMemory?.exists) parts.push(part(USER_MEMORY_ICON, usage.userMemory));
  return parts.join(' · ');
}

/** What a screen reader says for `statusText`: the icons dropped, the user memory named. */
export function statusLabel(usage: Usage): string {
  return statusText(usage)
    .replace(`${USER_MEMORY_ICON} `, 'your user memory ')
    .replace(/\$\([a-z-]+\) /g, '');
}

export function percent(size: number, cap: number): string {
  if (cap <= 0) return '—';
  return `${Math.round((size / cap) * 100)}%`;
}

/**
 * One tooltip line: the bytes, each cap with what it means and the share of it used, the cap
 * the status bar's figure is against first, and the server's word on the state.
 */
export function usageLine(file: string, u: FileUsage): string {
  if (u.error !== undefined) return `${file}: ${u.state}`;
  const source = u.source === 'buffer' ? ' (as in the open editor)' : '';
  const soft = `${percent(u.size_bytes, u.soft_cap)} of the ${formatBytes(u.soft_cap)} soft cap (the size to aim for)`;
  const hard = `${percent(u.size_bytes, u.hard_cap)} of the ${formatBytes(u.hard_cap)} hard cap (writes past it are refused)`;
  const caps = shownCap(u).kind === 'hard' ? `${hard}, ${soft}` : `${soft}, ${hard}`;
  return `${file}: ${formatBytes(u.size_bytes)}${source} — ${caps}; ${u.state}`;
}

/**
 * The user memory's tooltip line: its usage and its real path (Markdown code, so that no
 * character of a path is taken for markup), or, before anything wrote it, where it will be.
 */
export function userMemoryLine(u: UserMemoryUsage): string {
  const where = `\`${u.path.replace(/`/g, "'")}\``;
  if (!u.exists) {
    return `Your user memory (${where}, read in every workspace): none yet; "Metis: Open User Memory" starts it`;
  }
  return usageLine(`Your user memory (${where}, read in every workspace)`, u);
}

export function statusTooltip(folderName: string, usage: Usage): string {
  return [
    `**Metis Memory** — ${folderName}`,
    '',
    `- ${usageLine('MEMORY.md', usage['MEMORY.md'])}`,
    `- ${usageLine('USER.md', usage['USER.md'])}`,
    ...(usage.userMemory ? [`- ${userMemoryLine(usage.userMemory)}`] : []),
    '',
    'The status bar shows each file against its soft cap, or against its hard cap once over it.',
    '',
    'Click for memory actions.',
  ].join('\n');
}

/** UTF-8 length without Buffer (works in any JS host). */
export function utf8Length(text: string): number {
  return new TextEncoder().encode(text).length;
}

/** Models often wrap output in ``` fences despite instructions: keep what is inside. */
export function stripFences(text: string): string {
  const m = /^\s*```[a-z]*\r?\n([\s\S]*?)\r?\n```\s*$/i.exec(text);
  return `${(m?.[1] ?? text).trim()}\n`;
}

/** "▰▰▰▰▰▰▱▱▱▱" for 60 %: ten cells, all full from 95 %. */
export function bar(percent: number): string {
  const full = Math.max(0, Math.min(10, Math.round(percent / 10)));
  return '▰'.repeat(full) + '▱'.repeat(10 - full);
}

/**
 * A host's files on one line, each folder named once, in the order given:
 * `.clinerules/hooks/{TaskStart, TaskResume}, .cline/plugins/metis-memory.js` (a picker row
 * cuts a long line short, and the last file is often the one that matters). Files at the
 * top of the folder are named as they are.
 */
export function fileList(files: readonly string[]): string {
  const folders = new Map<string, string[]>();
  for (const file of files) {
    const cut = file.lastIndexOf('/') + 1;
    const names = folders.get(file.slice(0, cut)) ?? [];
    folders.set(file.slice(0, cut), [...names, file.slice(cut)]);
  }
  const shown = [...folders].map(([folder, names]) =>
    folder && names.length > 1 ? `${folder}{${names.join(', ')}}` : names.map((n) => folder + n).join(', '),
  );
  return shown.join(', ');
}
