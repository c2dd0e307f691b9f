"""The memory reader that `init` writes into the plugins of hosts that rebuild their system
prompt on every call (opencode's `experimental.chat.system.transform`, the Cline CLI's
rules): JavaScript that runs inside the host's own process.

It never parses or composes the memory itself: caps, redaction, the secret rules and the
delimiters stay in one place, `metis-memory hook`, which it runs once per change of the
files. Between changes it answers from what it last got, after a `stat` of the three files
(the workspace's two, and the user memory's USER.md, found by `store/user_folder.py`'s rule:
`userMemoryFile`; device, inode, size, modification and change times): no process is
spawned, and the text is the same bytes call after call, which keeps the host's prompt
cache warm. A missing file is stat'ed without an exception (`throwIfNoEntry`), as most
workspaces and users have one missing.

The times alone miss a file rewritten in place with the same size within one tick of the
filesystem's clock (a second on ext4 with 128-byte inodes, HFS+ or FAT; a kernel tick on
Linux before 6.13): an editor's save that fixed "5" to "6" left the old text in every later
call. So while the newest time is within a tick (COARSE_TICK_MS when it is a whole second,
FINE_TICK_MS otherwise) of the moment the text was asked for, the files' first
COMPARED_BYTES are compared too; once it is older, any later write changes a time, and the
stat alone decides (the steady state reads nothing). Only regular files are read, opened
without blocking: the reader runs in the host's event loop, where a FIFO would freeze it.

What it cannot get (no `metis-memory` on the PATH, a hook that failed) is not kept: the
next call tries again, and the model is told in one short line instead of getting nothing.
A hook that does not answer within HOOK_TIMEOUT_MS is ended with every process it started
(its own process group), and for HOLD_AFTER_TIMEOUT_MS it is not run again for the files
as they were: the host asks before every model call, and each would wait the timeout.
"""

from __future__ import annotations

import json
import re

from .config_edits import OWNED_MARK, split_command

HOOK_TIMEOUT_MS = 15_000
"""How long the plugin waits for `metis-memory hook`: above its own stale-check budget
(1 s) and a cold start on a busy machine, below the point where a user waits on a hung
prompt."""

HOLD_AFTER_TIMEOUT_MS = 60_000
"""How long a hook that timed out is not run again for the same files (each model call
would otherwise wait HOOK_TIMEOUT_MS): a change to the files asks again at once."""

MAX_OUTPUT_BYTES = 1 << 20
"""The hook prints at most ~9,000 characters (context.MAX_CONTEXT_CHARS); more is a bug."""

COMPARED_BYTES = 64 * 1024
"""How much of each file is compared while its times are recent: 16 times MEMORY.md's hard
cap, past which the hook shows nothing of a file (it cuts it at the cap, giving its size)."""

COARSE_TICK_MS = 3_000
"""A clock whose times are whole seconds: FAT's 2 s, and a second of slack for a network
filesystem's clock running behind this machine's."""

FINE_TICK_MS = 100
"""A clock with finer times: a kernel tick (10 ms at most on Linux, 15.6 ms on Windows)."""

MAX_PROBLEM_CHARS = 1000
"""The hook's last stderr line, as the model is told it: the hook's own are at most this
(hook.MAX_WARNING_CHARS), another command's could be megabytes. Cut in the middle, as the
hook cuts its own: the end says what to do."""

_PLACEHOLDER = re.compile(r"@([A-Z_]+)@")


def reader_js(command: str, host: str, event: str, *, timeout_ms: int = HOOK_TIMEOUT_MS) -> str:
    """The reader's JavaScript (an ES module's top level, with its imports): a function
    `metisMemory()` that resolves to the memory text, or "" when there is none.

    `command` runs metis-memory (as init was given it); `host` and `event` are what the
    hook is asked as (`metis-memory hook --host HOST`, with `{"hook_event_name": EVENT}`).
    The workspace is the folder two levels above the plugin file (`.opencode/plugins/`,
    `.cline/plugins/`): the plugin serves the workspace it was written into.
    `timeout_ms`: HOOK_TIMEOUT_MS, shorter in tests."""
    argv = [*split_command(command), "hook", "--host", host, "--workspace"]
    values = {
        "ARGV": json.dumps(argv),
        "EVENT": json.dumps({"hook_event_name": event}),
        "TIMEOUT": str(timeout_ms),
        "HOLD": str(HOLD_AFTER_TIMEOUT_MS),
        "MAX_OUTPUT": str(MAX_OUTPUT_BYTES),
        "COMPARED": str(COMPARED_BYTES),
        "COARSE_TICK": str(COARSE_TICK_MS),
        "FINE_TICK": str(FINE_TICK_MS),
        "MAX_PROBLEM": str(MAX_PROBLEM_CHARS),
        "MARK": OWNED_MARK,
    }
    # One pass: a value (a command named `mm@EVENT@`) is never read again as a placeholder.
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], _READER)


_READER = """\
import { spawn } from "node:child_process";
import { closeSync, constants, existsSync, fstatSync, openSync, readSync, statSync } from "node:fs";
import { homedir, userInfo } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

// @MARK@: the memory (the user memory, and the workspace's .metis/) for this host,
// composed by `metis-memory hook`, which applies the caps, the redaction and the secret rules.
const WORKSPACE = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const COMMAND = @ARGV@;
const INPUT = JSON.stringify(@EVENT@);

// The user memory's USER.md, where the hook reads it (metis-memory's store/user_folder.py,
// platformdirs' user config folder): %LOCALAPPDATA% on Windows; elsewhere an absolute
// XDG_CONFIG_HOME, else ~/.config (~/Library/Application Support on macOS). A relative HOME
// counts as unset (the account's home), as platformdirs takes it.
function userMemoryFile(env = process.env, platform = process.platform) {
  const home = () => {
    if (env.HOME?.startsWith("/")) return env.HOME.replace(/\\/+$/, "") || "/";
    try {
      return userInfo().homedir.replace(/\\/+$/, "") || "/";
    } catch {
      return homedir();
    }
  };
  let config;
  if (platform === "win32") config = env.LOCALAPPDATA || join(homedir(), "AppData", "Local");
  else if (env.XDG_CONFIG_HOME?.startsWith("/")) config = env.XDG_CONFIG_HOME;
  else if (platform === "darwin") config = join(home(), "Library", "Application Support");
  else config = join(home(), ".config");
  return join(config, "metis-memory", "USER.md");
}

const FILES = [
  ...["MEMORY.md", "USER.md"].map((name) => join(WORKSPACE, ".metis", name)),
  userMemoryFile(),
];
const TIMEOUT_MS = @TIMEOUT@;
const HEAD = Buffer.alloc(@COMPARED@);
const POSIX = process.platform !== "win32";

let last = { key: null, heads: null, settled: false, text: "" };
let running = null;
let held = { key: null, until: 0, text: "" };

function stats() {
  return FILES.map((file) => {
    try {
      return statSync(file, { bigint: true, throwIfNoEntry: false }) ?? "ENOENT";
    } catch (error) {
      return String(error?.code ?? "unreadable");
    }
  });
}

function keyOf(seen) {
  const one = (s) => `${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`;
  return seen.map((s) => (typeof s === "string" ? s : one(s))).join("|");
}

// Whether a write after `since` (ms) must change a time `seen` shows: each is older than
// one tick of the filesystem's clock before it (whole seconds: a coarse clock's).
function settled(seen, since) {
  return seen.every((s) => {
    if (typeof s === "string") return true;
    const newest = s.ctimeNs > s.mtimeNs ? s.ctimeNs : s.mtimeNs;
    const tick = newest % 1000000000n === 0n ? @COARSE_TICK@ : @FINE_TICK@;
    return newest < BigInt(since - tick) * 1000000n;
  });
}

// The first bytes of each regular file, opened without blocking (never a FIFO's wait).
function heads(seen) {
  return JSON.stringify(
    FILES.map((file, i) => {
      if (typeof seen[i] === "string" || !seen[i].isFile()) return "";
      let fd;
      try {
        fd = openSync(file, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
        if (!fstatSync(fd).isFile()) return "";
        return HEAD.toString("latin1", 0, readSync(fd, HEAD, 0, HEAD.length, 0));
      } catch (error) {
        return String(error?.code ?? "unreadable");
      } finally {
        if (fd !== undefined) closeSync(fd);
      }
    }),
  );
}

function oneLine(text, limit) {
  const line = String(text ?? "").replace(/[\\u0000-\\u001f\\u007f]+/g, " ").trim();
  if (line.length <= limit) return line;
  const half = Math.floor((limit - 1) / 2);
  return `${line.slice(0, half)}…${line.slice(line.length - half)}`;
}

function problem(error, code, signal, timedOut, over) {
  const name = COMMAND.slice(0, -1).join(" ");
  if (timedOut) {
    return (
      `${name} did not answer within ${TIMEOUT_MS / 1000} s, and was ended; it is asked ` +
      `again once the memory changes, or in ${@HOLD@ / 1000} s`
    );
  }
  if (over) return `${name} printed more than @MAX_OUTPUT@ bytes`;
  if (error?.code === "ENOENT") {
    // (spawn says ENOENT for a missing working folder too)
    if (!existsSync(WORKSPACE)) return `the folder ${SHOWN} is gone (moved or deleted)`;
    return `${COMMAND[0]} is not on the PATH`;
  }
  if (error) return oneLine(error.message, @MAX_PROBLEM@);
  if (signal) return `${name} was ended by ${signal}`;
  return `${name} exited with status ${code}`;
}

function hook() {
  return new Promise((done) => {
    let child;
    try {
      // Its own process group (POSIX): a hook that hangs is ended with all it started.
      child = spawn(COMMAND[0], [...COMMAND.slice(1), WORKSPACE], {
        cwd: WORKSPACE,
        detached: POSIX,
        windowsHide: true,
      });
    } catch (error) {
      done({ ok: false, text: problem(error) });
      return;
    }
    const out = [];
    let size = 0;
    let said = "";
    let over = false;
    let timedOut = false;
    let ended = false;
    const end = () => {
      try {
        if (POSIX && child.pid) process.kill(-child.pid, "SIGKILL");
        else child.kill("SIGKILL");
      } catch {
        child.kill("SIGKILL");
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      end();
      // Answered now: a process of another session may hold its output open for good.
      child.stdout.destroy();
      child.stderr.destroy();
      finish(null, null, "SIGKILL");
    }, TIMEOUT_MS);
    const finish = (error, code, signal) => {
      if (ended) return;
      ended = true;
      clearTimeout(timer);
      const lines = said.trim().split("\\n");
      const why = oneLine(lines[lines.length - 1], @MAX_PROBLEM@);
      const stdout = Buffer.concat(out).toString("utf8");
      if (error || timedOut || over || code !== 0) {
        const what = problem(error, code, signal, timedOut, over);
        done({ ok: false, timedOut, text: why && !timedOut ? `${what}: ${why}` : what });
      } else if (!stdout && why) {
        done({ ok: false, text: why });
      } else {
        done({ ok: true, text: stdout.replace(/\\n$/, "") });
      }
    };
    child.stdout.on("data", (chunk) => {
      size += chunk.length;
      if (size <= @MAX_OUTPUT@) out.push(chunk);
      else if (!over) {
        over = true;
        end();
      }
    });
    // Only its last words are kept: what the hook says on stderr is one line.
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk) => {
      said = (said + chunk).slice(-@COMPARED@);
    });
    child.on("error", (error) => finish(error));
    child.on("close", (code, signal) => finish(null, code, signal));
    child.stdin.on("error", () => {});
    child.stdin.end(INPUT);
  });
}

// The folder as the line names it: quoted when its name would break the line.
const SHOWN = /[\\u0000-\\u001f\\u007f]/.test(WORKSPACE) ? JSON.stringify(WORKSPACE) : WORKSPACE;

function failure(text) {
  return (
    `Metis Memory: the workspace memory could not be read (${text}). ` +
    `Run \\`metis-memory check\\` in ${SHOWN} to see why.`
  );
}

async function metisMemory() {
  const since = Date.now();
  const seen = stats();
  const key = keyOf(seen);
  if (key === last.key) {
    if (last.settled) return last.text;
    if (heads(seen) === last.heads) {
      last.settled = settled(seen, since);
      return last.text;
    }
  }
  if (key === held.key && Date.now() < held.until) return failure(held.text);
  const now = { key, heads: heads(seen), since };
  if (running === null || running.key !== now.key || running.heads !== now.heads) {
    running = { ...now, answer: hook() };
  }
  const asked = running;
  const got = await asked.answer;
  if (running === asked) running = null;
  if (!got.ok) {
    if (got.timedOut) held = { key: asked.key, until: Date.now() + @HOLD@, text: got.text };
    return failure(got.text);
  }
  const after = stats();
  if (keyOf(after) === asked.key && heads(after) === asked.heads) {
    const fresh = settled(after, asked.since);
    last = { key: asked.key, heads: asked.heads, settled: fresh, text: got.text };
  }
  return got.text;
}
"""
