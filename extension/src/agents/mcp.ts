/**
 * Offers `metis-memory mcp` to VS Code's own MCP support, one server per workspace folder, so
 * agents that speak MCP inside the editor share the same memory (and the same store lock) as
 * the language server. Only where the running VS Code has the API (1.101+); before that, nothing.
 */

import * as vscode from 'vscode';
import { metisDir } from '../folders';
import { mcpApi, type McpStdioServerDefinition } from './mcpApi';
import { MCP_PROVIDER_ID, mcpServerSpecs, type McpServerSpec } from './mcpDefinition';
import type { MetisServer } from '../server/server';

/**
 * The specs for every local workspace folder, with the interpreter the language server uses;
 * empty when no folder is open or no interpreter is found.
 */
export async function currentMcpServerSpecs(
  server: MetisServer,
  version: string,
): Promise<{ folder: vscode.WorkspaceFolder; spec: McpServerSpec }[]> {
  const folders = (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file');
  if (folders.length === 0) return [];
  const interp = await server.interpreter.inUse();
  if (!interp) return [];
  const specs = mcpServerSpecs(
    folders.map((f) => ({ name: f.name, fsPath: memoryRootOf(f.uri).fsPath })),
    interp.path,
    server.launcher,
    version,
  );
  return specs.flatMap((spec, i) => {
    const folder = folders[i];
    return folder ? [{ folder, spec }] : [];
  });
}

/** The directory the MCP server runs on: the one holding the folder's `.metis/` (a window
 * opened on `.metis/` means its parent). */
function memoryRootOf(folder: vscode.Uri): vscode.Uri {
  return vscode.Uri.joinPath(metisDir(folder), '..');
}

export function registerMcpServerProvider(server: MetisServer, version: string): vscode.Disposable {
  const api = mcpApi(vscode);
  if (!api) {
    server.log.info(
      `VS Code ${vscode.version} has no MCP server definition API (1.101+): the MCP server is not offered`,
    );
    return new vscode.Disposable(() => undefined);
  }
  const changed = new vscode.EventEmitter<void>();
  const provider = {
    onDidChangeMcpServerDefinitions: changed.event,
    provideMcpServerDefinitions: async (): Promise<McpStdioServerDefinition[]> => {
      const specs = await currentMcpServerSpecs(server, version);
      return specs.map(({ folder, spec }) => {
        const definition = new api.McpStdioServerDefinition(
          spec.label,
          spec.command,
          spec.args,
          spec.env,
          spec.version,
        );
        definition.cwd = memoryRootOf(folder.uri);
        return definition;
      });
    },
  };
  return vscode.Disposable.from(
    changed,
    api.registerMcpServerDefinitionProvider(MCP_PROVIDER_ID, provider),
    vscode.workspace.onDidChangeWorkspaceFolders(() => {
      changed.fire();
    }),
    server.interpreter.onDidChange((interp) => {
      server.log.info(
        `MCP server definitions: ${interp ? `run by ${interp.path}` : 'none (no Python interpreter found)'}`,
      );
      changed.fire();
    }),
  );
}
