/**
 * A minimal MCP client over stdio (newline-delimited JSON-RPC, as the MCP stdio transport
 * specifies): start a server from a definition, initialize, list tools, call them. Enough to
 * prove a definition runs; every wait is bounded and says what it waited for.
 */

import { spawn, type ChildProcess } from 'node:child_process';

export interface StdioDefinition {
  command: string;
  args: string[];
  env?: Record<string, string | number | null>;
  cwd?: string;
}

export interface McpTool {
  name: string;
  description?: string;
  inputSchema: unknown;
}

export interface CallResult {
  content: { type: string; text?: string }[];
  isError?: boolean;
}

interface Pending {
  resolve(value: unknown): void;
  reject(err: Error): void;
}

export class McpStdioClient {
  private readonly child: ChildProcess;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private buffer = '';
  private stderr = '';
  private exit: string | undefined;

  constructor(readonly definition: StdioDefinition) {
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const [k, v] of Object.entries(definition.env ?? {})) {
      if (v === null) delete env[k];
      else env[k] = String(v);
    }
    this.child = spawn(definition.command, definition.args, { cwd: definition.cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stdout!.setEncoding('utf8').on('data', (chunk: string) => this.onData(chunk));
    this.child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (this.stderr += chunk));
    const gone = (why: string) => {
      this.exit = why;
      for (const p of this.pending.values()) p.reject(new Error(`the MCP server ${why}${this.stderrTail()}`));
      this.pending.clear();
    };
    this.child.on('error', (err) => gone(`could not be started: ${err.message}`));
    this.child.on('exit', (code, signal) => gone(`exited (code ${code}, signal ${signal})`));
  }

  private stderrTail(): string {
    const tail = this.stderr.trim().split('\n').slice(-5).join('\n');
    return tail ? `; its stderr ends:\n${tail}` : '';
  }

  private onData(chunk: string): void {
    this.buffer += chunk;
    let nl: number;
    while ((nl = this.buffer.indexOf('\n')) >= 0) {
      const line = this.buffer.slice(0, nl).trim();
      this.buffer = this.buffer.slice(nl + 1);
      if (!line) continue;
      const msg = JSON.parse(line) as { id?: number; result?: unknown; error?: { message: string } };
      if (msg.id === undefined) continue; // a notification (logging): not ours to check
      const p = this.pending.get(msg.id);
      if (!p) continue;
      this.pending.delete(msg.id);
      if (msg.error) p.reject(new Error(`MCP error: ${msg.error.message}`));
      else p.resolve(msg.result);
    }
  }

  request<T>(method: string, params: unknown, timeoutMs = 30_000): Promise<T> {
    if (this.exit) return Promise.reject(new Error(`the MCP server ${this.exit}${this.stderrTail()}`));
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`no answer to MCP ${method} within ${timeoutMs} ms${this.stderrTail()}`));
      }, timeoutMs);
      this.pending.set(id, {
        resolve: (v) => {
          clearTimeout(timer);
          resolve(v as T);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      this.child.stdin!.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    });
  }

  notify(method: string, params: unknown = {}): void {
    this.child.stdin!.write(`${JSON.stringify({ jsonrpc: '2.0', method, params })}\n`);
  }

  /** The MCP handshake; returns the server's InitializeResult. */
  async initialize(): Promise<{ serverInfo: { name: string; version: string }; capabilities: Record<string, unknown> }> {
    const result = await this.request<{ serverInfo: { name: string; version: string }; capabilities: Record<string, unknown> }>(
      'initialize',
      { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'metis-e2e', version: '0' } },
    );
    this.notify('notifications/initialized');
    return result;
  }

  async listTools(): Promise<McpTool[]> {
    return (await this.request<{ tools: McpTool[] }>('tools/list', {})).tools;
  }

  callTool(name: string, args: Record<string, unknown>): Promise<CallResult> {
    return this.request<CallResult>('tools/call', { name, arguments: args });
  }

  /** Close stdin (the stdio transport's shutdown) and wait for the exit; kill after 10 s. */
  async close(): Promise<void> {
    if (this.exit) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.stdin!.end();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }
}

/** The text of a tool result (the memory tools answer with one text part). */
export function resultText(result: CallResult): string {
  return result.content.map((c) => c.text ?? '').join('');
}

/** The spec's input schema of memory_add, which every host must advertise. */
/** The tools the MCP server lists, by name, sorted: the same from VS Code, the CLI and the VSIX. */
export const MCP_TOOL_NAMES = [
  'memory_add',
  'memory_assemble_prompt',
  'memory_consolidate',
  'memory_read',
  'memory_replace',
  'user_memory_add',
  'user_memory_consolidate',
  'user_memory_replace',
];

export const MEMORY_ADD_SCHEMA = {
  type: 'object',
  properties: { file: { type: 'string', enum: ['MEMORY.md', 'USER.md'] }, entry: { type: 'string', minLength: 1 } },
  required: ['file', 'entry'],
  additionalProperties: false,
};
