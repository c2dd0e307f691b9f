"""`metis-memory init --host cline`: the VS Code extension's hooks and the Cline CLI's
plugin, written as whole files of ours, and nothing outside the workspace (the CLI's MCP
settings are the user's: init only says how to add the server there)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from metis_memory.hosts.config_edits import OWNED_MARK
from metis_memory.hosts.configs import CLINE_PLUGIN_PATH, SETUPS
from metis_memory.hosts.plugin_reader import reader_js

HOOKS = [f".clinerules/hooks/{e}" for e in ("TaskStart", "TaskResume", "UserPromptSubmit")]
FILES = {*HOOKS, CLINE_PLUGIN_PATH}
MCP_ADD = "cline mcp add metis-memory --yes -- metis-memory mcp"
"""The user's opt-in for the CLI's tools, with Cline's own command (it locks and merges its
global settings file itself)."""


def init(workspace: Path, *args: str, home: Path) -> subprocess.CompletedProcess[str]:
    """`metis-memory init --host cline ARGS... WORKSPACE` with a HOME of the test's own
    (where a global Cline setting would go, were init to write one)."""
    cline = ("CLINE_DIR", "CLINE_DATA_DIR", "CLINE_MCP_SETTINGS_PATH")
    env = {k: v for k, v in os.environ.items() if k not in cline} | {"HOME": str(home)}
    script = str(Path(sys.executable).parent / "metis-memory")
    return subprocess.run(
        [script, "init", "--host", "cline", *args, "--no-merge-driver", str(workspace)],
        capture_output=True,
        encoding="utf-8",
        env=env,
        timeout=60,
        check=False,
    )


def files(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(root).parts
    }


def test_init_writes_the_hooks_and_the_plugin_and_nothing_global(
    workspace: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    done = init(workspace, home=home)
    assert done.returncode == 0, done.stderr
    assert set(files(workspace)) == FILES
    assert list(home.iterdir()) == []  # no ~/.cline/data/settings/cline_mcp_settings.json
    plugin = (workspace / CLINE_PLUGIN_PATH).read_text(encoding="utf-8")
    assert plugin.startswith(reader_js("metis-memory", "cline-plugin", "rule"))
    assert OWNED_MARK in plugin
    export = plugin[len(reader_js("metis-memory", "cline-plugin", "rule")) :]
    # The shape @cline/core's loader takes (`AX`: the default export, checked by `sP`/`oP`).
    assert "export default {" in export and 'name: "metis-memory"' in export
    assert 'manifest: { capabilities: ["rules"] }' in export
    assert 'api.registerRule({ id: "metis-memory", content: metisMemory })' in export
    assert export.count("export ") == 1  # only the plugin: opencode-style helper exports none
    assert (workspace / CLINE_PLUGIN_PATH).stat().st_mode & 0o111 == 0
    assert f"{CLINE_PLUGIN_PATH}: created" in done.stdout
    assert MCP_ADD in done.stdout and "cline_mcp_settings.json" in done.stdout
    assert f"- Cline: {SETUPS['cline'].still_to_do}" in done.stdout


def test_a_second_init_changes_no_byte(workspace: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    assert init(workspace, home=home).returncode == 0
    before = files(workspace)
    mtimes = {p: (workspace / p).stat().st_mtime_ns for p in before}
    done = init(workspace, home=home)
    assert done.returncode == 0, done.stderr
    assert files(workspace) == before
    assert {p: (workspace / p).stat().st_mtime_ns for p in before} == mtimes
    assert done.stdout.count(": unchanged") == len(FILES)


def test_a_plugin_file_of_someone_else_is_refused_with_nothing_written(
    workspace: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    theirs = workspace / CLINE_PLUGIN_PATH
    theirs.parent.mkdir(parents=True)
    theirs.write_text('export default { name: "metis-memory", manifest: {} };\n')
    done = init(workspace, home=home)
    assert done.returncode == 1
    assert f"{CLINE_PLUGIN_PATH} exists and was not written by metis-memory init" in done.stderr
    assert "Move it aside" in done.stderr
    assert files(workspace) == {CLINE_PLUGIN_PATH: theirs.read_bytes()}
    assert theirs.read_text() == 'export default { name: "metis-memory", manifest: {} };\n'
    assert not (workspace / ".clinerules").exists()


def test_an_older_plugin_of_ours_is_rewritten_and_other_plugins_are_kept(
    workspace: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    plugins = workspace / ".cline" / "plugins"
    plugins.mkdir(parents=True)
    (plugins / "metis-memory.js").write_text(f"// {OWNED_MARK}: an older version\n")
    (plugins / "lint.js").write_text("export default { name: 'lint' };\n")
    done = init(workspace, home=home)
    assert done.returncode == 0, done.stderr
    assert f"{CLINE_PLUGIN_PATH}: updated" in done.stdout
    assert "export default {" in (plugins / "metis-memory.js").read_text()
    assert (plugins / "lint.js").read_text() == "export default { name: 'lint' };\n"


def test_the_plugin_runs_the_command_init_was_given(workspace: Path, tmp_path: Path) -> None:
    """`--command` as the user spells it, spaces and quotes included, becomes the argv the
    plugin runs (a JSON array in the JavaScript, never a shell line)."""
    home = tmp_path / "home"
    home.mkdir()
    command = "'/opt/my tools/metis-memory' --quiet"
    done = init(workspace, "--command", command, home=home)
    assert done.returncode == 0, done.stderr
    plugin = (workspace / CLINE_PLUGIN_PATH).read_text(encoding="utf-8")
    argv = ["/opt/my tools/metis-memory", "--quiet", "hook", "--host", "cline-plugin"]
    assert f"const COMMAND = {json.dumps([*argv, '--workspace'])};" in plugin


def test_a_plugins_folder_linked_out_of_the_workspace_is_refused(
    workspace: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (workspace / ".cline").symlink_to(outside, target_is_directory=True)
    done = init(workspace, home=home)
    assert done.returncode == 1
    assert list(outside.iterdir()) == []
    assert not (workspace / ".clinerules").exists()
