/**
 * Text the status bar and messages show. Pure functions (no `vscode` import) so they are
 * unit-tested without an editor. Sizes are UTF-8 bytes; "KB" is 1,024 bytes, as the caps are.
 * Whether a size is within its caps is the server's call (`level`, `state`): only shown here.
 */

import type { FileUsage, MemoryFileName, Usage, UsageLevel } from '../protocol';

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

/** The worse of the two files' levels (the server's), for the one status bar item. */
export function worstLevel(usage: Usage): UsageLevel {
  const a = usage['MEMORY.md'].level;
  const b = usage['USER.md'].level;
  return LEVELS.indexOf(a) >= LEVELS.indexOf(b) ? a : b;
}

/** `MEMORY 1.8/2 KB · USER 0.4/1.5 KB`, each against its soft cap (the budget to aim for). */
export function statusText(usage: Usage): string {
  const part = (label: string, u: FileUsage): string =>
    u.error !== undefined ? `${label} unreadable` : `${label} ${formatUsage(u.size_bytes, u.soft_cap)}`;
  const icon = { ok: '', warning: '$(warning) ', error: '$(error) ' }[worstLevel(usage)];
  return `${icon}${part('MEMORY', usage['MEMORY.md'])} · ${part('USER', usage['USER.md'])}`;
}

export function percent(size: number, cap: number): string {
  if (cap <= 0) return '—';
  return `${Math.round((size / cap) * 100)}%`;
}

/** One tooltip line: bytes and percentages of both caps, and the server's word on the state. */
export function usageLine(file: MemoryFileName, u: FileUsage): string {
  if (u.error !== undefined) return `${file}: ${u.state}`;
  const source = u.source === 'buffer' ? ' (as in the open editor)' : '';
  return (
    `${file}: ${formatBytes(u.size_bytes)}${source} — ${percent(u.size_bytes, u.soft_cap)} of the ` +
    `${formatBytes(u.soft_cap)} soft cap, ${percent(u.size_bytes, u.hard_cap)} of the ` +
    `${formatBytes(u.hard_cap)} hard cap; ${u.state}`
  );
}

export function statusTooltip(folderName: string, usage: Usage): string {
  return [
    `**Metis Memory** — ${folderName}`,
    '',
    `- ${usageLine('MEMORY.md', usage['MEMORY.md'])}`,
    `- ${usageLine('USER.md', usage['USER.md'])}`,
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
