"""The memory reader that `init` writes into the plugins of hosts that rebuild their system
prompt on every call (opencode's `experimental.chat.system.transform`, the Cline CLI's
rules): JavaScript that runs inside the host's own process.

It never parses or composes the memory itself: caps, redaction, the secret rules and the
delimiters stay in one place, `metis-memory hook`, which it runs once per change of the
files. Between changes it answers from what it last got, after a `stat` of the two files
(device, inode, size, modification and change times): no process is spawned, and the text
is the same bytes call after call, which keeps the host's prompt cache warm. The store
replaces a file by renaming a new one over it, so every write it makes changes the inode.

What it cannot get (no `metis-memory` on the PATH, a hook that failed) is not kept: the
next call tries again, and the model is told in one line instead of getting nothing.
"""

from __future__ import annotations

import json

from .config_edits import OWNED_MARK, split_command

HOOK_TIMEOUT_MS = 15_000
"""How long the plugin waits for `metis-memory hook`: above its own stale-check budget
(1 s) and a cold start on a busy machine, below the point where a user waits on a hung
prompt."""

MAX_OUTPUT_BYTES = 1 << 20
"""The hook prints at most ~9,000 characters (context.MAX_CONTEXT_CHARS); more is a bug."""


def reader_js(command: str, host: str, event: str) -> str:
    """The reader's JavaScript (an ES module's top level, with its imports): a function
    `metisMemory()` that resolves to the memory text, or "" when there is none.

    `command` runs metis-memory (as init was given it); `host` and `event` are what the
    hook is asked as (`metis-memory hook --host HOST`, with `{"hook_event_name": EVENT}`).
    The workspace is the folder two levels above the plugin file (`.opencode/plugins/`,
    `.cline/plugins/`): the plugin serves the workspace it was written into."""
    argv = [*split_command(command), "hook", "--host", host, "--workspace"]
    return (
        _READER.replace("@ARGV@", json.dumps(argv))
        .replace("@EVENT@", json.dumps({"hook_event_name": event}))
        .replace("@TIMEOUT@", str(HOOK_TIMEOUT_MS))
        .replace("@MAX_OUTPUT@", str(MAX_OUTPUT_BYTES))
        .replace("@MARK@", OWNED_MARK)
    )


_READER = """\
import { execFile } from "node:child_process";
import { statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

// @MARK@: the workspace memory (.metis/) for this host,
// composed by `metis-memory hook`, which applies the caps, the redaction and the secret rules.
const WORKSPACE = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const COMMAND = @ARGV@;
const INPUT = JSON.stringify(@EVENT@);
const FILES = ["MEMORY.md", "USER.md"].map((name) => join(WORKSPACE, ".metis", name));

let last = { key: null, text: "" };
let running = null;

function stamp() {
  return FILES.map((file) => {
    try {
      const s = statSync(file, { bigint: true });
      return `${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`;
    } catch (error) {
      return String(error?.code ?? "unreadable");
    }
  }).join("|");
}

function hook() {
  return new Promise((done) => {
    const child = execFile(
      COMMAND[0],
      [...COMMAND.slice(1), WORKSPACE],
      { cwd: WORKSPACE, timeout: @TIMEOUT@, maxBuffer: @MAX_OUTPUT@, windowsHide: true },
      (error, stdout, stderr) => {
        const why = String(stderr ?? "").trim().split("\\n").pop();
        if (error) {
          const what = error.code === "ENOENT" ? `${COMMAND[0]} is not on the PATH` : error.message;
          done({ ok: false, text: why ? `${what}: ${why}` : what });
        } else if (!stdout && why) {
          done({ ok: false, text: why });
        } else {
          done({ ok: true, text: String(stdout).replace(/\\n$/, "") });
        }
      },
    );
    child.stdin?.on("error", () => {});
    child.stdin?.end(INPUT);
  });
}

async function metisMemory() {
  const key = stamp();
  if (key === last.key) return last.text;
  if (running === null || running.key !== key) {
    running = { key, answer: hook() };
  }
  const { key: asked, answer } = running;
  const got = await answer;
  if (running?.key === asked) running = null;
  if (!got.ok) {
    return (
      `Metis Memory: the workspace memory could not be read (${got.text}). ` +
      `Run \\`metis-memory check\\` in ${WORKSPACE} to see why.`
    );
  }
  if (stamp() === asked) last = { key: asked, text: got.text };
  return got.text;
}
"""
