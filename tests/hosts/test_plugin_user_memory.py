"""Issue 43: the plugins' memory reader (`hosts/plugin_reader.py`) watches the user memory's
USER.md beside the workspace's two files, found by the same rule as the hook's
(`store/user_folder.py`), so that a change to it reaches the next call of opencode and the
Cline CLI once: the hook is run again for it, and only for it."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from platformdirs import macos, windows

from metis_memory import MemoryStore
from metis_memory.hosts.configs import SETUPS
from metis_memory.hosts.plugin_reader import reader_js
from metis_memory.store.user_folder import user_memory_dir

VENV_BIN = Path(sys.executable).parent
WAIT_S = 60

PLUGINS = {  # name: (init's --host, where it writes the plugin)
    "opencode": ("opencode", ".opencode/plugins/metis-memory.js"),
    "Cline CLI": ("cline", ".cline/plugins/metis-memory.js"),
}

DRIVER = """
import { pathToFileURL } from "node:url";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
const [plugin, steps] = [process.argv[1], JSON.parse(process.argv[2])];
const mod = await import(pathToFileURL(plugin).href);
let call;
if (mod.default?.setup) {
  // The Cline CLI: one rule, whose content it asks for as each prompt's system prompt is made.
  let rule;
  mod.default.setup({ registerRule: (r) => { rule = r; } });
  call = async () => String(await rule.content());
} else {
  // opencode: the system transform, before every model call.
  const [hooks] = await Promise.all(Object.values(mod).map((fn) => fn({}, undefined)));
  call = async () => {
    const output = { system: [] };
    await hooks["experimental.chat.system.transform"]({ sessionID: "s" }, output);
    return output.system.join("");
  };
}
const answers = [];
for (const step of steps) {
  if (step.write) {  // in place when the file exists (the same inode), as an editor may
    mkdirSync(dirname(step.write[0]), { recursive: true, mode: 0o700 });
    writeFileSync(step.write[0], step.write[1], { mode: 0o600 });
  }
  if (step.call) answers.push(await call());
}
process.stdout.write(JSON.stringify(answers));
"""


def node() -> str:
    found = shutil.which("node")
    assert found, "these tests run the plugin under Node: put `node` on the PATH"
    return found


def counted(tmp_path: Path) -> tuple[Path, Path]:
    """A metis-memory that notes each run in a log: (the command, its log)."""
    log = tmp_path / "runs.log"
    command = tmp_path / "counted-metis-memory"
    command.write_text(
        f'#!/bin/sh\necho run >> "{log}"\nexec "{VENV_BIN / "metis-memory"}" "$@"\n',
        encoding="utf-8",
    )
    command.chmod(command.stat().st_mode | stat.S_IXUSR)
    return command, log


def runs(log: Path) -> int:
    return len(log.read_text().split()) if log.exists() else 0


def run_plugin(plugin: Path, steps: list[dict[str, Any]]) -> list[str]:
    done = subprocess.run(
        [node(), "--input-type=module", "-e", DRIVER, str(plugin), json.dumps(steps)],
        capture_output=True,
        text=True,
        env=dict(os.environ),  # (the test's own XDG_CONFIG_HOME, as the host passes its own)
        timeout=WAIT_S,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    answers: list[str] = json.loads(done.stdout)
    return answers


@pytest.mark.parametrize("plugin", sorted(PLUGINS))
def test_a_user_memory_change_reaches_the_next_call_once(
    workspace: Path, tmp_path: Path, user_config_home: Path, plugin: str
) -> None:
    MemoryStore(workspace).add_entry("MEMORY.md", "- Deploys go through make release.")
    command, log = counted(tmp_path)
    host, where = PLUGINS[plugin]
    path = workspace / where
    path.parent.mkdir(parents=True)
    edit = next(e for e in SETUPS[host].edits(str(command)) if e.path == where)
    path.write_text(edit.apply(None), encoding="utf-8")  # the plugin as init writes it
    user = user_config_home / "metis-memory" / "USER.md"
    first, second = "- Answers in British English.\n", "- Works in UTC, always.\n"
    answers = run_plugin(
        path,
        [
            {"call": True},
            {"call": True},
            {"write": [str(user), first], "call": True},
            {"call": True},
            {"write": [str(user), second], "call": True},
            {"call": True},
        ],
    )
    assert "Deploys go through make release." in answers[0] and "British" not in answers[0]
    assert answers[1] == answers[0]
    assert "Answers in British English." in answers[2], answers[2]
    assert "Deploys go through make release." in answers[2]
    assert answers[3] == answers[2]
    assert "Works in UTC, always." in answers[4] and "British" not in answers[4]
    assert answers[5] == answers[4]
    assert runs(log) == 3, "the hook ran once for each state of the files, not per call"


# ---- the rule, in JavaScript as in Python ------------------------------------------------------
RULE = """
const cases = JSON.parse(process.argv[1]);
process.stdout.write(JSON.stringify(cases.map(([env, platform]) => userMemoryFile(env, platform))));
"""


def js_user_memory_files(cases: list[tuple[dict[str, str], str]]) -> list[str]:
    """`userMemoryFile(env, platform)` of the reader's JavaScript, for each case."""
    done = subprocess.run(
        [
            node(),
            "--input-type=module",
            "-e",
            reader_js("metis-memory", "opencode", "x") + RULE,
            json.dumps(cases),
        ],
        capture_output=True,
        text=True,
        timeout=WAIT_S,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    found: list[str] = json.loads(done.stdout)
    return found


LINUX_ENVS = [
    {"XDG_CONFIG_HOME": "/srv/conf", "HOME": "/home/ada"},
    {"XDG_CONFIG_HOME": "/srv/conf/", "HOME": "/home/ada"},
    {"XDG_CONFIG_HOME": "/srv/é ü/conf", "HOME": "/home/ada"},
    {"XDG_CONFIG_HOME": "relative/conf", "HOME": "/home/ada"},
    {"XDG_CONFIG_HOME": "", "HOME": "/home/ada/"},
    {"XDG_CONFIG_HOME": "~/conf", "HOME": "/home/ada"},
    {"HOME": "/home/ada"},
    {"HOME": "/"},
    {"HOME": "relative/home"},
    {},
]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the Linux rule, run here")
def test_the_readers_rule_is_the_hooks_on_linux() -> None:
    found = js_user_memory_files([(env, "linux") for env in LINUX_ENVS])
    for env, js in zip(LINUX_ENVS, found, strict=True):
        python = os.path.join(user_memory_dir(env), "USER.md")
        assert os.path.normpath(js) == os.path.normpath(python), env
    assert found[0] == "/srv/conf/metis-memory/USER.md"


@pytest.mark.parametrize("home", ["/Users/ada", "/Users/ada lovelace/", "relative"])
@pytest.mark.parametrize("xdg", [None, "/Users/ada/dotfiles", "relative/conf"])
def test_the_readers_rule_is_platformdirs_on_macos(
    home: str, xdg: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """platformdirs' macOS folders, as the installed version gives them (its XDG variables
    come first since it took them on macOS too)."""
    env = {"HOME": home}
    monkeypatch.setenv("HOME", home)
    if xdg is None:
        monkeypatch.delenv("XDG_CONFIG_HOME")
    else:
        env["XDG_CONFIG_HOME"] = xdg
        monkeypatch.setenv("XDG_CONFIG_HOME", xdg)
    python = os.path.join(macos.MacOS(appauthor=False).user_config_dir, "metis-memory", "USER.md")
    (js,) = js_user_memory_files([(env, "darwin")])
    assert os.path.normpath(js) == os.path.normpath(python)


def test_the_readers_rule_is_platformdirs_on_windows(monkeypatch: pytest.MonkeyPatch) -> None:
    """platformdirs' Windows folder asked by its environment variable (the system call it
    prefers there is Windows-only): the local, not the roaming, application data."""
    folder = "/c/Users/ada/AppData/Local"
    monkeypatch.setenv("LOCALAPPDATA", folder)
    monkeypatch.setenv("APPDATA", "/c/Users/ada/AppData/Roaming")
    monkeypatch.setattr(windows, "get_win_folder", windows.get_win_folder_from_env_vars)
    python = os.path.join(
        windows.Windows(appauthor=False).user_config_dir, "metis-memory", "USER.md"
    )
    env = {"LOCALAPPDATA": folder, "APPDATA": "/c/Users/ada/AppData/Roaming"}
    (js,) = js_user_memory_files([(env, "win32")])
    assert js == python == f"{folder}/metis-memory/USER.md"
