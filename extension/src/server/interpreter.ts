/**
 * Which Python runs the server, in this order: the `metis.interpreter` setting, the Python
 * extension's active interpreter (when that extension is installed), then `python3`/`python`
 * on PATH. Pure logic with its sources injected, so the order is unit-tested without an editor.
 */

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

export type InterpreterSource = 'setting' | 'python-extension' | 'path';

export interface ResolvedInterpreter {
  path: string;
  source: InterpreterSource;
}

export interface InterpreterSources {
  /** The `metis.interpreter` setting as configured (may be empty). */
  setting(): string | undefined;
  /** The Python extension's active interpreter, or undefined when it is absent or has none. */
  pythonExtension(): Promise<string | undefined>;
  /** The first of `names` found on PATH, or undefined. */
  onPath(names: readonly string[]): Promise<string | undefined>;
}

export function pathNames(platform: NodeJS.Platform = process.platform): string[] {
  return platform === 'win32' ? ['python', 'python3'] : ['python3', 'python'];
}

/** `~/x` -> home/x; anything else unchanged. */
export function expandHome(p: string, home: string = os.homedir()): string {
  if (p === '~') return home;
  if (p.startsWith('~/') || p.startsWith('~\\')) return path.join(home, p.slice(2));
  return p;
}

export async function resolveInterpreter(
  sources: InterpreterSources,
  platform: NodeJS.Platform = process.platform,
): Promise<ResolvedInterpreter | undefined> {
  const configured = sources.setting()?.trim();
  if (configured) return { path: expandHome(configured), source: 'setting' };
  const fromExtension = await sources.pythonExtension().catch(() => undefined);
  if (fromExtension) return { path: fromExtension, source: 'python-extension' };
  const fromPath = await sources.onPath(pathNames(platform));
  if (fromPath) return { path: fromPath, source: 'path' };
  return undefined;
}

/** Look a program up on PATH the way a shell would (PATHEXT on Windows). */
export function findOnPath(
  names: readonly string[],
  envPath: string | undefined = process.env.PATH,
  platform: NodeJS.Platform = process.platform,
  isExecutable: (file: string) => boolean = defaultIsExecutable,
): string | undefined {
  const dirs = (envPath ?? '').split(platform === 'win32' ? ';' : ':').filter(Boolean);
  const exts = platform === 'win32' ? (process.env.PATHEXT ?? '.EXE;.CMD;.BAT').split(';') : [''];
  for (const name of names) {
    for (const dir of dirs) {
      for (const ext of exts) {
        const candidate = path.join(dir, name + ext);
        if (isExecutable(candidate)) return candidate;
      }
    }
  }
  return undefined;
}

function defaultIsExecutable(file: string): boolean {
  try {
    const st = fs.statSync(file);
    if (!st.isFile()) return false;
    if (process.platform === 'win32') return true;
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export function describeSource(source: InterpreterSource): string {
  return {
    setting: 'the metis.interpreter setting',
    'python-extension': "the Python extension's selected interpreter",
    path: 'PATH',
  }[source];
}

/** What `server.py lsp` writes first on stderr (and `server.py --check` on stdout). */
export interface CheckReport {
  ok: boolean;
  problem: string | null;
  version: string;
  executable: string;
  platform: string;
}

/** What prefixes the report on the language server's stderr (LAUNCH_REPORT in server.py). */
export const LAUNCH_REPORT_PREFIX = 'metis-memory-launch: ';

/** The launch report in the stderr a language server has written so far: only a whole line
 * counts, so a report still arriving in pieces reads as not yet there. */
export function parseLaunchReport(stderr: string): CheckReport | undefined {
  const whole = stderr.slice(0, stderr.lastIndexOf('\n') + 1);
  const line = whole.split(/\r?\n/).find((l) => l.startsWith(LAUNCH_REPORT_PREFIX));
  return line ? reportOf(line.slice(LAUNCH_REPORT_PREFIX.length)) : undefined;
}

function reportOf(json: string): CheckReport | undefined {
  try {
    const value: unknown = JSON.parse(json);
    if (typeof value !== 'object' || value === null) return undefined;
    const v = value as Record<string, unknown>;
    if (typeof v.ok !== 'boolean') return undefined;
    return {
      ok: v.ok,
      problem: typeof v.problem === 'string' ? v.problem : null,
      version: typeof v.version === 'string' ? v.version : '?',
      executable: typeof v.executable === 'string' ? v.executable : '?',
      platform: typeof v.platform === 'string' ? v.platform : '?',
    };
  } catch {
    return undefined;
  }
}

/** The one notification's text when the server cannot start. */
export function startFailureMessage(interp: ResolvedInterpreter | undefined, what: string): string {
  if (!interp) {
    return (
      'Metis Memory could not start its language server: no Python interpreter found ' +
      '(metis.interpreter is empty, the Python extension gave none, and neither python3 nor ' +
      'python is on PATH). Pick a CPython 3.10–3.15 interpreter.'
    );
  }
  return (
    `Metis Memory could not start its language server with ${interp.path} ` +
    `(from ${describeSource(interp.source)}): ${what}`
  );
}

/** The informative line of a failed run: a traceback's last line, else the first line. */
export function stderrSummary(stderr: string): string {
  const lines = stderr
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean);
  const last = lines.at(-1) ?? '';
  return /^[A-Za-z_.]*(Error|Exception)\b/.test(last) ? last : (lines[0] ?? '');
}
