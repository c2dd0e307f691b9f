/**
 * The slice of VS Code's MCP server definition API (stable since VS Code 1.101) that this
 * extension uses, declared here because it supports VS Code 1.95+ (engines and @types/vscode
 * stay at 1.95). Nothing here is trusted at compile time: `mcpApi` checks at run time that the
 * running VS Code has the API and returns undefined when it does not.
 */

import type * as vscode from 'vscode';

/** `vscode.McpStdioServerDefinition`: a server VS Code starts as a child process over stdio. */
export interface McpStdioServerDefinition {
  readonly label: string;
  command: string;
  args: string[];
  env: Record<string, string | number | null>;
  version?: string;
  cwd?: vscode.Uri;
}

/** Its constructor takes positional arguments (not an options object). */
export type McpStdioServerDefinitionConstructor = new (
  label: string,
  command: string,
  args?: string[],
  env?: Record<string, string | number | null>,
  version?: string,
) => McpStdioServerDefinition;

export interface McpServerDefinitionProvider {
  /** VS Code asks again for the definitions when this fires. */
  readonly onDidChangeMcpServerDefinitions?: vscode.Event<void>;
  provideMcpServerDefinitions(token: vscode.CancellationToken): vscode.ProviderResult<McpStdioServerDefinition[]>;
}

export interface McpApi {
  /** `vscode.lm.registerMcpServerDefinitionProvider`; `id` must be in contributes.mcpServerDefinitionProviders. */
  registerMcpServerDefinitionProvider(id: string, provider: McpServerDefinitionProvider): vscode.Disposable;
  McpStdioServerDefinition: McpStdioServerDefinitionConstructor;
}

/** The MCP API of the running VS Code (`vscode` is the module itself), or undefined before 1.101. */
export function mcpApi(host: typeof vscode): McpApi | undefined {
  const lm = host.lm as unknown as Record<string, unknown> | undefined;
  const register = lm?.registerMcpServerDefinitionProvider;
  const ctor = (host as unknown as Record<string, unknown>).McpStdioServerDefinition;
  if (typeof register !== 'function' || typeof ctor !== 'function') return undefined;
  return {
    registerMcpServerDefinitionProvider: (id, provider) =>
      (register as McpApi['registerMcpServerDefinitionProvider']).call(lm, id, provider),
    McpStdioServerDefinition: ctor as McpStdioServerDefinitionConstructor,
  };
}
