/**
 * Test-only helper: an HTTP bridge on 127.0.0.1 so the end-to-end tests can do what only
 * extension code can — `vscode.lm.invokeTool`, the Metis Memory exported API, reading virtual
 * documents — inside the real editor. It writes its port to the file named by METIS_E2E_BRIDGE.
 */

import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as vscode from 'vscode';

type Handler = (body: Record<string, unknown>) => Promise<unknown>;

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
    '/invokeTool': async (b) => {
      const result = await vscode.lm.invokeTool(String(b.name), {
        input: b.input as object,
        toolInvocationToken: undefined,
      });
      return result.content
        .map((part) => (part instanceof vscode.LanguageModelTextPart ? part.value : ''))
        .join('');
    },
    '/api': async (b) => {
      const api = await metisApi();
      const fn = api[String(b.method)];
      if (typeof fn !== 'function') throw new Error(`no API method ${String(b.method)}`);
      const args = (b.args as unknown[] | undefined) ?? [];
      return await (fn as (...a: unknown[]) => Promise<unknown>)(...args);
    },
    '/apiVersion': async () => (await metisApi()).apiVersion,
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
    '/command': async (b) =>
      vscode.commands.executeCommand(String(b.command), ...(((b.args as unknown[]) ?? []) as unknown[])),
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
          reply(500, { error: err instanceof Error ? err.message : String(err), code: (err as { code?: unknown }).code }),
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
