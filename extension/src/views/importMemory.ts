/**
 * Bringing in what agent hosts remember (Claude Code, Codex, Gemini CLI, Qwen Code, Copilot):
 * the server finds it (`metis.hostMemoryFound`) and makes a proposal per file
 * (`metis.importHostMemory`: MEMORY.md, USER.md, the user memory), each entry placed, what is
 * already there left out, secrets refused. Each file's proposal opens as the consolidation
 * diff, to edit and Apply (a compare-and-swap on the bytes it was made from); nothing is
 * written before. Offered once per folder that has host memory and none of ours
 * (`metis.offerImport`); **Metis: Import Agent Memory…** at any time.
 */

import * as vscode from 'vscode';
import { chooseWorkspace, workspaceDoc, workspaceFromKey, type MemoryDoc, type MemoryWorkspace } from '../folders';
import { inertLinks } from '../plainText';
import { ServerCommand, USER_MEMORY, type HostMemoryFound, type ImportProposal, type ImportTarget } from '../protocol';
import { textForPeople } from '../server/commandError';
import type { MetisServer } from '../server/server';
import type { Consolidation } from './consolidation';
import { bringInLabel, hostList, hostTitle, importSummary, targetName } from './importText';
import { userMemory } from './userMemory';

/** globalState: folder URI -> true, for each folder looked at once for agents' memory. */
const LOOKED = 'metis.agentMemoryLooked';
/** The read-only empty left side of the diff of a file not written yet. */
const NONE_SCHEME = 'metis-import';

export class HostMemoryImport implements vscode.Disposable {
  private readonly disposables: vscode.Disposable[] = [];
  /** Folders this window has looked at (or is looking at). */
  private readonly asked = new Set<string>();

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly server: MetisServer,
    private readonly consolidation: Consolidation,
    private readonly log: vscode.LogOutputChannel,
  ) {
    this.disposables.push(
      vscode.workspace.registerTextDocumentContentProvider(NONE_SCHEME, { provideTextDocumentContent: () => '' }),
      server.onDidStart(() => void this.offer()),
      vscode.workspace.onDidChangeWorkspaceFolders(() => void this.offer()),
    );
  }

  /** Whether the offer may be made here: a trusted workspace, and the setting on. */
  private mayOffer(): boolean {
    return vscode.workspace.isTrusted && vscode.workspace.getConfiguration('metis').get<boolean>('offerImport', true);
  }

  /** The window's local folders not looked at yet (each is, once). */
  private unseen(): vscode.WorkspaceFolder[] {
    const looked = this.context.globalState.get<Record<string, true>>(LOOKED, {});
    return (vscode.workspace.workspaceFolders ?? []).filter(
      (f) => f.uri.scheme === 'file' && !looked[f.uri.toString()] && !this.asked.has(f.uri.toString()),
    );
  }

  /** Whether a folder of this window was never looked at for agents' memory: worth starting
   * the server for, once, even with no memory of ours in sight (that is when the offer helps). */
  wantsToLook(): boolean {
    return this.mayOffer() && this.unseen().length > 0;
  }

  /**
   * Look once per folder (ever: globalState) for agents' memory; where there is some and none
   * of ours, offer to bring it in.
   */
  async offer(): Promise<void> {
    if (!this.mayOffer() || !this.server.running) return;
    for (const folder of this.unseen()) {
      const key = folder.uri.toString();
      // Remembered before anything is asked or shown: a window closed on the question, or a
      // second look started meanwhile, does not ask again.
      this.asked.add(key);
      const looked = this.context.globalState.get<Record<string, true>>(LOOKED, {});
      await this.context.globalState.update(LOOKED, { ...looked, [key]: true });
      let found: HostMemoryFound;
      try {
        found = await this.server.command(ServerCommand.hostMemoryFound, { folder: key });
      } catch (err) {
        this.log.warn(`agents' memory of ${folder.name}: ${err instanceof Error ? err.message : String(err)}`);
        continue;
      }
      if (found.hosts.length === 0 || found.ours) {
        this.log.info(
          `agents' memory of ${folder.name}: ${found.ours ? 'it has memory of ours' : 'none found'}; no offer`,
        );
        continue;
      }
      this.log.info(`agents' memory of ${folder.name}: ${found.hosts.join(', ')}; offered once`);
      const button = bringInLabel(found.hosts);
      void vscode.window
        .showInformationMessage(
          `${hostList(found.hosts)} ${found.hosts.length === 1 ? 'remembers' : 'remember'} things ` +
            `about ${folder.name} or about you, and ${folder.name} has no Metis memory yet. Bring them in? ` +
            'You see each file’s proposal first.',
          button,
        )
        .then((choice) => {
          if (choice !== button) return;
          this.importInto(workspaceFromKey(key), found.hosts).catch((err: unknown) => {
            this.fail(err);
          });
        });
    }
    for (const folder of vscode.workspace.workspaceFolders ?? []) {
      if (!this.asked.has(folder.uri.toString()))
        this.log.info(`agents' memory of ${folder.name}: looked for before, not again`);
    }
  }

  /** **Metis: Import Agent Memory…**: a folder, the hosts found (all ticked), the proposals. */
  async run(): Promise<void> {
    const folder = await chooseWorkspace();
    if (!folder) return;
    const found = await this.server.command(ServerCommand.hostMemoryFound, { folder: folder.uri.toString() });
    if (found.hosts.length === 0) {
      void vscode.window.showInformationMessage(
        `No agent host keeps memory for ${folder.name} or for you that Metis Memory can read ` +
          '(Claude Code, Codex, Gemini CLI, Qwen Code and Copilot were looked for).',
      );
      return;
    }
    let hosts = found.hosts;
    if (hosts.length > 1) {
      const picked = await vscode.window.showQuickPick(
        hosts.map((h) => ({ label: hostTitle(h), host: h, picked: true })),
        {
          canPickMany: true,
          title: `Import agent memory into ${folder.name}`,
          placeHolder: 'Whose memory to bring in',
        },
      );
      if (!picked || picked.length === 0) return;
      hosts = picked.map((p) => p.host);
    }
    await this.importInto(folder, hosts);
  }

  /** Ask for the proposal and open each file's that adds something; say what it brings. */
  async importInto(folder: MemoryWorkspace, hosts: string[]): Promise<void> {
    const proposal = await this.server.command(ServerCommand.importHostMemory, {
      folder: folder.uri.toString(),
      hosts,
    });
    this.record(folder, proposal);
    for (const t of proposal.targets) {
      if (t.added.length > 0 && t.problem === null) await this.show(folder, hosts, t);
    }
    const text = inertLinks(importSummary(proposal)); // it may quote a host's path
    const worry = proposal.targets.some((t) => t.refused.length > 0 || t.over_by > 0 || t.problem !== null);
    if (worry) void vscode.window.showWarningMessage(text);
    else void vscode.window.showInformationMessage(text);
  }

  /** One file's proposal in the consolidation diff; a refused Apply makes the import again. */
  private async show(folder: MemoryWorkspace, hosts: string[], t: ImportTarget): Promise<void> {
    const doc: MemoryDoc | undefined =
      t.target === USER_MEMORY ? await userMemory(this.server) : workspaceDoc(folder, t.target);
    if (!doc) return;
    const left = t.exists ? undefined : vscode.Uri.from({ scheme: NONE_SCHEME, path: `/${doc.name} (not there yet)` });
    await this.consolidation.show(
      {
        doc,
        baseline: t.current,
        baselineHash: t.expected_hash,
        startOver: () => {
          this.again(folder, hosts, t.target).catch((err: unknown) => {
            this.fail(err);
          });
        },
      },
      t.proposed,
      undefined,
      left,
    );
  }

  /** The file changed since its proposal was made: the import made again, that file's shown. */
  private async again(folder: MemoryWorkspace, hosts: string[], target: ImportTarget['target']): Promise<void> {
    const proposal = await this.server.command(ServerCommand.importHostMemory, {
      folder: folder.uri.toString(),
      hosts,
    });
    const t = proposal.targets.find((p) => p.target === target);
    if (t && t.added.length > 0 && t.problem === null) await this.show(folder, hosts, t);
    else void vscode.window.showInformationMessage(inertLinks(importSummary(proposal)));
  }

  /** What was read, and each entry with where it came from, in the log. */
  private record(folder: MemoryWorkspace, proposal: ImportProposal): void {
    const lines = [
      `import into ${folder.name} from ${proposal.hosts.join(', ')}: read ${proposal.read.join(', ') || 'nothing'}`,
    ];
    for (const t of proposal.targets) {
      for (const a of t.added) lines.push(`  + ${targetName(t)}: ${a.text} (${a.source}:${a.line})`);
      for (const d of t.duplicates) lines.push(`  = ${targetName(t)}: ${d.text} (already in ${d.of ?? 'it'})`);
      for (const r of t.refused) lines.push(`  ! ${targetName(t)}: refused, ${r.rule} (${r.source}:${r.line})`);
    }
    for (const s of proposal.skipped) lines.push(`  skipped ${s.path}: ${s.reason}`);
    this.log.info(lines.join('\n'));
  }

  private fail(err: unknown): void {
    this.log.error(err instanceof Error ? err.message : String(err));
    void vscode.window.showErrorMessage(textForPeople(err));
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}
