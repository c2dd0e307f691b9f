"""The plugins' memory reader (`hosts/plugin_reader.py`) attacked as opencode and the Cline
CLI run it: under Node, in the plugin file `init` writes, with real files and real
processes (what it runs stands in for a broken or hung `metis-memory`).

- The cache: a file rewritten in place, same inode and size, within one tick of the
  filesystem's clock (1 s on ext4 with 128-byte inodes, HFS+ and FAT; one kernel tick on
  Linux before 6.13), keeps every time the reader looks at. The filesystem here has
  nanosecond times, so a Node preload gives the reader a coarse one: it zeroes the times
  `stat` reports, the extreme of such a clock (every write within one tick).
- `--command`: whatever it holds reaches the plugin as the argv it names.
- A command that fails, floods its output or hangs: one short line for the model, nothing it
  started left running, and a hung one not waited for again on every model call.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from metis_memory import MemoryStore
from metis_memory.hosts.plugin_reader import reader_js
from support.init_files import init

VENV_BIN = Path(sys.executable).parent
PLUGIN = ".opencode/plugins/metis-memory.js"
EVENT = "experimental.chat.system.transform"
WAIT_S = 30

COARSE_CLOCK = """
// A filesystem whose clock counts whole seconds (ext4 with 128-byte inodes, HFS+): every
// time stat reports is cut to its second.
import fs from "node:fs";
import { syncBuiltinESMExports } from "node:module";
function coarse(stats) {
  if (stats && typeof stats === "object") {
    for (const key of ["atime", "mtime", "ctime", "birthtime"]) {
      if (typeof stats.ino === "bigint") {
        stats[`${key}Ns`] -= stats[`${key}Ns`] % 1000000000n;
        stats[`${key}Ms`] -= stats[`${key}Ms`] % 1000n;
      } else {
        stats[`${key}Ms`] -= stats[`${key}Ms`] % 1000;
      }
    }
  }
  return stats;
}
for (const name of ["statSync", "fstatSync", "lstatSync"]) {
  const real = fs[name];
  fs[name] = (...args) => coarse(real(...args));
}
syncBuiltinESMExports();
"""

SAME_SECOND = """
import { pathToFileURL } from "node:url";
import { statSync, writeFileSync } from "node:fs";
const [plugin, file, first, second] = process.argv.slice(1);
const mod = await import(pathToFileURL(plugin).href);
const [hooks] = await Promise.all(Object.values(mod).map((fn) => fn({}, undefined)));
const call = async () => {
  const output = { system: [] };
  await hooks["experimental.chat.system.transform"]({ sessionID: "s" }, output);
  return output.system.join("");
};
const stamp = () => {
  const s = statSync(file, { bigint: true });
  return `${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`;
};
// Early in a second (the kernel stamps files from a clock a tick behind): both writes fit.
while (Date.now() % 1000 < 200 || Date.now() % 1000 > 300);
writeFileSync(file, first); // in place: the same inode, truncated and written
const before = stamp();
const answers = [await call()];
writeFileSync(file, second);
const sameStamp = stamp() === before;
answers.push(await call(), await call());
process.stdout.write(JSON.stringify({ sameStamp, answers }));
"""

DRIVER = """
import { pathToFileURL } from "node:url";
import { writeFileSync } from "node:fs";
const [plugin, steps] = [process.argv[1], JSON.parse(process.argv[2])];
const mod = await import(pathToFileURL(plugin).href);
const [hooks] = await Promise.all(Object.values(mod).map((fn) => fn({}, undefined)));
const answers = [];
for (const step of steps) {
  // A write is in place (same inode): writeFileSync truncates and writes the file it opens.
  if (step.write) writeFileSync(step.write[0], step.write[1]);
  if (step.call) {
    const output = { system: [] };
    await hooks["experimental.chat.system.transform"]({ sessionID: "s" }, output);
    answers.push(output.system.join(""));
  }
}
process.stdout.write(JSON.stringify(answers));
"""


def node() -> str:
    found = shutil.which("node")
    assert found, "these tests run the plugin under Node: put `node` on the PATH"
    return found


def run_plugin(
    plugin: Path, steps: list[dict[str, Any]], *, preload: Path | None = None
) -> list[str]:
    env = {**os.environ, "PATH": os.pathsep.join([str(VENV_BIN), os.environ.get("PATH", "")])}
    imports = ["--import", preload.as_uri()] if preload else []
    done = subprocess.run(
        [node(), *imports, "--input-type=module", "-e", DRIVER, str(plugin), json.dumps(steps)],
        capture_output=True,
        text=True,
        env=env,
        timeout=WAIT_S * 2,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    answers: list[str] = json.loads(done.stdout)
    return answers


def write_plugin(workspace: Path, command: str, **options: Any) -> Path:
    """The opencode plugin `init` writes, with the reader made as `reader_js` makes it."""
    from metis_memory.hosts import opencode

    plugin = workspace / PLUGIN
    plugin.parent.mkdir(parents=True, exist_ok=True)
    text = opencode.plugin(command)
    if options:
        text = text.replace(
            reader_js(command, "opencode", EVENT),
            reader_js(command, "opencode", EVENT, **options),
        )
    plugin.write_text(text, encoding="utf-8")
    return plugin


def script(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


# ---- the cache ------------------------------------------------------------------------------
def test_a_same_size_rewrite_in_place_within_one_clock_tick_is_seen(
    workspace: Path, tmp_path: Path
) -> None:
    """Both writes land in one second of the clock (tried again when the hook's run took
    the second over): the stat is the same, the text is not."""
    MemoryStore(workspace).add_entry("MEMORY.md", "- The retry count is 4.")
    memory = workspace / ".metis" / "MEMORY.md"
    first = memory.read_text(encoding="utf-8")
    second = first.replace("is 4", "is 6")
    assert len(second) == len(first)
    preload = tmp_path / "coarse-clock.mjs"
    preload.write_text(COARSE_CLOCK, encoding="utf-8")
    plugin = write_plugin(workspace, "metis-memory")
    env = {**os.environ, "PATH": os.pathsep.join([str(VENV_BIN), os.environ.get("PATH", "")])}
    argv = [node(), "--import", preload.as_uri(), "--input-type=module", "-e", SAME_SECOND]
    for _attempt in range(5):
        done = subprocess.run(
            [*argv, str(plugin), str(memory), first, second],
            capture_output=True,
            text=True,
            env=env,
            timeout=WAIT_S * 2,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        result = json.loads(done.stdout)
        if result["sameStamp"]:
            break
    else:
        pytest.fail("in 5 tries, the two writes never landed in one second of the clock")
    answers = result["answers"]
    assert "The retry count is 4." in answers[0]
    assert "The retry count is 6." in answers[1], answers[1]  # not the text kept for 4
    assert answers[2] == answers[1]


# ---- what init's --command holds --------------------------------------------------------------
@pytest.mark.parametrize("name", ["mm@EVENT@", "mm@ARGV@", "mm@TIMEOUT@", "mm@MARK@"])
def test_a_command_spelling_a_placeholder_is_run_as_named(
    workspace: Path, tmp_path: Path, name: str
) -> None:
    real = VENV_BIN / "metis-memory"
    command = script(tmp_path / name, f'#!/bin/sh\nexec "{real}" "$@"\n')
    MemoryStore(workspace).add_entry("MEMORY.md", "- Deploys go through make release.")
    done = init("--host", "opencode", "--command", str(command), cwd=workspace)
    assert done.returncode == 0, done.stderr
    plugin = (workspace / PLUGIN).read_text(encoding="utf-8")
    assert f"const COMMAND = {json.dumps([str(command), 'hook', '--host', 'opencode'])[:-1]}" in (
        plugin
    )
    (answer,) = run_plugin(workspace / PLUGIN, [{"call": True}])
    assert "- Deploys go through make release." in answer, answer


# ---- a command that fails, floods or hangs ----------------------------------------------------
def test_a_failing_command_is_one_short_line_naming_its_status_and_last_words(
    workspace: Path, tmp_path: Path
) -> None:
    MemoryStore(workspace).add_entry("MEMORY.md", "- a fact")
    noisy = script(
        tmp_path / "noisy",
        "#!/bin/sh\necho 'half an answer'\n"
        'i=0; while [ $i -lt 20000 ]; do echo "noise line $i with some words" >&2; '
        "i=$((i+1)); done\n"
        f"echo 'metis-memory hook: the last word {'and more ' * 200}then run init again.' >&2\n"
        "exit 3\n",
    )
    (answer,) = run_plugin(write_plugin(workspace, str(noisy)), [{"call": True}])
    assert "\n" not in answer
    assert len(answer) < 1500, answer
    assert "exited with status 3: metis-memory hook: the last word and more" in answer
    assert "and more then run init again.). Run `metis-memory check`" in answer  # its end kept
    assert "noise line 19998" not in answer


@pytest.mark.parametrize(
    ("stream", "said"),
    [("stdout", "printed more than 1048576 bytes"), ("stderr", "exited with status 1: eee")],
)
def test_a_flood_of_output_is_not_passed_on(
    workspace: Path, tmp_path: Path, stream: str, said: str
) -> None:
    MemoryStore(workspace).add_entry("MEMORY.md", "- a fact")
    flood = script(
        tmp_path / "flood",
        f"#!{sys.executable}\nimport sys\nsys.{stream}.write('e' * 5_000_000)\nsys.exit(1)\n",
    )
    (answer,) = run_plugin(write_plugin(workspace, str(flood)), [{"call": True}])
    assert len(answer) < 1500, answer[:2000]
    assert said in answer, answer


def _gone(pid: int) -> bool:
    """The process has ended (a zombie waiting for its parent counts: it runs nothing)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads process states from /proc")
def test_a_hung_command_is_ended_with_what_it_started_and_not_rerun_on_every_call(
    workspace: Path, tmp_path: Path
) -> None:
    """The hook's own budgets keep it under 5 s; one that hangs anyway (a wrapper whose child
    hangs) is ended whole when the reader gives up, and the next calls (opencode asks before
    every model call) answer at once instead of waiting the timeout again each time."""
    MemoryStore(workspace).add_entry("MEMORY.md", "- a fact")
    started = tmp_path / "started"
    hang = script(
        tmp_path / "hang",
        f"#!/bin/sh\necho $$ >> '{started}'\nsleep 300 &\necho $! >> '{started}'\nwait\n",
    )
    plugin = write_plugin(workspace, str(hang), timeout_ms=500)
    answers = run_plugin(plugin, [{"call": True}, {"call": True}, {"call": True}])
    assert "did not answer within 0.5 s" in answers[0], answers[0]
    assert answers[1] == answers[2] == answers[0]
    pids = [int(line) for line in started.read_text().split()]
    assert len(pids) == 2, pids  # run once, not once per call
    deadline = time.monotonic() + WAIT_S
    while not all(_gone(pid) for pid in pids):
        assert time.monotonic() < deadline, f"still running: {pids}"
        time.sleep(0.05)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_a_fifo_in_place_of_the_memory_never_blocks_the_host(workspace: Path) -> None:
    """The reader runs inside the host's own process: a read that waits for a writer would
    freeze opencode. A FIFO is not read; the hook says what it is."""
    (workspace / ".metis").mkdir()
    os.mkfifo(workspace / ".metis" / "MEMORY.md")
    (answer,) = run_plugin(write_plugin(workspace, "metis-memory"), [{"call": True}])
    assert "it is a FIFO, not a regular file" in answer


def test_a_hook_whose_daemon_keeps_its_output_open_is_not_waited_for_forever(
    workspace: Path, tmp_path: Path
) -> None:
    """A command that leaves a process of another session holding its stdout (out of the
    reach of the group's kill): the reader answers at its timeout all the same; without
    that the host's model call would wait until the daemon ends."""
    MemoryStore(workspace).add_entry("MEMORY.md", "- a fact")
    pids = tmp_path / "daemon"
    daemon = (
        f"import os, time; os.setsid(); open({str(pids)!r}, 'w').write(str(os.getpid())); "
        "time.sleep(300)"
    )
    command = script(
        tmp_path / "leaves-a-daemon",
        f'#!/bin/sh\n{sys.executable} -c "{daemon}" &\nexit 0\n',
    )
    plugin = write_plugin(workspace, str(command), timeout_ms=500)
    try:
        (answer,) = run_plugin(plugin, [{"call": True}])
        assert "did not answer within 0.5 s" in answer, answer
    finally:
        deadline = time.monotonic() + WAIT_S
        while not pids.exists() or not pids.read_text():
            assert time.monotonic() < deadline, "the daemon never started"
            time.sleep(0.05)
        os.kill(int(pids.read_text()), 9)


def test_the_failure_line_stays_one_line_in_a_folder_whose_name_holds_a_newline(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "a\nb $x `y` é"
    workspace.mkdir()
    plugin = write_plugin(workspace, str(tmp_path / "no-such-metis-memory"))
    (answer,) = run_plugin(plugin, [{"call": True}])
    assert "no-such-metis-memory is not on the PATH" in answer
    assert "\n" not in answer
    assert json.dumps(str(workspace), ensure_ascii=False) in answer


def test_a_workspace_moved_away_under_the_host_is_named_as_gone(
    workspace: Path, tmp_path: Path
) -> None:
    """The host keeps the plugin it loaded; the folder it was written into is moved."""
    plugin = write_plugin(workspace, "metis-memory")
    away = tmp_path / "moved"
    steps: list[dict[str, Any]] = [{"move": [str(workspace), str(away)], "call": True}]
    driver = DRIVER.replace(
        "  if (step.write)", "  if (step.move) renameSync(...step.move);\n  if (step.write)"
    ).replace("import { writeFileSync }", "import { renameSync, writeFileSync }")
    env = {**os.environ, "PATH": os.pathsep.join([str(VENV_BIN), os.environ.get("PATH", "")])}
    done = subprocess.run(
        [node(), "--input-type=module", "-e", driver, str(plugin), json.dumps(steps)],
        capture_output=True,
        text=True,
        env=env,
        timeout=WAIT_S * 2,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    (answer,) = json.loads(done.stdout)
    assert f"the folder {workspace} is gone (moved or deleted)" in answer, answer
