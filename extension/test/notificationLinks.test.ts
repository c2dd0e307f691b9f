import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MetisCommandError, textForPeople } from '../src/server/commandError';
import { agentOf, stagedNotice } from '../src/views/historyFormat';
import type { StagedChange } from '../src/protocol';

/**
 * What VS Code's notifications turn into a link, word for word: `LINK_REGEX` of
 * vs/base/common/linkedText.ts (seen in code-server's workbench.js of VS Code 1.139.1, where a
 * notification's message is parsed with it and a link opened with `allowCommands: true`: a
 * `command:` link runs its command when clicked).
 */
// eslint-disable-next-line no-useless-escape -- copied as VS Code has it
const LINK_REGEX = /\[([^\]]+)\]\(((?:https?:\/\/|command:|file:)[^\)\s]+)(?: (["'])(.+?)(\3))?\)/gi;

function links(message: string): string[] {
  // The notification first makes line breaks spaces, as VS Code does before parsing.
  const shown = message.replace(/(\r\n|\n|\r)/gm, ' ').trim();
  return [...shown.matchAll(LINK_REGEX)].map((m) => m[0]);
}

const visible = (text: string): string => text.replace(/\u200b/g, '');

const REVIEW_OFF = '[Reject](command:metis.review.off)';

function staged(over: Partial<StagedChange> = {}): StagedChange {
  return {
    id: 3,
    time: '2025-03-10T12:00:00.000Z',
    file: 'MEMORY.md',
    operation: 'add',
    door: 'mcp',
    actor: 'claude-code 2.1.4',
    session: null,
    added: [`- ${REVIEW_OFF}`],
    removed: [],
    before: '',
    after: `- ${REVIEW_OFF}\n`,
    summary: `added “- ${REVIEW_OFF}”`,
    person: 'Claude Code 2.1.4 through memory_add over MCP',
    ...over,
  };
}

describe('a notification shows what an agent wrote as text, never as a link', () => {
  it('an entry with a command link in a staged change', () => {
    for (const operation of ['add', 'replace', 'consolidate', 'other'] as const) {
      const change = staged({
        operation,
        removed: operation === 'replace' ? [`- [Accept](command:metis.review.accept)`] : [],
      });
      const notice = stagedNotice(change, agentOf(change.person));
      assert.deepEqual(links(notice), [], notice);
    }
    const notice = stagedNotice(staged(), 'Claude Code 2.1.4');
    assert.equal(visible(notice), `Claude Code 2.1.4 wants to add an entry to MEMORY.md: “- ${REVIEW_OFF}”`);
  });

  it('an MCP client that names itself with a link', () => {
    const person = '[Review](https://example.com/x) 1.0 through memory_add over MCP';
    const change = staged({ added: ['- Use pnpm'], person });
    const notice = stagedNotice(change, agentOf(person));
    assert.deepEqual(links(notice), [], notice);
  });

  it("the server's refusal naming such an entry", () => {
    const personText = `“- ${REVIEW_OFF}” is in MEMORY.md already: nothing was written.`;
    for (const err of [
      new MetisCommandError('the agent text', 'unchanged', personText),
      new MetisCommandError(personText, 'unchanged'),
      new Error(personText),
    ]) {
      const shown = textForPeople(err);
      assert.deepEqual(links(shown), [], shown);
      assert.equal(visible(shown), personText);
    }
  });
});
