/** Which editor shows a document of a scheme, and closing every editor of a document. */

import * as vscode from 'vscode';

/** The active editor's document of `scheme`, including the modified side of a diff editor
 * (which need not be the "active text editor"). */
export function activeDocumentOf(scheme: string): vscode.Uri | undefined {
  const uri = vscode.window.activeTextEditor?.document.uri;
  if (uri?.scheme === scheme) return uri;
  const tab = vscode.window.tabGroups.activeTabGroup.activeTab;
  if (tab?.input instanceof vscode.TabInputTextDiff && tab.input.modified.scheme === scheme) {
    return tab.input.modified;
  }
  return undefined;
}

/** Close every tab showing `uri`, alone or as the modified side of a diff. */
export async function closeEditorsOf(uri: vscode.Uri): Promise<void> {
  const key = uri.toString();
  const tabs = vscode.window.tabGroups.all
    .flatMap((g) => g.tabs)
    .filter((t) => {
      const input = t.input;
      if (input instanceof vscode.TabInputTextDiff) return input.modified.toString() === key;
      if (input instanceof vscode.TabInputText) return input.uri.toString() === key;
      return false;
    });
  await vscode.window.tabGroups.close(tabs);
}
