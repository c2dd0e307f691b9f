/**
 * Test-only helper: an HTTP bridge on 127.0.0.1 so the end-to-end tests can do what only
 * extension code can — `vscode.lm.invokeTool`, the Metis Memory exported API, reading virtual
 * documents, VS Code's MCP server definitions, changing folders and settings — inside the real
 * editor. It writes its port to the file named by METIS_E2E_BRIDGE.
 */

import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as vscode from 'vscode';

type Handler = (body: Record<string, unknown>) => Promise<unknown>;

/**
 * The proposed `mcpServerDefinitions` API (enabled for this helper only, by code-server's
 * --enable-proposed-api): every MCP server definition VS Code's registry holds, from all
 * providers, as VS Code itself sees them.
 */
interface McpDefinitionsView {
  mcpServerDefinitions?: readonly {
    label: string;
    command?: string;
    args?: string[];
    env?: Record<string, string | number | null>;
    cwd?: vscode.Uri;
    version?: string;
  }[];
}

/**
 * The Language Model Chat Provider API (VS Code 1.104+; the engine types here are older):
 * https://code.visualstudio.com/api/extension-guides/ai/language-model-chat-provider
 */
interface ChatProviderApi {
  registerLanguageModelChatProvider(
    vendor: string,
    provider: {
      provideLanguageModelChatInformation(options: { silent: boolean }, token: vscode.CancellationToken): unknown[];
      provideLanguageModelChatResponse(
        model: unknown,
        messages: readonly { role: number; content: readonly unknown[] }[],
        options: { tools?: readonly unknown[] },
        progress: vscode.Progress<vscode.LanguageModelTextPart>,
        token: vscode.CancellationToken,
      ): Thenable<void>;
      provideTokenCount(model: unknown, text: unknown, token: vscode.CancellationToken): Thenable<number>;
      onDidChangeLanguageModelChatInformation?: vscode.Event<void>;
    },
  ): vscode.Disposable;
}

/** One scripted answer: its text in chunks, or `hang` until the request is cancelled. */
interface Answer {
  chunks?: string[];
  hang?: boolean;
}

/** One request the model received: all its text, and each message's text with its role. */
interface RecordedRequest {
  /** Every message's text parts, joined. */
  text: string;
  /** Each message's text parts, joined, with its role ('user', 'assistant', 'system'). */
  messages: { role: string; text: string }[];
  /** How many tools the request offered the model. */
  tools: number;
  cancelled: boolean;
}

const ROLES: Record<number, string> = { 1: 'user', 2: 'assistant', 3: 'system' };

/**
 * A test-only language model answering from a script the test sets (`/lm`), recording every
 * request (`/lm/requests`). Offered only while a script is set, so the other tests see an
 * editor with no model, as code-server is. It claims tool calling only when the script asks
 * (`toolCalling: true`): Copilot Chat's agent offers no model without it.
 */
function scriptedModel(context: vscode.ExtensionContext): Record<string, Handler> {
  let answers: Answer[] | undefined;
  let toolCalling = false;
  const requests: RecordedRequest[] = [];
  const changed = new vscode.EventEmitter<void>();
  const info = () => ({
    id: 'metis-scripted',
    name: 'Metis Scripted Model',
    family: 'metis-test',
    version: '1',
    maxInputTokens: 100_000,
    maxOutputTokens: 100_000,
    capabilities: toolCalling ? { toolCalling: true } : {},
  });
  const textOf = (content: readonly unknown[]) =>
    content.map((part) => (part instanceof vscode.LanguageModelTextPart ? part.value : '')).join('');
  const api = vscode.lm as unknown as ChatProviderApi;
  context.subscriptions.push(
    api.registerLanguageModelChatProvider('metis-test', {
      onDidChangeLanguageModelChatInformation: changed.event,
      provideLanguageModelChatInformation: () => (answers ? [info()] : []),
      async provideLanguageModelChatResponse(_model, messages, options, progress, token) {
        const recorded = messages.map((m) => ({ role: ROLES[m.role] ?? String(m.role), text: textOf(m.content) }));
        const request: RecordedRequest = {
          text: recorded.map((m) => m.text).join(''),
          messages: recorded,
          tools: options.tools?.length ?? 0,
          cancelled: false,
        };
        requests.push(request);
        const answer = answers?.shift() ?? { chunks: [] };
        if (answer.hang) {
          await new Promise<void>((resolve) => token.onCancellationRequested(() => resolve()));
          request.cancelled = true;
          return;
        }
        for (const chunk of answer.chunks ?? []) progress.report(new vscode.LanguageModelTextPart(chunk));
      },
      provideTokenCount: async (_model, text) => Math.ceil(String(text).length / 4),
    }),
  );
  return {
    '/lm': async (b) => {
      answers = b.answers === null ? undefined : ((b.answers as Answer[] | undefined) ?? []);
      toolCalling = b.toolCalling === true;
      requests.length = 0;
      changed.fire();
      return true;
    },
    '/lm/requests': async () => requests,
  };
}

/** The built-in chat extension of code-server (VS Code's `defaultChatAgent.chatExtensionId`). */
const CHAT_EXTENSION = 'GitHub.copilot-chat';

/**
 * Turn on the built-in GitHub Copilot Chat extension, which the workbench disables on every
 * fresh profile until Chat setup (a Copilot sign-in) is done. "Chat: Manage Language Models"
 * enables it and starts it in the running extension host; it also opens the Language Models
 * editor, closed here. Only the tests that ask (`/chat/enable`) get a chat.
 */
async function enableChat(): Promise<{ active: boolean }> {
  await vscode.commands.executeCommand('workbench.action.chat.manage');
  for (const group of vscode.window.tabGroups.all) {
    for (const tab of group.tabs) {
      if (!(tab.input instanceof vscode.TabInputText) && /language models/i.test(tab.label)) {
        await vscode.window.tabGroups.close(tab);
      }
    }
  }
  return { active: vscode.extensions.getExtension(CHAT_EXTENSION)?.isActive ?? false };
}

export function activate(context: vscode.ExtensionContext): void {
  const bridgeFile = process.env.METIS_E2E_BRIDGE;
  if (!bridgeFile) return;
  const events: unknown[] = [];
  let subscribed = false;

  const metisApi = async (): Promise<Record<string, unknown>> => {
    const ext = vscode.extensions.getExtension<Record<string, unknown>>('metis.metis-memory');
    if (!ext) throw new Error('metis.metis-memory is not installed');
    const api = ext.isActive ? ext.exports : await ext.activate();
    if (!subscribed) {
      subscribed = true;
      const onDid = api.onDidUpdateMemory as vscode.Event<{ folder: vscode.Uri }>;
      context.subscriptions.push(onDid((e) => events.push({ ...e, folder: e.folder.toString() })));
    }
    return api;
  };

  const routes: Record<string, Handler> = {
    '/tools': async () => vscode.lm.tools.map((t) => t.name),
    '/tool': async (b) => {
      const tool = vscode.lm.tools.find((t) => t.name === b.name);
      return tool && { name: tool.name, description: tool.description, inputSchema: tool.inputSchema };
    },
    '/invokeTool': async (b) => {
      const result = await vscode.lm.invokeTool(String(b.name), {
        input: b.input as object,
        toolInvocationToken: undefined,
      });
      return result.content.map((part) => (part instanceof vscode.LanguageModelTextPart ? part.value : '')).join('');
    },
    '/api': async (b) => {
      const api = await metisApi();
      const fn = api[String(b.method)];
      if (typeof fn !== 'function') throw new Error(`no API method ${String(b.method)}`);
      const args = (b.args as unknown[] | undefined) ?? [];
      return await (fn as (...a: unknown[]) => Promise<unknown>)(...args);
    },
    '/apiVersion': async () => (await metisApi()).apiVersion,
    '/mcpServerDefinition': async (b) => {
      const api = await metisApi();
      const fn = api.mcpServerDefinition as (folder?: vscode.Uri) => Promise<unknown>;
      return fn(typeof b.folder === 'string' ? vscode.Uri.file(b.folder) : undefined);
    },
    '/mcpDefinitions': async () => {
      const defs = (vscode.lm as unknown as McpDefinitionsView).mcpServerDefinitions;
      if (!defs)
        throw new Error('vscode.lm.mcpServerDefinitions is unavailable (is the proposed API enabled for the helper?)');
      return defs.map((d) => ({
        label: d.label,
        command: d.command,
        args: d.args,
        env: d.env,
        cwd: d.cwd?.fsPath,
        version: d.version,
      }));
    },
    '/workspaceFolders': async (b) => {
      const add = ((b.add as string[] | undefined) ?? []).map((p) => ({ uri: vscode.Uri.file(p) }));
      const changed = new Promise<void>((resolve) => {
        const sub = vscode.workspace.onDidChangeWorkspaceFolders(() => {
          sub.dispose();
          resolve();
        });
      });
      if (!vscode.workspace.updateWorkspaceFolders(Number(b.start), Number(b.deleteCount ?? 0), ...add)) {
        throw new Error('updateWorkspaceFolders refused the change');
      }
      await changed;
      return (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath);
    },
    '/setting': async (b) =>
      vscode.workspace
        .getConfiguration(String(b.section))
        .update(String(b.key), b.value, vscode.ConfigurationTarget.Global),
    '/events': async () => {
      await metisApi();
      return events;
    },
    '/documents': async (b) =>
      vscode.workspace.textDocuments
        .filter((d) => d.uri.scheme === b.scheme)
        .map((d) => ({ uri: d.uri.toString(), text: d.getText(), dirty: d.isDirty })),
    '/diagnostics': async () =>
      vscode.languages.getDiagnostics().map(([uri, diags]) => ({
        uri: uri.toString(),
        diagnostics: diags.map((d) => ({
          code: typeof d.code === 'object' ? String(d.code.value) : String(d.code ?? ''),
          severity: d.severity,
          message: d.message,
          source: d.source,
          range: [d.range.start.line, d.range.start.character, d.range.end.line, d.range.end.character],
        })),
      })),
    '/open': async (b) => {
      const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(String(b.path)));
      await vscode.window.showTextDocument(doc, { preview: false });
      return doc.uri.toString();
    },
    '/workspaceFolderUris': async () => (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.toString()),
    '/command': async (b) =>
      vscode.commands.executeCommand(String(b.command), ...(((b.args as unknown[]) ?? []) as unknown[])),
    '/models': async () => (await vscode.lm.selectChatModels()).map((m) => m.name),
    '/selection': async () => {
      const editor = vscode.window.activeTextEditor;
      return editor && { uri: editor.document.uri.toString(), text: editor.document.getText(editor.selection) };
    },
    '/chat/enable': async () => enableChat(),
    '/extension': async (b) => {
      const ext = vscode.extensions.getExtension(String(b.id));
      return ext && { id: ext.id, active: ext.isActive, version: (ext.packageJSON as { version?: string }).version };
    },
    ...scriptedModel(context),
  };

  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => (raw += chunk.toString('utf8')));
    req.on('end', () => {
      const route = routes[req.url ?? ''];
      const reply = (status: number, value: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(value ?? null));
      };
      if (!route) return reply(404, { error: `no route ${req.url}` });
      let body: Record<string, unknown> = {};
      try {
        body = raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
      } catch {
        return reply(400, { error: 'bad JSON' });
      }
      route(body).then(
        (value) => reply(200, { value }),
        (err: unknown) =>
          reply(500, {
            error: err instanceof Error ? err.message : String(err),
            code: (err as { code?: unknown }).code,
          }),
      );
    });
  });
  server.listen(0, '127.0.0.1', () => {
    const port = (server.address() as AddressInfo).port;
    fs.writeFileSync(bridgeFile, String(port));
  });
  context.subscriptions.push({ dispose: () => server.close() });
}

export function deactivate(): void {}
