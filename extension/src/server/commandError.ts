import { inertLinks } from '../plainText';

/** A server command failed: `message` is the user-visible text (the tools' own, for an
 * agent), `code` the machine one (the server's tool error code, `server_unavailable`, or
 * `rpc_<code>`), `personText` the server's words for a person when they differ (commands and
 * buttons, no tool names or schemas). */
export class MetisCommandError extends Error {
  constructor(
    message: string,
    readonly code: string,
    readonly personText?: string,
  ) {
    super(message);
    this.name = 'MetisCommandError';
  }
}

/** What a person is shown for a failure: the server's words for them, when it sent any (an
 * entry it quotes never a link: `inertLinks`). */
export function textForPeople(err: unknown): string {
  if (err instanceof MetisCommandError) return inertLinks(err.personText ?? err.message);
  return inertLinks(err instanceof Error ? err.message : String(err));
}
