/**
 * Language-model tools for agents hosted in the editor: memory_add, memory_replace and
 * memory_consolidate forward to the server's commands (which validate the input against the
 * spec's schemas); user_memory_add, user_memory_replace and user_memory_consolidate do the same
 * for the user memory (one USER.md read in every workspace: no workspace needed, though the one
 * the agent works in is named, whose review setting covers these writes too); memory_read
 * returns the assembled memory sections. A failure comes back
 * as text the model can act on, not as an exception. Writes get no custom confirmation: they
 * follow VS Code's own tool-approval flow. They go as an agent's (`via`), so the log names the
 * door and, with review on, the server stages them: the model is then told so, with the id.
 */

import * as vscode from 'vscode';
import { toolWorkspace } from '../folders';
import { ServerCommand, USER_MEMORY, type ServerCommandArgs, type StagedAnswer, type WriteResult } from '../protocol';
import { MetisCommandError } from '../server/commandError';
import type { MetisServer } from '../server/server';

const WRITE_TOOLS = {
  memory_add: { command: ServerCommand.memoryAdd, verb: 'Adding an entry to' },
  memory_replace: { command: ServerCommand.memoryReplace, verb: 'Replacing text in' },
  memory_consolidate: { command: ServerCommand.memoryConsolidate, verb: 'Consolidating' },
} as const;

/** The user memory's own three: the same commands, with `file` "user-memory". */
const USER_MEMORY_TOOLS = {
  user_memory_add: { command: ServerCommand.memoryAdd, verb: 'Adding an entry to your user memory' },
  user_memory_replace: { command: ServerCommand.memoryReplace, verb: 'Replacing text in your user memory' },
  user_memory_consolidate: { command: ServerCommand.memoryConsolidate, verb: 'Consolidating your user memory' },
} as const;

export const TOOL_NAMES = [...Object.keys(WRITE_TOOLS), ...Object.keys(USER_MEMORY_TOOLS), 'memory_read'] as const;

function text(value: string): vscode.LanguageModelToolResult {
  return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(value)]);
}

function fileOf(input: unknown): string {
  const file = (input as { file?: unknown } | undefined)?.file;
  return typeof file === 'string' ? file : 'memory';
}

function failure(err: unknown): vscode.LanguageModelToolResult {
  if (err instanceof MetisCommandError) return text(`Error (${err.code}): ${err.message}`);
  return text(`Error: ${err instanceof Error ? err.message : String(err)}`);
}

export function registerTools(server: MetisServer): vscode.Disposable {
  const disposables: vscode.Disposable[] = [];
  for (const [name, spec] of Object.entries(WRITE_TOOLS)) {
    disposables.push(
      vscode.lm.registerTool<object>(name, {
        prepareInvocation: (options) => ({ invocationMessage: `${spec.verb} ${fileOf(options.input)}` }),
        invoke: async (options) => {
          const workspace = toolWorkspace();
          if (typeof workspace === 'string') return text(`Error (no_workspace): ${workspace}`);
          try {
            // The model's input goes as it came: the server validates it against the tool's schema.
            const input = options.input as ServerCommandArgs[typeof spec.command];
            const result: WriteResult | StagedAnswer = await server.command(spec.command, {
              ...input,
              workspace: workspace.target,
              via: 'languageModelTool',
            });
            // The spec's line, then the file as it now is; or, staged for the user's review,
            // that it is and its id (both composed by the server).
            return text(result.agent_text);
          } catch (err) {
            return failure(err);
          }
        },
      }),
    );
  }
  for (const [name, spec] of Object.entries(USER_MEMORY_TOOLS)) {
    disposables.push(
      vscode.lm.registerTool<object>(name, {
        prepareInvocation: () => ({ invocationMessage: spec.verb }),
        invoke: async (options) => {
          // The folder the agent works in, when it can be told: its review setting covers
          // what the agent writes to the user memory too (with several folders and none
          // active, the server holds the write if any of them reviews).
          const workspace = toolWorkspace();
          try {
            // The model's input as it came, and the file: the server validates the rest.
            const input = { ...options.input, file: USER_MEMORY } as ServerCommandArgs[typeof spec.command];
            const result: WriteResult | StagedAnswer = await server.command(spec.command, {
              ...input,
              ...(typeof workspace === 'string' ? {} : { workspace: workspace.target }),
              via: 'languageModelTool',
            });
            return text(result.agent_text);
          } catch (err) {
            return failure(err);
          }
        },
      }),
    );
  }
  disposables.push(
    vscode.lm.registerTool<object>('memory_read', {
      prepareInvocation: () => ({ invocationMessage: 'Reading workspace memory' }),
      invoke: async () => {
        const workspace = toolWorkspace();
        if (typeof workspace === 'string') return text(`Error (no_workspace): ${workspace}`);
        try {
          // The server's answer, the same JSON as the MCP server's memory_read.
          const read = await server.command(ServerCommand.read, { workspace: workspace.target });
          return text(JSON.stringify(read, null, 2));
        } catch (err) {
          return failure(err);
        }
      },
    }),
  );
  return vscode.Disposable.from(...disposables);
}
