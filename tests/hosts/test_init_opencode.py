"""`metis-memory init --host opencode`: the plugin opencode loads from `.opencode/plugins/`,
and the MCP entry merged into the project config file opencode reads (the first of
`opencode.json`, `opencode.jsonc`, `.opencode/opencode.json`, `.opencode/opencode.jsonc`,
as `opencode mcp add` picks it), every byte of the user's kept. The plugin itself runs
under Node here, called as opencode calls it (tests/real_hosts/test_opencode.py runs it
inside opencode)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from metis_memory import MemoryStore
from support.init_files import init, snapshot, write

PLUGIN = ".opencode/plugins/metis-memory.js"
ENTRY = {"type": "local", "command": ["metis-memory", "mcp"]}
EVENT = "experimental.chat.system.transform"
VENV_BIN = Path(sys.executable).parent


def load(workspace: Path, rel: str) -> Any:
    return json.loads((workspace / rel).read_text(encoding="utf-8"))


def is_subsequence(small: str, big: str) -> bool:
    it = iter(big)
    return all(ch in it for ch in small)


def test_an_empty_workspace_gets_the_plugin_and_opencode_json(workspace: Path) -> None:
    done = init("--host", "opencode", cwd=workspace)
    assert done.returncode == 0, done.stderr
    assert {p for p, (kind, _, _) in snapshot(workspace).items() if kind == "file"} == {
        PLUGIN,
        "opencode.json",
    }
    assert load(workspace, "opencode.json") == {"mcp": {"metis-memory": ENTRY}}
    assert f"{PLUGIN}: created (plugin adding the memory to every model call)" in done.stdout
    assert "opencode.json: created (MCP server 'metis-memory')" in done.stdout
    todo = done.stdout.split("What is left to do:", 1)[1]
    assert "- opencode: restart opencode" in todo
    assert '"metis-memory_*": "allow"' in todo  # the rule a user who is asked needs
    assert "@opencode-ai/plugin" in todo  # what opencode itself adds to .opencode/


def test_a_rerun_changes_no_byte(workspace: Path) -> None:
    assert init("--host", "opencode", cwd=workspace).returncode == 0
    before = snapshot(workspace)
    done = init("--host", "opencode", cwd=workspace)
    assert done.returncode == 0, done.stderr
    assert snapshot(workspace) == before  # not even rewritten: same mtimes
    assert done.stdout.count(": unchanged (") == 2


USERS = (
    '{\n    "$schema": "https://opencode.ai/config.json",\n    "model": "anthropic/x",\n'
    '    "n": 1e400,  "s": "caf\\u00e9",\n'
    '    "mcp": {\n        "github": {"type": "remote", "url": "https://example.com/mcp"}\n'
    "    },\n"
    '    "permission": {"*": "ask"}\n}\n'
)


def test_an_existing_opencode_json_keeps_every_byte(workspace: Path) -> None:
    write(workspace, "opencode.json", USERS)
    done = init("--host", "opencode", cwd=workspace)
    assert done.returncode == 0, done.stderr
    after = (workspace / "opencode.json").read_text(encoding="utf-8")
    assert is_subsequence(USERS, after), after
    expected = json.loads(USERS)
    expected["mcp"]["metis-memory"] = ENTRY
    assert json.loads(after) == expected
    assert '"n": 1e400,  "s": "caf\\u00e9"' in after
    # init writes no permission rule: the user's "ask" stays theirs (see opencode.py).
    assert json.loads(after)["permission"] == {"*": "ask"}
    assert "opencode.json: updated (MCP server 'metis-memory')" in done.stdout


@pytest.mark.parametrize(
    ("present", "chosen"),
    [
        (["opencode.jsonc"], "opencode.jsonc"),
        ([".opencode/opencode.json"], ".opencode/opencode.json"),
        ([".opencode/opencode.jsonc"], ".opencode/opencode.jsonc"),
        (["opencode.jsonc", "opencode.json"], "opencode.json"),
        ([".opencode/opencode.jsonc", "opencode.jsonc"], "opencode.jsonc"),
    ],
)
def test_the_entry_goes_into_the_config_file_the_project_has(
    workspace: Path, present: list[str], chosen: str
) -> None:
    for rel in present:
        write(workspace, rel, '{"model": "anthropic/x"}\n')
    done = init("--host", "opencode", cwd=workspace)
    assert done.returncode == 0, done.stderr
    assert load(workspace, chosen) == {"model": "anthropic/x", "mcp": {"metis-memory": ENTRY}}
    for rel in present:
        if rel != chosen:
            assert (workspace / rel).read_text() == '{"model": "anthropic/x"}\n'
    assert f"{chosen}: updated (MCP server 'metis-memory')" in done.stdout
    if "opencode.json" not in present:
        assert not (workspace / "opencode.json").exists()


def test_the_users_settings_on_our_entry_stay_and_what_it_runs_is_inits(
    workspace: Path,
) -> None:
    ours = {
        "type": "local",
        "command": ["old/metis-memory", "mcp"],
        "enabled": False,
        "timeout": 9000,
        "environment": {"PATH": "./bin"},
        "cwd": "vendor",
    }
    write(workspace, "opencode.json", json.dumps({"mcp": {"metis-memory": ours}}, indent=2))
    done = init("--host", "opencode", cwd=workspace)
    assert done.returncode == 0, done.stderr
    assert load(workspace, "opencode.json")["mcp"]["metis-memory"] == {
        "type": "local",
        "command": ["metis-memory", "mcp"],
        "enabled": False,  # the user turned it off: it stays off
        "timeout": 9000,
    }


def test_a_foreign_plugin_file_is_refused_with_nothing_written(workspace: Path) -> None:
    write(workspace, PLUGIN, "export const Mine = async () => ({});\n")
    before = snapshot(workspace)
    done = init("--host", "opencode", cwd=workspace)
    assert done.returncode == 1
    assert f"{PLUGIN} exists and was not written by metis-memory init; nothing was written" in (
        done.stderr
    )
    assert snapshot(workspace) == before
    assert not (workspace / "opencode.json").exists()


def test_a_jsonc_with_comments_is_refused_with_the_entry_to_add_by_hand(workspace: Path) -> None:
    text = '{\n  // my model\n  "model": "anthropic/x",\n}\n'
    write(workspace, "opencode.jsonc", text)
    before = snapshot(workspace)
    done = init("--host", "opencode", cwd=workspace)
    assert done.returncode == 1
    assert "opencode.jsonc is not valid JSON at line 2, column 3" in done.stderr
    assert "(it may hold comments, which init does not rewrite)" in done.stderr
    by_hand = done.stderr.split("The entry, to merge in by hand:\n", 1)[1]
    assert json.loads(by_hand) == {"mcp": {"metis-memory": ENTRY}}
    assert snapshot(workspace) == before


# ---- the plugin, run as opencode runs it ---------------------------------------------------
DRIVER = """
import { pathToFileURL } from "node:url";
const mod = await import(pathToFileURL(process.argv[1]).href);
// opencode's Plugin.state: every export must be a function, called as fn(ctx, options).
for (const [name, value] of Object.entries(mod)) {
  if (typeof value !== "function") throw new Error(`export ${name} is not a function`);
}
const hooks = await Promise.all(Object.values(mod).map((fn) => fn({}, undefined)));
const calls = [];
for (let i = 0; i < 2; i++) {
  const output = { system: ["the agent's prompt"] };
  for (const hook of hooks) await hook[process.argv[2]]?.({ sessionID: "s1", model: {} }, output);
  calls.push(output.system);
}
process.stdout.write(JSON.stringify({ exports: Object.keys(mod), calls }));
"""


def run_plugin(workspace: Path) -> dict[str, Any]:
    node = shutil.which("node")
    assert node, "these tests run the plugin under Node: put `node` on the PATH"
    env = {**os.environ, "PATH": os.pathsep.join([str(VENV_BIN), os.environ.get("PATH", "")])}
    done = subprocess.run(
        [node, "--input-type=module", "-e", DRIVER, str(workspace / PLUGIN), EVENT],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def hook_answer(workspace: Path) -> str:
    done = subprocess.run(
        [
            str(VENV_BIN / "metis-memory"),
            "hook",
            "--host",
            "opencode",
            "--workspace",
            str(workspace),
        ],
        input=json.dumps({"hook_event_name": EVENT}),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout.removesuffix("\n")


def test_the_plugin_adds_the_memory_as_one_more_system_message(workspace: Path) -> None:
    MemoryStore(workspace).add_entry("MEMORY.md", "The payments service retries 5 times.")
    assert init("--host", "opencode", cwd=workspace).returncode == 0
    result = run_plugin(workspace)
    assert result["exports"] == ["MetisMemory"]
    first, second = result["calls"]
    assert first == ["the agent's prompt", hook_answer(workspace)]
    assert "The payments service retries 5 times." in first[1]
    assert second == first  # the same bytes while the memory is unchanged


def test_the_plugin_adds_nothing_without_a_memory(workspace: Path) -> None:
    assert init("--host", "opencode", cwd=workspace).returncode == 0
    assert run_plugin(workspace)["calls"] == [["the agent's prompt"]] * 2
