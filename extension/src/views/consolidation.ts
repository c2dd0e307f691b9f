/**
 * Consolidation: a diff of the memory file against an editable proposal (starting from the
 * server's tidy result) and "Apply" (proposalApply.ts). The server analyses the proposal (its scheme is in the document selector) as the file it is
 * for: its diagnostics, hover and usage lens come from the same rules. Optionally drafts a
 * proposal with a language model.
 */

import * as vscode from 'vscode';
import { activeDocumentOf, closeEditorsOf } from './editorTabs';
import { memoryFileUri, readDiskVersion, workspaceFromKey, type MemoryWorkspace } from '../folders';
import { draftWithModel } from '../agents/modelDraft';
import { applyProposal, type AppliedProposal } from './proposalApply';
import { ProposalFileSystem } from './proposalFiles';
import { ProposalStatus } from './proposalStatus';
import { ServerCommand, type MemoryFileName, type ProposalUsageParams } from '../protocol';
import type { MetisServer } from '../server/server';

export const PROPOSAL_SCHEME = 'metis-proposal';

export class Consolidation implements vscode.Disposable, vscode.CodeLensProvider {
  private readonly fs = new ProposalFileSystem();
  private readonly proposals = new Map<string, AppliedProposal>();
  /** The server's latest measure of each open proposal (`metis/proposalUsage`), by URI. */
  private readonly usage = new Map<string, ProposalUsageParams>();
  private readonly lensesChanged = new vscode.EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.lensesChanged.event;
  private readonly disposables: vscode.Disposable[] = [];
  private readonly status = new ProposalStatus();

  constructor(private readonly server: MetisServer) {
    this.disposables.push(
      vscode.workspace.registerFileSystemProvider(PROPOSAL_SCHEME, this.fs, { isCaseSensitive: true }),
      vscode.languages.registerCodeLensProvider({ scheme: PROPOSAL_SCHEME }, this),
      vscode.window.onDidChangeActiveTextEditor(() => {
        this.updateContext();
      }),
      vscode.window.tabGroups.onDidChangeTabs(() => {
        this.updateContext();
      }),
      this.status,
      this.lensesChanged,
    );
  }

  /** The proposal's URI: its query is the workspace's key, which the server reads too. */
  static uriFor(folder: MemoryWorkspace, file: MemoryFileName): vscode.Uri {
    return vscode.Uri.from({
      scheme: PROPOSAL_SCHEME,
      path: `/${folder.name}/${file.replace('.md', '')} proposal.md`,
      query: folder.uri.toString(),
    });
  }

  /** Open the diff of the current file against a fresh proposal (the server's tidy result). */
  async open(folder: MemoryWorkspace, file: MemoryFileName, select?: string): Promise<void> {
    const fileUri = memoryFileUri(folder, file);
    const { text: baseline, sha256: baselineHash } = await readDiskVersion(fileUri);
    if (baseline.trim() === '') {
      void vscode.window.showInformationMessage(`${file} in ${folder.name} is empty: there is nothing to consolidate.`);
      return;
    }
    const tidy = await this.server.command(ServerCommand.tidy, { file, workspace: folder.uri.toString() });
    const uri = Consolidation.uriFor(folder, file);
    this.proposals.set(uri.toString(), {
      workspace: folder,
      file,
      baseline,
      baselineHash,
    });
    this.fs.set(uri, tidy.content);
    // A proposal already open in an editor keeps its buffer: reload it from the new content.
    const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
    if (open?.isDirty) {
      const edit = new vscode.WorkspaceEdit();
      edit.replace(uri, fullRange(open), tidy.content);
      await vscode.workspace.applyEdit(edit);
    }
    const title = `${file} ↔ Proposal (${folder.name})`;
    await vscode.commands.executeCommand('vscode.diff', fileUri, uri, title, { preview: false });
    const doc = await vscode.workspace.openTextDocument(uri);
    if (select) selectIn(doc, select);
    this.updateContext();
  }

  provideCodeLenses(document: vscode.TextDocument): vscode.CodeLens[] {
    const p = this.proposals.get(document.uri.toString());
    if (!p) return [];
    const top = new vscode.Range(0, 0, 0, 0);
    return [
      new vscode.CodeLens(top, {
        title: '$(check) Apply',
        command: 'metis.applyConsolidation',
        arguments: [document.uri],
        tooltip: `Write this proposal to ${p.file} (memory_consolidate)`,
      }),
    ];
  }

  /** The server measured a proposal (opened or edited): show it if it is the active one. */
  proposalUsage(params: ProposalUsageParams): void {
    const key = vscode.Uri.parse(params.uri).toString();
    if (!this.proposals.has(key)) return;
    this.usage.set(key, params);
    this.renderStatus();
  }

  private renderStatus(): void {
    const uri = this.activeProposal();
    this.status.render(uri ? this.usage.get(uri.toString()) : undefined);
  }

  private activeProposal(): vscode.Uri | undefined {
    const uri = activeDocumentOf(PROPOSAL_SCHEME);
    return uri && this.proposals.has(uri.toString()) ? uri : undefined;
  }

  private updateContext(): void {
    void vscode.commands.executeCommand('setContext', 'metis.proposalActive', this.activeProposal() !== undefined);
    this.renderStatus();
  }

  /** Apply a proposal; true when written (and then closed). */
  async apply(target?: vscode.Uri): Promise<boolean> {
    const uri = target instanceof vscode.Uri ? target : this.activeProposal();
    const p = uri ? this.proposals.get(uri.toString()) : undefined;
    if (!uri || !p) {
      void vscode.window.showWarningMessage(
        'No consolidation proposal is open: run "Metis: Consolidate MEMORY.md…" first.',
      );
      return false;
    }
    const doc = await vscode.workspace.openTextDocument(uri);
    const result = await applyProposal(this.server, p, doc.getText(), () => void this.open(p.workspace, p.file));
    if (!result) return false;
    // The proposal is done: save it into its in-memory file (no "save changes?") and close it.
    if (doc.isDirty) await doc.save();
    await this.close(uri);
    void vscode.window.showInformationMessage(result.message);
    return true;
  }

  private async close(uri: vscode.Uri): Promise<void> {
    await closeEditorsOf(uri);
    this.proposals.delete(uri.toString());
    this.usage.delete(uri.toString());
    this.updateContext();
  }

  /** Replace the active proposal with a language model's draft under the soft cap. */
  async draftWithModel(): Promise<void> {
    const uri = this.activeProposal();
    const p = uri ? this.proposals.get(uri.toString()) : undefined;
    if (!uri || !p) {
      void vscode.window.showWarningMessage('Open a consolidation proposal first ("Metis: Consolidate MEMORY.md…").');
      return;
    }
    await draftWithModel(this.server, uri, p.file);
  }

  /** For callers that only know a workspace's key (code actions pass the one the server names). */
  async openFor(
    workspace: string | undefined,
    file: MemoryFileName,
    fallback: () => Promise<MemoryWorkspace | undefined>,
    select?: string,
  ): Promise<void> {
    const folder = workspace ? workspaceFromKey(workspace) : await fallback();
    if (folder) await this.open(folder, file, select);
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}

/** Select `text` (an entry) in the proposal's editor and scroll to it, when it is there. */
function selectIn(doc: vscode.TextDocument, text: string): void {
  const at = doc.getText().indexOf(text);
  const editor = vscode.window.visibleTextEditors.find((e) => e.document === doc);
  if (at < 0 || !editor) return;
  const range = new vscode.Range(doc.positionAt(at), doc.positionAt(at + text.length));
  editor.selection = new vscode.Selection(range.start, range.end);
  editor.revealRange(range, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
}

function fullRange(doc: vscode.TextDocument): vscode.Range {
  return new vscode.Range(0, 0, doc.lineCount, 0);
}
