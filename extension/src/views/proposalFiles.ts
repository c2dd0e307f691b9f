/** In-memory files for consolidation proposals (`metis-proposal:`), so a proposal is an
 * ordinary editable document that saves without touching disk. */

import * as vscode from 'vscode';

export /** In-memory files for proposals, so they are editable and save without touching disk. */
class ProposalFileSystem implements vscode.FileSystemProvider {
  private readonly files = new Map<string, { data: Uint8Array; mtime: number }>();
  private readonly emitter = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
  readonly onDidChangeFile = this.emitter.event;

  set(uri: vscode.Uri, text: string): void {
    const existed = this.files.has(uri.toString());
    this.files.set(uri.toString(), { data: new TextEncoder().encode(text), mtime: Date.now() });
    this.emitter.fire([{ type: existed ? vscode.FileChangeType.Changed : vscode.FileChangeType.Created, uri }]);
  }
  delete(uri: vscode.Uri): void {
    this.files.delete(uri.toString());
  }
  watch(): vscode.Disposable {
    return new vscode.Disposable(() => undefined);
  }
  stat(uri: vscode.Uri): vscode.FileStat {
    const f = this.files.get(uri.toString());
    if (!f) throw vscode.FileSystemError.FileNotFound(uri);
    return { type: vscode.FileType.File, ctime: f.mtime, mtime: f.mtime, size: f.data.byteLength };
  }
  readDirectory(): [string, vscode.FileType][] {
    return [];
  }
  createDirectory(): void {
    throw vscode.FileSystemError.NoPermissions('proposals have no folders');
  }
  readFile(uri: vscode.Uri): Uint8Array {
    const f = this.files.get(uri.toString());
    if (!f) throw vscode.FileSystemError.FileNotFound(uri);
    return f.data;
  }
  writeFile(uri: vscode.Uri, content: Uint8Array): void {
    this.files.set(uri.toString(), { data: content, mtime: Date.now() });
    this.emitter.fire([{ type: vscode.FileChangeType.Changed, uri }]);
  }
  rename(): void {
    throw vscode.FileSystemError.NoPermissions('proposals cannot be renamed');
  }
}
