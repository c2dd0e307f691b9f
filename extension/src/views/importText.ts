/**
 * What an import of agent hosts' memory says, for people: the hosts' titles, the offer's
 * button, the one message an import ends with. Pure functions (no `vscode` import), so they are
 * unit-tested without an editor; importMemory.ts shows them.
 */

import { USER_MEMORY, type ImportProposal, type ImportTarget } from '../protocol';

/**
 * Each host's title, by the name the server answers with (`hosts/imports/registry.py`'s, where
 * each reader module has its `TITLE`): the server's answers name hosts only. A unit test holds
 * this equal to the registry.
 */
export const HOST_TITLES: Readonly<Record<string, string>> = {
  claude: 'Claude Code',
  codex: 'Codex',
  gemini: 'Gemini CLI',
  qwen: 'Qwen Code',
  copilot: 'GitHub Copilot',
};

export function hostTitle(host: string): string {
  return HOST_TITLES[host] ?? host;
}

/** "Claude Code", "Claude Code and Codex", "Claude Code, Codex and Gemini CLI". */
export function hostList(hosts: readonly string[]): string {
  const names = hosts.map(hostTitle);
  if (names.length <= 1) return names.join('');
  return `${names.slice(0, -1).join(', ')} and ${names[names.length - 1] ?? ''}`;
}

/** The offer's button: "Bring in what Claude Code remembers…" ("…Claude Code and Codex remember…"). */
export function bringInLabel(hosts: readonly string[]): string {
  return `Bring in what ${hostList(hosts)} ${hosts.length === 1 ? 'remembers' : 'remember'}…`;
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** How a target is named in a message: "MEMORY.md", "your user memory". */
export function targetName(t: ImportTarget): string {
  return t.target === USER_MEMORY ? 'your user memory' : t.target;
}

/**
 * The one message an import ends with: what each file's proposal brings in, what was left out
 * as already there and what was refused as a secret (by rule and place, never its text), and a
 * file over its hard cap, in the server's words.
 */
export function importSummary(proposal: ImportProposal): string {
  const who = hostList(proposal.hosts);
  const added = proposal.targets.filter((t) => t.added.length > 0 && t.problem === null);
  const duplicates = proposal.targets.reduce((n, t) => n + t.duplicates.length, 0);
  const refused = proposal.targets.flatMap((t) => t.refused);
  const parts: string[] = [];
  if (added.length === 0) {
    parts.push(
      duplicates > 0
        ? `Nothing new to bring in from ${who}: ${plural(duplicates, 'entry', 'entries')} ${duplicates === 1 ? 'is' : 'are'} already in your memory.`
        : `Nothing to bring in from ${who}.`,
    );
  } else {
    const into = added.map((t) => `${plural(t.added.length, 'entry', 'entries')} into ${targetName(t)}`);
    parts.push(`From ${who}: ${into.join(', ')}. Review each proposal, then Apply it; nothing is written before.`);
    if (duplicates > 0) parts.push(`${plural(duplicates, 'entry', 'entries')} left out: already there.`);
  }
  if (refused.length > 0) {
    const where = refused.map((r) => `${r.rule} in ${r.source}, line ${r.line}`).join('; ');
    parts.push(
      `${plural(refused.length, 'entry', 'entries')} refused: ${refused.length === 1 ? 'it looks' : 'they look'} like a secret (${where}).`,
    );
  }
  for (const t of proposal.targets) {
    if (t.over_cap_statement) parts.push(t.over_cap_statement);
    if (t.problem) parts.push(`${targetName(t)}: ${t.problem}`);
  }
  return parts.join(' ');
}
