/**
 * While a consolidation proposal is the active editor, the status bar shows its size against
 * the caps of the file it is for (the caps come from the server's usage payload).
 */

import * as vscode from 'vscode';
import { formatBytes, formatUsage, severityOf, utf8Length } from './format';
import type { MemoryFileName } from '../protocol';

export interface ProposalCaps {
  file: MemoryFileName;
  softCap: number;
  hardCap: number;
}

const BACKGROUND = {
  ok: undefined,
  warning: new vscode.ThemeColor('statusBarItem.warningBackground'),
  error: new vscode.ThemeColor('statusBarItem.errorBackground'),
};

export class ProposalStatus implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('metis.proposal', vscode.StatusBarAlignment.Left, 49);

  constructor() {
    this.item.name = 'Metis Memory proposal';
    this.item.command = 'metis.applyConsolidation';
  }

  /** Show `text`'s size for the proposal `p`, or hide when no proposal is active. */
  render(p: ProposalCaps | undefined, text: string | undefined): void {
    if (!p || text === undefined) {
      this.item.hide();
      return;
    }
    const size = utf8Length(text);
    const usage = {
      size_bytes: size,
      soft_cap: p.softCap,
      hard_cap: p.hardCap,
      over_soft_cap: false,
      over_hard_cap: false,
    };
    this.item.text = `$(fold) Proposal ${formatUsage(size, p.softCap)}`;
    this.item.tooltip = `Proposal for ${p.file}: ${formatBytes(size)} (soft cap ${formatBytes(p.softCap)}, hard cap ${formatBytes(p.hardCap)}). Click to apply.`;
    this.item.backgroundColor = BACKGROUND[severityOf(usage)];
    this.item.show();
  }

  dispose(): void {
    this.item.dispose();
  }
}
