/**
 * While a consolidation proposal is the active editor, the status bar shows its size against
 * the caps of the file it is for, as the server measures and judges it (`metis/proposalUsage`).
 */

import * as vscode from 'vscode';
import { formatBytes, formatUsage } from './format';
import type { ProposalUsageParams } from '../protocol';

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

  /** Show the active proposal's usage, or hide when none is active (or not yet measured). */
  render(u: ProposalUsageParams | undefined): void {
    if (!u) {
      this.item.hide();
      return;
    }
    this.item.text = `$(fold) Proposal ${formatUsage(u.size_bytes, u.soft_cap)}`;
    this.item.tooltip =
      `Proposal for ${u.file}: ${formatBytes(u.size_bytes)} (soft cap ${formatBytes(u.soft_cap)}, ` +
      `hard cap ${formatBytes(u.hard_cap)}); ${u.state}. Click to apply.`;
    this.item.backgroundColor = BACKGROUND[u.level];
    this.item.show();
  }

  dispose(): void {
    this.item.dispose();
  }
}
