/**
 * The API other extensions get from `vscode.extensions.getExtension('metis.metis-memory')
 * .activate()`: assemble the prompt, read usage, write memory, and hear about writes — so an
 * extension with its own agent can wire memory into it. Versioned: `apiVersion` changes only
 * on incompatible changes.
 */

import * as vscode from 'vscode';
import { activeWorkspace } from './folders';
import { currentMcpServerSpecs } from './agents/mcp';
import type { McpServerSpec } from './agents/mcpDefinition';
import {
  ServerCommand,
  USER_MEMORY,
  type MemoryFileName,
  type MemoryTarget,
  type MemoryUpdatedParams,
  type Usage,
  type WriteResult,
} from './protocol';
import { MetisCommandError } from './server/commandError';
import type { MetisServer } from './server/server';

export type { McpServerSpec } from './agents/mcpDefinition';
export type { FileUsage, MemoryFileName, MemoryTarget, Usage, UserMemoryUsage, WriteResult } from './protocol';

export const API_VERSION = 1 as const;

/** A successful write, by anyone (this editor, an agent's tool call). */
export interface MemoryUpdatedEvent {
  /** The workspace folder; for the user memory (`scope` "user"), the folder holding it. */
  folder: vscode.Uri;
  /** "user": the user memory, one USER.md read in every workspace. */
  scope: 'workspace' | 'user';
  file: MemoryFileName;
  operation: 'add' | 'replace' | 'consolidate';
  beforeHash: string;
  afterHash: string;
  beforeSizeBytes: number;
  afterSizeBytes: number;
}

/**
 * `folder` defaults to the active editor's document (the server finds its workspace), else the
 * only folder; `usage` has the user memory's as `userMemory`. A write's `file` "user-memory" is
 * the user memory (one USER.md read in every workspace; `folder` is then not used). Writes reject with an Error whose `message` is the user-visible text and whose
 * `code` is one of hard_cap_exceeded, not_found, not_unique, invalid_input, unsaved_changes, conflict,
 * secret_detected, server_unavailable.
 */
export interface MetisMemoryApi {
  readonly apiVersion: typeof API_VERSION;
  assemblePrompt(base: string, folder?: vscode.Uri): Promise<string>;
  usage(folder?: vscode.Uri): Promise<Usage>;
  memoryAdd(file: MemoryTarget, entry: string, folder?: vscode.Uri): Promise<WriteResult>;
  memoryReplace(file: MemoryTarget, oldText: string, newText: string, folder?: vscode.Uri): Promise<WriteResult>;
  memoryConsolidate(file: MemoryTarget, content: string, folder?: vscode.Uri): Promise<WriteResult>;
  readonly onDidUpdateMemory: vscode.Event<MemoryUpdatedEvent>;
  /**
   * How to start the MCP server (`metis-memory mcp`) for a workspace folder over stdio: the
   * definition this extension gives VS Code's MCP support (`{label, command, args, env, cwd,
   * version}`; spawn `command` with `args`, `env` added to the inherited environment).
   * Undefined when no Python interpreter is found.
   */
  mcpServerDefinition(folder?: vscode.Uri): Promise<McpServerSpec | undefined>;
}

export function toUpdatedEvent(params: MemoryUpdatedParams, folder: vscode.Uri): MemoryUpdatedEvent {
  return {
    folder,
    scope: params.scope ?? 'workspace',
    file: params.file,
    operation: params.operation,
    beforeHash: params.before_hash,
    afterHash: params.after_hash,
    beforeSizeBytes: params.before_size_bytes,
    afterSizeBytes: params.after_size_bytes,
  };
}

/** The API object, over the running server. */
export function createApi(
  srv: MetisServer,
  updated: vscode.EventEmitter<MemoryUpdatedEvent>,
  version: string,
): MetisMemoryApi {
  // The active editor's document when no folder is given: the server resolves it.
  const folderOrActive = (folder?: vscode.Uri): string => {
    const target = folder?.toString() ?? activeWorkspace()?.target;
    if (!target) throw new MetisCommandError('No workspace folder is open.', 'no_workspace');
    return target;
  };
  // The user memory is no workspace's: none is named (or needed) for it.
  const where = (file: MemoryTarget, folder?: vscode.Uri) =>
    file === USER_MEMORY ? {} : { workspace: folderOrActive(folder) };
  const api: MetisMemoryApi = {
    apiVersion: API_VERSION,
    assemblePrompt: (base, folder) =>
      srv.command(ServerCommand.assemblePrompt, { base, workspace: folderOrActive(folder) }),
    usage: (folder) => srv.command(ServerCommand.usage, { workspace: folderOrActive(folder) }),
    memoryAdd: (file, entry, folder) => srv.command(ServerCommand.memoryAdd, { file, entry, ...where(file, folder) }),
    memoryReplace: (file, oldText, newText, folder) =>
      srv.command(ServerCommand.memoryReplace, { file, old: oldText, new: newText, ...where(file, folder) }),
    memoryConsolidate: (file, content, folder) =>
      srv.command(ServerCommand.memoryConsolidate, { file, content, ...where(file, folder) }),
    onDidUpdateMemory: updated.event,
    mcpServerDefinition: async (folder) => {
      const wanted = (folder ?? activeWorkspace()?.uri)?.toString();
      if (!wanted) throw new MetisCommandError('No workspace folder is open.', 'no_workspace');
      if (!vscode.workspace.workspaceFolders?.some((f) => f.uri.toString() === wanted)) {
        throw new MetisCommandError(`${wanted} is not a workspace folder of this window.`, 'no_workspace');
      }
      const specs = await currentMcpServerSpecs(srv, version);
      return specs.find((s) => s.folder.uri.toString() === wanted)?.spec;
    },
  };
  return api;
}
