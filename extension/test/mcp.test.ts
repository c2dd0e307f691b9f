// The MCP server definitions the extension offers VS Code: their shape, and the feature
// detection that keeps VS Code 1.95-1.100 (no MCP API) working without them.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import type * as vscode from 'vscode';
import { mcpApi } from '../src/agents/mcpApi';
import { MCP_PROVIDER_ID, mcpServerSpecs } from '../src/agents/mcpDefinition';

const root = path.resolve(__dirname, '..', '..');
const LAUNCHER = '/ext/dist/bundled/tool/server.py';

describe('mcpServerSpecs', () => {
  it('gives each folder the interpreter, the launcher in MCP mode and the folder', () => {
    const specs = mcpServerSpecs(
      [
        { name: 'api', fsPath: '/src/api' },
        { name: 'web app', fsPath: '/src/web app' },
      ],
      '/usr/bin/python3.12',
      LAUNCHER,
      '0.1.0',
    );
    assert.deepEqual(specs, [
      {
        label: 'Metis Memory (api)',
        command: '/usr/bin/python3.12',
        args: [LAUNCHER, 'mcp', '/src/api'],
        env: { PYTHONNOUSERSITE: '1', PYTHONUNBUFFERED: '1' },
        cwd: '/src/api',
        version: '0.1.0',
      },
      {
        label: 'Metis Memory (web app)',
        command: '/usr/bin/python3.12',
        args: [LAUNCHER, 'mcp', '/src/web app'],
        env: { PYTHONNOUSERSITE: '1', PYTHONUNBUFFERED: '1' },
        cwd: '/src/web app',
        version: '0.1.0',
      },
    ]);
  });

  it('tells folders with the same name apart by their paths (labels are unique)', () => {
    const specs = mcpServerSpecs(
      [
        { name: 'api', fsPath: '/a/api' },
        { name: 'api', fsPath: '/b/api' },
        { name: 'docs', fsPath: '/docs' },
      ],
      'python3',
      LAUNCHER,
      '1.0.0',
    );
    assert.deepEqual(
      specs.map((s) => s.label),
      ['Metis Memory (api, /a/api)', 'Metis Memory (api, /b/api)', 'Metis Memory (docs)'],
    );
  });

  it('offers nothing without a folder', () => {
    assert.deepEqual(mcpServerSpecs([], 'python3', LAUNCHER, '1.0.0'), []);
  });
});

describe('mcpApi (feature detection)', () => {
  it('is undefined on a VS Code without the MCP API (1.95-1.100)', () => {
    assert.equal(mcpApi({ lm: { registerTool: () => undefined } } as unknown as typeof vscode), undefined);
    // The function without the definition class (or the other way round) is not enough.
    assert.equal(
      mcpApi({ lm: { registerMcpServerDefinitionProvider: () => undefined } } as unknown as typeof vscode),
      undefined,
    );
    assert.equal(mcpApi({ lm: {}, McpStdioServerDefinition: class {} } as unknown as typeof vscode), undefined);
  });

  it('calls vscode.lm.registerMcpServerDefinitionProvider as a method of vscode.lm', () => {
    const calls: unknown[][] = [];
    const lm = {
      registerMcpServerDefinitionProvider(this: unknown, id: string, provider: unknown) {
        calls.push([this, id, provider]);
        return { dispose: () => undefined };
      },
    };
    const api = mcpApi({ lm, McpStdioServerDefinition: class {} } as unknown as typeof vscode);
    assert.ok(api);
    const provider = { provideMcpServerDefinitions: () => [] };
    api.registerMcpServerDefinitionProvider(MCP_PROVIDER_ID, provider);
    assert.deepEqual(calls, [[lm, MCP_PROVIDER_ID, provider]]);
  });

  it('registers under the id package.json contributes', () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as {
      contributes: { mcpServerDefinitionProviders?: { id: string; label: string }[] };
    };
    assert.deepEqual(manifest.contributes.mcpServerDefinitionProviders, [
      { id: MCP_PROVIDER_ID, label: 'Metis Memory' },
    ]);
  });
});
