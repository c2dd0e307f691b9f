/**
 * What VS Code's MCP support (and any extension, through the exported API) needs to start
 * `metis-memory mcp` for a workspace folder: the interpreter that runs the language server and
 * the bundled launcher in MCP mode. Pure, so its shape is unit-tested without an editor.
 */

/** The id under `contributes.mcpServerDefinitionProviders` in package.json. */
export const MCP_PROVIDER_ID = 'metis-memory';

/** How to start the MCP server for one folder over stdio. */
export interface McpServerSpec {
  /** "Metis Memory (<folder name>)", unique in the window. */
  label: string;
  /** The Python interpreter the language server uses. */
  command: string;
  /** [<bundled launcher>, "mcp", <folder path>]. */
  args: string[];
  /** Added to the inherited environment. */
  env: Record<string, string>;
  /** The folder's path (the server also gets it as an argument). */
  cwd: string;
  /** The extension's version: VS Code refreshes its cached tool list when it changes. */
  version: string;
}

export interface FolderInfo {
  name: string;
  /** A local path (folders that are not on the local file system get no MCP server). */
  fsPath: string;
}

/** One spec per folder, in folder order. */
export function mcpServerSpecs(
  folders: readonly FolderInfo[],
  python: string,
  launcher: string,
  version: string,
): McpServerSpec[] {
  const count = new Map<string, number>();
  for (const f of folders) count.set(f.name, (count.get(f.name) ?? 0) + 1);
  return folders.map((f) => ({
    // Two folders with the same name (a/api, b/api) are told apart by their paths.
    label: `Metis Memory (${(count.get(f.name) ?? 0) > 1 ? `${f.name}, ${f.fsPath}` : f.name})`,
    command: python,
    args: [launcher, 'mcp', f.fsPath],
    env: { PYTHONNOUSERSITE: '1', PYTHONUNBUFFERED: '1' },
    cwd: f.fsPath,
    version,
  }));
}
