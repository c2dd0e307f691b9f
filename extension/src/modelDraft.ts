/** "Draft with Language Model": the active proposal rewritten by the editor's language model
 * to fit the soft cap. The prompt lives here, and only here. */

import * as vscode from 'vscode';
import { stripFences, utf8Length } from './format';
import type { MemoryFileName } from './protocol';

export async function draftWithModel(uri: vscode.Uri, file: MemoryFileName, softCap: number): Promise<void> {
  const [model] = await vscode.lm.selectChatModels();
  if (!model) {
    void vscode.window.showInformationMessage(
      'No language model is available in this editor; edit the proposal by hand.',
    );
    return;
  }
  const doc = await vscode.workspace.openTextDocument(uri);
  const current = doc.getText();
  const instructions = [
    `You curate ${file}, a bounded memory file that goes into an AI agent's system prompt.`,
    `Rewrite it to at most ${softCap} UTF-8 bytes (it is ${utf8Length(current)} now).`,
    'Keep every distinct fact that still matters; merge duplicates and near-duplicates; shorten wording;',
    'keep the markdown structure (headings, one "- " list item per fact). Never invent facts.',
    'Reply with the new file content only: no preamble, no code fences.',
    '',
    current,
  ].join('\n');
  const draft = await vscode.window.withProgress(
    {
      location: vscode.ProgressLocation.Notification,
      title: `Drafting ${file} with ${model.name}…`,
      cancellable: true,
    },
    async (_progress, token) => {
      const response = await model.sendRequest([vscode.LanguageModelChatMessage.User(instructions)], {}, token);
      let text = '';
      for await (const chunk of response.text) text += chunk;
      return text;
    },
  );
  const cleaned = stripFences(draft);
  const edit = new vscode.WorkspaceEdit();
  edit.replace(uri, fullRange(doc), cleaned.endsWith('\n') ? cleaned : `${cleaned}\n`);
  await vscode.workspace.applyEdit(edit);
}

function fullRange(doc: vscode.TextDocument): vscode.Range {
  return new vscode.Range(0, 0, doc.lineCount, 0);
}
