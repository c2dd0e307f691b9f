import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import {
  expandHome,
  findOnPath,
  LAUNCH_REPORT_PREFIX,
  parseLaunchReport,
  pathNames,
  resolveInterpreter,
  startFailureMessage,
  stderrSummary,
  type InterpreterSources,
} from '../src/server/interpreter';

function sources(
  setting: string | undefined,
  ext: string | undefined,
  onPath: string | undefined,
  calls: string[] = [],
): InterpreterSources {
  return {
    setting: () => {
      calls.push('setting');
      return setting;
    },
    pythonExtension: async () => {
      calls.push('python-extension');
      return ext;
    },
    onPath: async (names) => {
      calls.push(`path:${names.join(',')}`);
      return onPath;
    },
  };
}

describe('resolveInterpreter', () => {
  it('takes the setting first and asks nothing else', async () => {
    const calls: string[] = [];
    assert.deepEqual(
      await resolveInterpreter(sources('/opt/py/bin/python3', '/ext/python', '/usr/bin/python3', calls), 'linux'),
      {
        path: '/opt/py/bin/python3',
        source: 'setting',
      },
    );
    assert.deepEqual(calls, ['setting']);
  });
  it('then the Python extension', async () => {
    const calls: string[] = [];
    assert.deepEqual(await resolveInterpreter(sources('  ', '/ext/python', '/usr/bin/python3', calls), 'linux'), {
      path: '/ext/python',
      source: 'python-extension',
    });
    assert.deepEqual(calls, ['setting', 'python-extension']);
  });
  it('then python3, python on PATH', async () => {
    const calls: string[] = [];
    assert.deepEqual(await resolveInterpreter(sources(undefined, undefined, '/usr/bin/python3', calls), 'linux'), {
      path: '/usr/bin/python3',
      source: 'path',
    });
    assert.deepEqual(calls, ['setting', 'python-extension', 'path:python3,python']);
  });
  it('treats a failing Python extension as absent', async () => {
    const s = sources(undefined, undefined, '/usr/bin/python3');
    s.pythonExtension = async () => {
      throw new Error('activation failed');
    };
    assert.equal((await resolveInterpreter(s, 'linux'))?.source, 'path');
  });
  it('gives undefined when nothing is found', async () => {
    assert.equal(await resolveInterpreter(sources(undefined, undefined, undefined), 'linux'), undefined);
  });
  it('expands ~ in the setting', async () => {
    assert.equal(
      (await resolveInterpreter(sources('~/venv/bin/python', undefined, undefined), 'linux'))?.path,
      path.join(os.homedir(), 'venv/bin/python'),
    );
    assert.equal(expandHome('/abs', '/home/u'), '/abs');
  });
  it('looks for python before python3 on Windows', () => {
    assert.deepEqual(pathNames('win32'), ['python', 'python3']);
    assert.deepEqual(pathNames('linux'), ['python3', 'python']);
  });
});

describe('findOnPath', () => {
  it('finds the first executable name in PATH order', () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'metis-path-'));
    const a = path.join(root, 'a');
    const b = path.join(root, 'b');
    fs.mkdirSync(a);
    fs.mkdirSync(b);
    fs.writeFileSync(path.join(a, 'python'), '', { mode: 0o755 });
    fs.writeFileSync(path.join(b, 'python3'), '', { mode: 0o755 });
    fs.writeFileSync(path.join(a, 'python3'), '', { mode: 0o644 }); // not executable: skipped
    const envPath = [a, b].join(':');
    assert.equal(findOnPath(['python3', 'python'], envPath, 'linux'), path.join(b, 'python3'));
    assert.equal(findOnPath(['python'], envPath, 'linux'), path.join(a, 'python'));
    assert.equal(findOnPath(['python4'], envPath, 'linux'), undefined);
    fs.rmSync(root, { recursive: true });
  });
});

describe('check report and failure message', () => {
  it('reads the launch report, once its line is whole', () => {
    const line = `${LAUNCH_REPORT_PREFIX}{"ok": false, "problem": "it is Python 3.9", "version": "3.9.18", "executable": "/x", "platform": "Linux-x86_64"}`;
    const want = {
      ok: false,
      problem: 'it is Python 3.9',
      version: '3.9.18',
      executable: '/x',
      platform: 'Linux-x86_64',
    };
    assert.deepEqual(parseLaunchReport(`noise\n${line}\nmore\n`), want);
    assert.equal(parseLaunchReport(`noise\n${line.slice(0, 40)}`), undefined);
    assert.equal(parseLaunchReport(`noise\n${line}`), undefined);
    assert.deepEqual(parseLaunchReport(`${line}\r\n`), want);
    assert.equal(parseLaunchReport('Traceback ...\n'), undefined);
    assert.equal(parseLaunchReport(`${LAUNCH_REPORT_PREFIX}{not json\n`), undefined);
    assert.equal(parseLaunchReport(`{"ok": true}\n`), undefined);
  });
  it('names the interpreter, where it came from and what failed', () => {
    assert.equal(
      startFailureMessage(
        { path: '/usr/bin/python3', source: 'path' },
        'it is Python 3.9; the server needs Python 3.10 or newer',
      ),
      'Metis Memory could not start its language server with /usr/bin/python3 (from PATH): it is Python 3.9; the server needs Python 3.10 or newer',
    );
    assert.match(startFailureMessage(undefined, 'x'), /no Python interpreter found/);
  });
});

describe('stderrSummary', () => {
  it("takes a traceback's last line, else the first", () => {
    assert.equal(
      stderrSummary('Traceback (most recent call last):\n  File "x"\nModuleNotFoundError: No module named x\n'),
      'ModuleNotFoundError: No module named x',
    );
    assert.equal(
      stderrSummary(
        "pyenv: python3.13: command not found\n\nThe `python3.13' command exists in these Python versions:\n  3.13.0\n",
      ),
      'pyenv: python3.13: command not found',
    );
    assert.equal(stderrSummary(''), '');
  });
});
