// The manifest's language-model tools must advertise exactly what the server enforces: the
// spec's input schemas and the tool layer's descriptions, read from the Python package itself.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { ClientCommand, ServerCommand } from '../src/protocol';

const root = path.resolve(__dirname, '..', '..');
const manifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as {
  engines: { vscode: string };
  main: string;
  activationEvents: string[];
  contributes: {
    languageModelTools: { name: string; modelDescription: string; inputSchema: unknown }[];
    commands: { command: string }[];
  };
  capabilities: { untrustedWorkspaces: { supported: string; restrictedConfigurations: string[] } };
  devDependencies: Record<string, string>;
};
const python = process.env.METIS_PYTHON ?? path.join(root, '.venv', 'bin', 'python');

interface PyTool {
  name: string;
  description: string;
  input_schema: unknown;
}

describe('package.json', () => {
  const tools = new Map(manifest.contributes.languageModelTools.map((t) => [t.name, t]));
  const py = JSON.parse(
    execFileSync(python, [
      '-c',
      'import json; from metis_memory.tools.definitions import MEMORY_TOOL_DEFINITIONS as D, USER_MEMORY_TOOL_DEFINITIONS as U; print(json.dumps([d.to_json() for d in D + U]))',
    ]).toString(),
  ) as PyTool[];

  it('contributes each memory tool, the user memory’s too, with the schema and description the server uses', () => {
    assert.deepEqual(
      py.map((t) => t.name),
      [
        'memory_add',
        'memory_replace',
        'memory_consolidate',
        'user_memory_add',
        'user_memory_replace',
        'user_memory_consolidate',
      ],
    );
    for (const t of py) {
      const contributed = tools.get(t.name);
      assert.ok(contributed, `${t.name} missing from contributes.languageModelTools`);
      assert.deepEqual(contributed.inputSchema, t.input_schema, `${t.name} schema`);
      assert.equal(contributed.modelDescription, t.description, `${t.name} description`);
    }
  });

  it('matches the spec schemas exactly', () => {
    const file = { type: 'string', enum: ['MEMORY.md', 'USER.md'] };
    assert.deepEqual(tools.get('memory_add')?.inputSchema, {
      type: 'object',
      properties: { file, entry: { type: 'string', minLength: 1 } },
      required: ['file', 'entry'],
      additionalProperties: false,
    });
    assert.deepEqual(tools.get('memory_replace')?.inputSchema, {
      type: 'object',
      properties: { file, old: { type: 'string' }, new: { type: 'string' } },
      required: ['file', 'old', 'new'],
      additionalProperties: false,
    });
    assert.deepEqual(tools.get('memory_consolidate')?.inputSchema, {
      type: 'object',
      properties: { file, content: { type: 'string' } },
      required: ['file', 'content'],
      additionalProperties: false,
    });
    assert.deepEqual(tools.get('memory_read')?.inputSchema, {
      type: 'object',
      properties: {},
      additionalProperties: false,
    });
  });

  it('activates for every language-model tool it contributes', () => {
    const events = manifest.activationEvents;
    for (const t of manifest.contributes.languageModelTools) {
      assert.ok(events.includes(`onLanguageModelTool:${t.name}`), `no activation event for ${t.name}`);
    }
  });

  it('does not register the server-owned command ids (vscode-languageclient does)', () => {
    // A clash makes the client fail to start the server ("command ... already exists").
    const contributed = manifest.contributes.commands.map((c) => c.command);
    const source = fs.readFileSync(path.join(root, 'extension', 'src', 'commands.ts'), 'utf8');
    const registered = [...source.matchAll(/register(?:Command)?\(\s*'([^']+)'/g)].map((m) => m[1]);
    assert.ok(registered.length > 5, 'found no registered commands: has commands.ts changed shape?');
    for (const owned of Object.values(ServerCommand)) {
      assert.ok(!contributed.includes(owned), `${owned} must not be contributed`);
      assert.ok(!registered.includes(owned), `${owned} must not be registered by the extension`);
    }
  });

  it('implements every client-side command it declares to the server, and the server knows them', () => {
    const source = fs.readFileSync(path.join(root, 'extension', 'src', 'commands.ts'), 'utf8');
    const server = fs.readFileSync(path.join(root, 'server', 'metis_memory', 'lsp', 'protocol.py'), 'utf8');
    for (const [key, id] of Object.entries(ClientCommand)) {
      assert.match(source, new RegExp(`register\\(ClientCommand\\.${key}\\b`), `${id} is declared but not registered`);
      assert.ok(server.includes(`= "${id}"`), `the server does not know ${id}`);
    }
  });

  it('keeps engines.vscode and @types/vscode on the same version', () => {
    assert.equal(manifest.engines.vscode.replace(/^\^/, ''), manifest.devDependencies['@types/vscode']);
  });

  it('limits untrusted workspaces and restricts the interpreter setting', () => {
    assert.equal(manifest.capabilities.untrustedWorkspaces.supported, 'limited');
    assert.ok(manifest.capabilities.untrustedWorkspaces.restrictedConfigurations.includes('metis.interpreter'));
  });
});

interface Step {
  id: string;
  description: string;
  media: { image?: string; markdown?: string };
  completionEvents?: string[];
}
const listing = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as {
  icon: string;
  repository: { url: string };
  license: string;
  categories: string[];
  keywords: string[];
  galleryBanner: { color: string; theme: string };
  contributes: { commands: { command: string }[]; walkthroughs: { id: string; steps: Step[] }[] };
};

/** Whether `file` is in the VSIX: .vscodeignore excludes everything, then re-includes. */
function packaged(file: string): boolean {
  const rules = fs.readFileSync(path.join(root, '.vscodeignore'), 'utf8').split('\n');
  const globToRegex = (g: string): RegExp =>
    new RegExp(
      `^${g
        .replace(/[.+^${}()|[\]\\]/g, '\\$&')
        .split('**')
        .map((part) => part.replace(/\*/g, '[^/]*'))
        .join('.*')}$`,
    );
  let included = false;
  for (const rule of rules.map((r) => r.trim()).filter((r) => r && !r.startsWith('#'))) {
    if (rule.startsWith('!') && globToRegex(rule.slice(1)).test(file)) included = true;
    else if (!rule.startsWith('!') && globToRegex(rule).test(file)) included = false;
  }
  return included;
}

describe('the Marketplace listing', () => {
  it('has a 128x128 PNG icon, a repository, a licence, categories, keywords and a banner', () => {
    const icon = fs.readFileSync(path.join(root, listing.icon));
    assert.equal(icon.subarray(1, 4).toString(), 'PNG');
    assert.deepEqual([icon.readUInt32BE(16), icon.readUInt32BE(20)], [128, 128]);
    assert.ok(packaged(listing.icon), `${listing.icon} is not in the VSIX`);
    assert.match(listing.repository.url, /^https:\/\/github\.com\/[\w-]+\/[\w-]+\.git$/);
    assert.equal(listing.license, 'MIT');
    assert.ok(fs.readFileSync(path.join(root, 'LICENSE'), 'utf8').startsWith('MIT License'));
    assert.ok(fs.existsSync(path.join(root, 'CHANGELOG.md')));
    assert.ok(listing.categories.includes('AI') && listing.categories.length <= 3);
    assert.ok(
      listing.keywords.length >= 5 && listing.keywords.length <= 30,
      'the Marketplace takes at most 30 keywords',
    );
    assert.match(listing.galleryBanner.color, /^#[0-9A-Fa-f]{6}$/);
  });

  it('walks a new user through memory, caps, consolidation and agents, with working links', () => {
    const commands = new Set(listing.contributes.commands.map((c) => c.command));
    const [walkthrough] = listing.contributes.walkthroughs;
    assert.ok(walkthrough, 'no walkthrough contributed');
    assert.deepEqual(
      walkthrough.steps.map((s) => s.id),
      ['createMemory', 'seeCaps', 'consolidate', 'connectAgents'],
    );
    for (const step of walkthrough.steps) {
      const linked = [...step.description.matchAll(/\(command:([\w.]+)\)/g)].map((m) => m[1] ?? '');
      assert.equal(linked.length, 1, `${step.id}: one button`);
      // onContext events complete a step for a state the extension sets (memory already there).
      for (const event of (step.completionEvents ?? []).filter((e) => e.startsWith('onCommand:'))) {
        const command = event.replace(/^onCommand:/, '');
        assert.ok(commands.has(command), `${step.id}: ${command} is not a contributed command`);
        assert.ok(linked.includes(command), `${step.id}: completes on ${command}, which its button does not run`);
      }
      const media = step.media.image ?? step.media.markdown ?? '';
      assert.ok(fs.existsSync(path.join(root, media)), `${step.id}: ${media} is missing`);
      assert.ok(packaged(media), `${step.id}: ${media} is not in the VSIX`);
    }
  });
});
