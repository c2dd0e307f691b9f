/**
 * Text the Memory History view and the review inbox show. Pure functions (no `vscode` import)
 * so they are unit-tested without an editor. What a write did, who made it and whether it can
 * be undone are the server's: `summary`, `person`, its refusals. Here only their layout: a
 * time relative to now, the words of a notification, the status bar's count.
 */

import { inertLinks } from '../plainText';
import type { ArchivedEntry, HistoryRecord, StagedChange } from '../protocol';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/**
 * "just now", "2 min ago", "3 hours ago", "yesterday", "5 days ago", then the date
 * ("on 2025-03-04"). A time in the future (another machine's clock) is "just now"; a time the
 * server sent that does not parse is shown as sent.
 */
export function relativeTime(iso: string, now: number): string {
  const then = Date.parse(iso);
  if (Number.isNaN(then)) return iso;
  const ago = now - then;
  if (ago < 45_000) return 'just now';
  if (ago < HOUR) {
    const minutes = Math.max(1, Math.round(ago / MINUTE));
    return minutes >= 60 ? '1 hour ago' : `${minutes} min ago`;
  }
  if (ago < DAY) {
    const hours = Math.round(ago / HOUR);
    if (hours >= 24) return 'yesterday';
    return hours === 1 ? '1 hour ago' : `${hours} hours ago`;
  }
  const days = Math.floor(ago / DAY);
  if (days === 1) return 'yesterday';
  if (days < 30) return `${days} days ago`;
  return `on ${new Date(then).toISOString().slice(0, 10)}`;
}

/** The record's time as a person reads it in a tooltip: "2025-03-04 14:05:09 UTC". */
export function absoluteTime(iso: string): string {
  const then = Date.parse(iso);
  if (Number.isNaN(then)) return iso;
  return `${new Date(then).toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

/** A tree item's line beside its summary: "2 min ago · Claude Code 2.1.4" (who, short enough
 * to be seen in a side bar; how it came, "through memory_add over MCP", is in the tooltip). */
export function recordDescription(record: HistoryRecord, now: number): string {
  return `${relativeTime(record.time, now)} · ${agentOf(record.person)}`;
}

const graphemes = new Intl.Segmenter('en', { granularity: 'grapheme' });

/** One entry as a short quote: its first line, at most `max` characters (never half of one). */
export function quote(text: string, max = 60): string {
  const line = text.trim().split(/\r?\n/)[0] ?? '';
  const chars = Array.from(graphemes.segment(line), (s) => s.segment);
  return `“${chars.length > max ? `${chars.slice(0, max - 1).join('')}…` : line}”`;
}

function entries(list: readonly string[], sign: string): string[] {
  return list.map((e) => `    ${sign} ${e.trim().split(/\r?\n/)[0] ?? ''}`);
}

/** The Markdown-free tooltip of a record: what, who, when, the sizes and the entries (`file`:
 * how the file is named, "your user memory" for the user memory's USER.md). */
export function recordTooltip(record: HistoryRecord, file: string = record.file): string {
  const size = `${record.before_size_bytes.toLocaleString('en-US')} B → ${record.after_size_bytes.toLocaleString('en-US')} B`;
  const lines = [
    `${file.charAt(0).toUpperCase()}${file.slice(1)} #${record.id}: ${record.summary}`,
    `${record.person}, ${absoluteTime(record.time)}`,
    ...(record.detail ? [record.detail] : []),
    size,
  ];
  if (record.added.length) lines.push('Added:', ...entries(record.added, '+'));
  if (record.removed.length) lines.push('Removed:', ...entries(record.removed, '−'));
  lines.push('', 'Select it to see the change; Undo This Change or Restore This Version from its menu.');
  return lines.join('\n');
}

/** An archived entry's line: "3 days ago · removed by consolidate (#12)". */
export function archivedDescription(entry: ArchivedEntry, now: number): string {
  return `${entry.file} · ${relativeTime(entry.time, now)} · removed by ${entry.operation} (#${entry.record})`;
}

function plural(n: number, one: string, many: string): string {
  return n === 1 ? one : `${n} ${many}`;
}

/**
 * Who asks, from the server's `person` ("Claude Code 2.1.4 through memory_add over MCP"): the
 * part before "through" (the server names the agent; how it came is in the tooltip and diff).
 */
export function agentOf(person: string): string {
  const cut = person.indexOf(' through ');
  return cut > 0 ? person.slice(0, cut) : person;
}

/**
 * The agent that asks for a staged change, from the server's `person`: "Claude Code" of
 * "Claude Code through memory_add over MCP" and of "Claude Code with metis-memory add --user"
 * (its shell ran the command); how it came is in the diff and the tooltip.
 */
export function stagedAgent(person: string): string {
  const cut = [' through ', ' with metis-memory '].map((s) => person.indexOf(s)).filter((i) => i > 0);
  return cut.length > 0 ? person.slice(0, Math.min(...cut)) : person;
}

/**
 * The notification for a change an agent asks to make: "Claude Code 2.1.4 wants to add an
 * entry to MEMORY.md: “Use pnpm…”". `who` is the server's name for the agent; `file` how the
 * file is named ("your user memory" for the user memory's USER.md). What the agent wrote, and
 * the name it gave, are never a link there (`inertLinks`).
 */
export function stagedNotice(change: StagedChange, who: string, file: string = change.file): string {
  return inertLinks(noticeText(change, who, file));
}

function noticeText(change: StagedChange, who: string, file: string): string {
  const { added, removed } = change;
  switch (change.operation) {
    case 'add':
      return added.length === 1 && added[0] !== undefined
        ? `${who} wants to add an entry to ${file}: ${quote(added[0])}`
        : `${who} wants to add ${plural(added.length, 'an entry', 'entries')} to ${file}.`;
    case 'replace':
      if (added.length === 1 && removed.length === 1 && added[0] !== undefined && removed[0] !== undefined) {
        return `${who} wants to change an entry of ${file}: ${quote(removed[0], 40)} → ${quote(added[0], 40)}`;
      }
      if (added.length === 0 && removed.length === 1 && removed[0] !== undefined) {
        return `${who} wants to remove an entry from ${file}: ${quote(removed[0])}`;
      }
      return `${who} wants to change ${file}: ${change.summary}`;
    case 'consolidate':
      return (
        `${who} wants to rewrite ${file}: ${plural(removed.length, 'one entry', 'entries')} removed, ` +
        `${plural(added.length, 'one', 'entries')} added.`
      );
    default:
      return `${who} wants to change ${file}: ${change.summary}`;
  }
}

/** The status bar's item while changes wait: "$(inbox) 2 to review". */
export function reviewCountText(count: number): string {
  return `$(inbox) ${count} to review`;
}

/** Which side of a write a virtual document shows. */
export type Side = 'before' | 'after';

/** Where a record's (or a staged change's) side lives in its virtual scheme: `/12/before/MEMORY.md`.
 * The file name comes last so the editor takes its language (Markdown) and tab title from it. */
export function sidePath(id: number, side: Side, file: string): string {
  return `/${id}/${side}/${file}`;
}

export function parseSidePath(path: string): { id: number; side: Side; file: string } | undefined {
  const m = /^\/(\d{1,15})\/(before|after)\/([^/]+)$/.exec(path);
  if (!m?.[1] || !m[3]) return undefined;
  return { id: Number(m[1]), side: m[2] === 'before' ? 'before' : 'after', file: m[3] };
}
