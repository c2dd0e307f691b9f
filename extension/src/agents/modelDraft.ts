/** "Draft with Language Model": the active proposal rewritten by the editor's language model.
 * The instruction is the server's (`metis.consolidationPrompt`, the one place it lives), so
 * every editor asks the same; this only sends it and puts the answer in the proposal, where
 * the server's diagnostics judge it like any edit. Nothing is applied to the file here. */

import * as vscode from 'vscode';
import { stripFences } from '../views/format';
import type { MemoryDoc } from '../folders';
import { ServerCommand } from '../protocol';
import type { MetisServer } from '../server/server';

export async function draftWithModel(server: MetisServer, uri: vscode.Uri, target: MemoryDoc): Promise<void> {
  const [model] = await vscode.lm.selectChatModels();
  if (!model) {
    void vscode.window.showInformationMessage(
      'No language model is available in this editor (install or sign in to one, e.g. GitHub Copilot); edit the proposal by hand.',
    );
    return;
  }
  const doc = await vscode.workspace.openTextDocument(uri);
  const before = doc.getText();
  const prompt = await server.command(ServerCommand.consolidationPrompt, { file: target.file, text: before });
  let draft: string | undefined;
  try {
    draft = await vscode.window.withProgress(
      {
        location: vscode.ProgressLocation.Notification,
        title: `Drafting ${target.name} with ${model.name}…`,
        cancellable: true,
      },
      async (_progress, token) => {
        const response = await model.sendRequest([vscode.LanguageModelChatMessage.User(prompt)], {}, token);
        let text = '';
        for await (const chunk of response.text) {
          if (token.isCancellationRequested) return undefined;
          text += chunk;
        }
        return token.isCancellationRequested ? undefined : text;
      },
    );
  } catch (err) {
    if (err instanceof vscode.CancellationError) return;
    const reason = err instanceof Error ? err.message : String(err);
    void vscode.window.showErrorMessage(
      `${model.name} could not draft ${target.name}: ${reason}. The proposal is unchanged.`,
    );
    return;
  }
  if (draft === undefined) return; // cancelled: the proposal stays as it was
  if (doc.getText() !== before) {
    void vscode.window.showWarningMessage(
      `The proposal changed while ${model.name} drafted it; the draft was not put in.`,
    );
    return;
  }
  const cleaned = stripFences(draft);
  const edit = new vscode.WorkspaceEdit();
  edit.replace(uri, new vscode.Range(0, 0, doc.lineCount, 0), cleaned.endsWith('\n') ? cleaned : `${cleaned}\n`);
  await vscode.workspace.applyEdit(edit);
}
