/**
 * One code-server and one browser tab for a test file whose suites each open a folder of their
 * own: the tab opens each in turn, as File > Open Folder does, and keeps what it compiled of
 * the workbench (a folder opened so costs about 15 CPU-s, a new window 23).
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { Bridge, ROOT, startCodeServer, type CodeServer, type StartOptions } from './codeServer';
import { launchBrowser, openInWindow, openWorkbench } from './ui';

export class EditorSession {
  private server: CodeServer | undefined;
  private browser: Browser | undefined;
  private tab: Page | undefined;
  /** The folder code-server starts on; the suites make theirs inside it (removed by stop). */
  readonly home = fs.mkdtempSync(path.join(ROOT, '.cache', 'e2e-ws-'));

  async start(opts: Omit<StartOptions, 'workspace'>): Promise<void> {
    this.server = await startCodeServer({ ...opts, workspace: this.home });
    this.browser = await launchBrowser();
  }

  get cs(): CodeServer {
    if (this.server === undefined) throw new Error('the editor session has not started');
    return this.server;
  }

  /** The tab, showing `folder` (as openWorkbench takes it) with its own extension host. */
  async open(folder: string): Promise<Page> {
    if (this.browser === undefined) throw new Error('the editor session has not started');
    new Bridge(this.cs.bridgeFile).forgetWindow(); // the bridge that answers is the new window's
    if (this.tab === undefined) this.tab = await openWorkbench(this.browser, this.cs.url, folder);
    else await openInWindow(this.tab, this.cs.url, folder);
    return this.tab;
  }

  async stop(): Promise<void> {
    await this.browser?.close().catch(() => undefined);
    await this.server?.stop();
    fs.rmSync(this.home, { recursive: true, force: true });
  }
}
