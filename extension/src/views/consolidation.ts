/**
 * Consolidation: a diff of the memory file against an editable proposal (starting from the
 * server's tidy result) and "Apply" (proposalApply.ts). The server analyses the proposal (its scheme is in the document selector) as the file it is
 * for: its diagnostics, hover and usage lens come from the same rules. A proposal still over a
 * cap says so on its first line, with the numbers, and offers a language model's draft; after
 * Apply the file is shown from its top, with one message.
 */

import * as vscode from 'vscode';
import { activeDocumentOf, closeEditorsOf } from './editorTabs';
import { docArgs, readDiskVersion, sentenceName, type MemoryDoc } from '../folders';
import { draftWithModel } from '../agents/modelDraft';
import { showWritten } from './entryPrompts';
import { formatBytes } from './format';
import { applyProposal, DRAFT, type AppliedProposal } from './proposalApply';
import { ProposalFileSystem } from './proposalFiles';
import { ProposalStatus } from './proposalStatus';
import { ServerCommand, type ProposalUsageParams } from '../protocol';
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
  /** Proposals already told (once per opening) that they are over the hard cap. */
  private readonly warned = new Set<string>();
  /** Whether the editor offers a language model: the draft is offered only then. */
  private modelAvailable = false;
  /** A proposal over a cap says so after its first line, in its own editor: a diff editor
   * shows no code lenses (`diffEditor.codeLens` is off by default), decorations it does. */
  private readonly overCap = {
    hard: vscode.window.createTextEditorDecorationType({
      after: { color: new vscode.ThemeColor('editorError.foreground'), margin: '0 0 0 2em', fontStyle: 'italic' },
    }),
    soft: vscode.window.createTextEditorDecorationType({
      after: { color: new vscode.ThemeColor('editorWarning.foreground'), margin: '0 0 0 2em', fontStyle: 'italic' },
    }),
  };

  constructor(private readonly server: MetisServer) {
    void this.checkModels();
    this.disposables.push(
      vscode.lm.onDidChangeChatModels(() => void this.checkModels()),
      vscode.workspace.registerFileSystemProvider(PROPOSAL_SCHEME, this.fs, { isCaseSensitive: true }),
      vscode.languages.registerCodeLensProvider({ scheme: PROPOSAL_SCHEME }, this),
      vscode.window.onDidChangeActiveTextEditor(() => {
        this.updateContext();
      }),
      vscode.window.tabGroups.onDidChangeTabs(() => {
        this.updateContext();
      }),
      vscode.window.onDidChangeVisibleTextEditors(() => {
        this.decorate();
      }),
      this.status,
      this.lensesChanged,
      this.overCap.hard,
      this.overCap.soft,
    );
  }

  /** The proposal's URI: its query is the workspace's key (the user memory's: its folder's
   * URI), which the server reads too, and its name says which file it is for. */
  static uriFor(doc: MemoryDoc): vscode.Uri {
    const file = doc.workspace ? doc.file.replace('.md', '') : 'USER';
    return vscode.Uri.from({
      scheme: PROPOSAL_SCHEME,
      path: `/${doc.workspace?.name ?? 'user memory'}/${file} proposal.md`,
      query: (doc.workspace?.uri ?? vscode.Uri.joinPath(doc.uri, '..')).toString(),
    });
  }

  /** The diff's title: "MEMORY.md ↔ Proposal (shop)", "Your user memory ↔ Proposal". */
  static titleFor(doc: MemoryDoc): string {
    return doc.workspace ? `${doc.name} ↔ Proposal (${doc.workspace.name})` : `${sentenceName(doc)} ↔ Proposal`;
  }

  /** Open the diff of the current file against a fresh proposal (the server's tidy result). */
  async open(target: MemoryDoc, select?: string): Promise<void> {
    const { text: baseline, sha256: baselineHash } = await readDiskVersion(target.uri);
    if (baseline.trim() === '') {
      const where = target.workspace ? `${target.name} in ${target.workspace.name}` : sentenceName(target);
      void vscode.window.showInformationMessage(`${where} is empty: there is nothing to consolidate.`);
      return;
    }
    if (!(await bufferCaughtUp(target.uri, baseline))) {
      void vscode.window.showWarningMessage(
        `${sentenceName(target)} changed on disk and its editor has not shown the change yet, so no proposal ` +
          'was made from it: try again in a moment.',
      );
      return;
    }
    const tidy = await this.server.command(ServerCommand.tidy, docArgs(target));
    const uri = await this.show({ doc: target, baseline, baselineHash }, tidy.content, select);
    if (!tidy.changed) this.tellNothingRemoved(uri, target);
  }

  /**
   * Open `proposed` against `p.doc` in the diff, to edit and Apply (a compare-and-swap on
   * `p.baselineHash`). `left` is what the diff shows on its left: the file itself, else (a file
   * not written yet) a read-only empty document.
   */
  async show(p: AppliedProposal, proposed: string, select?: string, left?: vscode.Uri): Promise<vscode.Uri> {
    const uri = Consolidation.uriFor(p.doc);
    this.proposals.set(uri.toString(), p);
    this.fs.set(uri, proposed);
    this.warned.delete(uri.toString());
    // A proposal already open in an editor keeps its buffer: reload it from the new content.
    const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
    if (open?.isDirty) {
      const edit = new vscode.WorkspaceEdit();
      edit.replace(uri, fullRange(open), proposed);
      await vscode.workspace.applyEdit(edit);
    }
    await vscode.commands.executeCommand('vscode.diff', left ?? p.doc.uri, uri, Consolidation.titleFor(p.doc), {
      preview: false,
    });
    const doc = await vscode.workspace.openTextDocument(uri);
    if (select) selectIn(doc, select);
    this.updateContext();
    return uri;
  }

  /** Both sides of the diff are the same: say why, once (it stands for the over-cap notice too). */
  private tellNothingRemoved(uri: vscode.Uri, target: MemoryDoc): void {
    this.warned.add(uri.toString());
    const model = this.modelAvailable;
    const text =
      `${sentenceName(target)} has no duplicate or empty entries, so the proposal starts as the file: merge, ` +
      `shorten or drop entries in it, then Apply${model ? `, or ${DRAFT}` : ''}.`;
    void vscode.window.showInformationMessage(text, ...(model ? [DRAFT] : [])).then((choice) => {
      if (choice === DRAFT) void this.draftWithModel(uri);
    });
  }

  provideCodeLenses(document: vscode.TextDocument): vscode.CodeLens[] {
    const p = this.proposals.get(document.uri.toString());
    if (!p) return [];
    const top = new vscode.Range(0, 0, 0, 0);
    const lenses: vscode.CodeLens[] = [];
    const usage = this.usage.get(document.uri.toString());
    if (usage && stillOver(usage, this.modelAvailable)) {
      if (this.modelAvailable) {
        lenses.push(
          new vscode.CodeLens(top, {
            title: `$(sparkle) ${DRAFT}`,
            command: 'metis.draftWithModel',
            arguments: [document.uri],
            tooltip: `Let the editor's language model rewrite this proposal under the soft cap of ${p.doc.name}`,
          }),
        );
      }
    }
    lenses.push(
      new vscode.CodeLens(top, {
        title: '$(check) Apply',
        command: 'metis.applyConsolidation',
        arguments: [document.uri],
        tooltip: `Write this proposal to ${p.doc.name}`,
      }),
    );
    return lenses;
  }

  /** The server measured a proposal (opened or edited): show it if it is the active one; a
   * proposal over the hard cap is told so once, with the model's draft offered. */
  proposalUsage(params: ProposalUsageParams): void {
    const key = vscode.Uri.parse(params.uri).toString();
    const p = this.proposals.get(key);
    if (!p) return;
    this.usage.set(key, params);
    this.renderStatus();
    this.lensesChanged.fire();
    this.decorate();
    if (params.size_bytes <= params.hard_cap || this.warned.has(key)) return;
    this.warned.add(key);
    const model = this.modelAvailable;
    const text =
      `The proposal for ${p.doc.name} is still ${formatBytes(params.size_bytes)}, over the ` +
      `${formatBytes(params.hard_cap)} hard cap by ${formatBytes(params.size_bytes - params.hard_cap)}: ` +
      `Apply would be refused. Remove or shorten entries in it${model ? `, or ${DRAFT}` : ''}.`;
    void vscode.window.showWarningMessage(text, ...(model ? [DRAFT] : [])).then((choice) => {
      if (choice === DRAFT) void this.draftWithModel(vscode.Uri.parse(key));
    });
  }

  /** Put each visible proposal's over-cap sentence after its first line (or take it away). */
  private decorate(): void {
    for (const editor of vscode.window.visibleTextEditors) {
      const key = editor.document.uri.toString();
      if (editor.document.uri.scheme !== PROPOSAL_SCHEME) continue;
      const usage = this.proposals.has(key) ? this.usage.get(key) : undefined;
      const text = usage && stillOver(usage, this.modelAvailable);
      const hard = usage !== undefined && usage.size_bytes > usage.hard_cap;
      const line = editor.document.lineAt(0).range;
      // A decoration does not wrap: what fits beside a heading in half a diff, and the whole
      // sentence in its hover (and, over the hard cap, in the notification).
      const shown: vscode.DecorationOptions[] =
        usage && text
          ? [
              {
                range: new vscode.Range(line.end, line.end),
                hoverMessage: text,
                renderOptions: { after: { contentText: `⚠ ${overBy(usage)}` } },
              },
            ]
          : [];
      editor.setDecorations(this.overCap.hard, hard ? shown : []);
      editor.setDecorations(this.overCap.soft, hard ? [] : shown);
    }
  }

  private async checkModels(): Promise<void> {
    let available: boolean;
    try {
      available = (await vscode.lm.selectChatModels()).length > 0;
    } catch {
      available = false;
    }
    if (available === this.modelAvailable) return;
    this.modelAvailable = available;
    this.lensesChanged.fire();
    this.decorate();
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
    const draft = this.modelAvailable ? () => void this.draftWithModel(uri) : undefined;
    const startOver = p.startOver ?? (() => void this.open(p.doc));
    const result = await applyProposal(this.server, p, doc.getText(), startOver, draft);
    if (!result) return false;
    // The proposal is done: save it into its in-memory file (no "save changes?") and close it.
    if (doc.isDirty) await doc.save();
    await this.close(uri);
    await showFromTop(p.doc.uri);
    showWritten(p.doc, result);
    return true;
  }

  private async close(uri: vscode.Uri): Promise<void> {
    await closeEditorsOf(uri);
    this.proposals.delete(uri.toString());
    this.usage.delete(uri.toString());
    this.updateContext();
  }

  /** Replace a proposal (`target`, else the active one) with a language model's draft under
   * the soft cap. */
  async draftWithModel(target?: vscode.Uri): Promise<void> {
    const uri = target instanceof vscode.Uri ? target : this.activeProposal();
    const p = uri ? this.proposals.get(uri.toString()) : undefined;
    if (!uri || !p) {
      void vscode.window.showWarningMessage('Open a consolidation proposal first ("Metis: Consolidate MEMORY.md…").');
      return;
    }
    await draftWithModel(this.server, uri, p.doc);
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}

/** How long an open editor may take to show a change made on disk (VS Code reloads it about a
 * second after its file watcher sees it). */
const RELOAD_TIMEOUT_MS = 5_000;

/**
 * Whether the file's editor, if one is open and unsaved changes hold nothing, shows `disk`:
 * waited for (at most `RELOAD_TIMEOUT_MS`) when it does not yet. The server's tidy reads an open
 * file's buffer, and Apply is checked against the disk's hash: a proposal made from a buffer a
 * write on disk has not reached yet would drop that write once applied. (A buffer with unsaved
 * changes is the server's to refuse.)
 */
async function bufferCaughtUp(uri: vscode.Uri, disk: string): Promise<boolean> {
  const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
  const same = (d: vscode.TextDocument) => d.isDirty || normalised(d.getText()) === normalised(disk);
  if (!doc || same(doc)) return true;
  return new Promise((resolve) => {
    const done = (caughtUp: boolean) => {
      clearTimeout(timer);
      listener.dispose();
      resolve(caughtUp);
    };
    const timer = setTimeout(() => {
      done(same(doc));
    }, RELOAD_TIMEOUT_MS);
    const listener = vscode.workspace.onDidChangeTextDocument((e) => {
      if (e.document === doc && same(doc)) done(true);
    });
  });
}

/** Text as an editor and the disk both hold it: line ends and a byte-order mark aside. */
function normalised(text: string): string {
  return text.replace(/^\uFEFF/, '').replace(/\r\n/g, '\n');
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

/** "1,326 B over the hard cap": the shortest form of `stillOver`. */
export function overBy(u: ProposalUsageParams): string {
  return u.size_bytes > u.hard_cap
    ? `${formatBytes(u.size_bytes - u.hard_cap)} over the hard cap`
    : `${formatBytes(u.size_bytes - u.soft_cap)} over the soft cap`;
}

/** What a proposal over a cap is told, with its numbers (undefined within both caps). */
export function stillOver(u: ProposalUsageParams, model: boolean): string | undefined {
  const draft = model ? `, or ${DRAFT}` : '';
  if (u.size_bytes > u.hard_cap) {
    return (
      `Still ${formatBytes(u.size_bytes)}, over the ${formatBytes(u.hard_cap)} hard cap by ` +
      `${formatBytes(u.size_bytes - u.hard_cap)}: remove or shorten entries here${draft} (Apply is refused until then)`
    );
  }
  if (u.size_bytes > u.soft_cap) {
    return (
      `Still ${formatBytes(u.size_bytes)}, over the ${formatBytes(u.soft_cap)} soft cap by ` +
      `${formatBytes(u.size_bytes - u.soft_cap)}: Apply works; to get under it, remove or shorten entries here${draft}`
    );
  }
  return undefined;
}

/** Show the file just written from its first line: an editor left where it was scrolled in
 * the longer file shows empty space past the end. */
async function showFromTop(uri: vscode.Uri): Promise<void> {
  const top = new vscode.Range(0, 0, 0, 0);
  const doc = await vscode.workspace.openTextDocument(uri);
  const editor = await vscode.window.showTextDocument(doc, { preview: false, selection: top });
  editor.revealRange(top, vscode.TextEditorRevealType.AtTop);
}

function fullRange(doc: vscode.TextDocument): vscode.Range {
  return new vscode.Range(0, 0, doc.lineCount, 0);
}
