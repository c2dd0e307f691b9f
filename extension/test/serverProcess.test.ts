/**
 * Launching the server: real processes of the real Python, with launchers that behave as the
 * bundled one does (or fails to), and the real launcher with no libraries beside it.
 */

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { LAUNCH_REPORT_PREFIX } from '../src/server/interpreter';
import { launchServer, type Launch, type ProcessLog } from '../src/server/serverProcess';

const root = path.join(__dirname, '..', '..');
const python = process.env.METIS_PYTHON ?? path.join(root, '.venv', 'bin', 'python');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'metis-launch-'));

function launcher(name: string, body: string): string {
  const file = path.join(dir, `${name}.py`);
  fs.writeFileSync(file, `import sys, json\n${body}\n`);
  return file;
}

function recordingLog(): ProcessLog & { text: string } {
  const log = {
    text: '',
    info: (m: string) => {
      log.text += `info ${m}\n`;
    },
    error: (m: string) => {
      log.text += `error ${m}\n`;
    },
    append: (t: string) => {
      log.text += t;
    },
  };
  return log;
}

function problemOf(launch: Launch): string {
  assert.ok('problem' in launch, 'the launch should have failed');
  return launch.problem;
}

const REPORT = (ok: boolean, problem: string | null): string =>
  `sys.stderr.write(${JSON.stringify(LAUNCH_REPORT_PREFIX)} + json.dumps({"ok": ${ok ? 'True' : 'False'}, "problem": ${JSON.stringify(problem)}, "version": "3.12.1", "executable": sys.executable, "platform": "Linux-x86_64"}) + "\\n")`;

describe('launchServer', () => {
  after(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('hands over the running process once the report says it runs, its stderr still logged', async () => {
    const log = recordingLog();
    // The report arrives in two writes; the process then serves stdin as the server would.
    const file = launcher(
      'ok',
      `line = ${JSON.stringify(LAUNCH_REPORT_PREFIX)} + json.dumps({"ok": True, "problem": None, "version": "3.12.1", "executable": sys.executable, "platform": "Linux-x86_64"}) + "\\n"\n` +
        'sys.stderr.write(line[:20]); sys.stderr.flush()\n' +
        'import time; time.sleep(0.05)\n' +
        'sys.stderr.write(line[20:]); sys.stderr.flush()\n' +
        'data = sys.stdin.readline()\n' +
        'sys.stderr.write("served " + data); sys.stderr.flush()',
    );
    const launch = await launchServer(python, file, log);
    assert.ok('process' in launch, `launch failed: ${'problem' in launch ? launch.problem : ''}`);
    assert.equal(launch.report.version, '3.12.1');
    assert.equal(launch.process.exitCode, null, 'the process runs on');
    const exited = new Promise((resolve) => launch.process.once('close', resolve));
    launch.process.stdin.end('hello\n');
    await exited;
    assert.match(log.text, /info server launched: Python 3\.12\.1 on Linux-x86_64/);
    assert.match(log.text, /served hello/);
  });

  it('says what the launcher reported when it cannot run the server', async () => {
    const file = launcher(
      'refused',
      `${REPORT(false, 'it is Python 3.9; the server needs Python 3.10 or newer')}\nsys.exit(3)`,
    );
    assert.equal(
      problemOf(await launchServer(python, file, recordingLog())),
      'it is Python 3.9; the server needs Python 3.10 or newer',
    );
  });

  it("names the real launcher's reason when it carries no libraries for this Python", async () => {
    // extension/python/server.py has no libs/ beside it until the VSIX is built.
    const real = path.join(root, 'extension', 'python', 'server.py');
    const copy = path.join(fs.mkdtempSync(path.join(dir, 'tool-')), 'server.py');
    fs.copyFileSync(real, copy);
    assert.match(
      problemOf(await launchServer(python, copy, recordingLog())),
      /this package carries the server for Python none only/,
    );
  });

  it('summarises a launcher that dies before reporting', async () => {
    const log = recordingLog();
    const file = launcher('dies', 'import no_such_module_here');
    const problem = problemOf(await launchServer(python, file, log));
    assert.equal(
      problem,
      "it is not a Python that can run the server (ModuleNotFoundError: No module named 'no_such_module_here')",
    );
    assert.match(log.text, /the server stopped before it started \(exit code 1\)/);
    assert.match(problemOf(await launchServer(python, launcher('silent', 'sys.exit(7)'), log)), /\(exit code 7\)$/);
  });

  it('tells a missing interpreter, a file that is not executable and a missing launcher apart', async () => {
    const file = launcher('unused', '');
    assert.equal(
      problemOf(await launchServer(path.join(dir, 'no-python'), file, recordingLog())),
      'that file does not exist',
    );
    assert.equal(problemOf(await launchServer(file, file, recordingLog())), 'that file is not executable');
    assert.match(
      problemOf(await launchServer(python, path.join(dir, 'missing.py'), recordingLog())),
      /has no bundled server .*missing\.py is missing/,
    );
  });
});
