"""The plugins `init` writes for opencode and the Cline CLI are whole files of ours, which a
user may well change (to leave the title call out, to log...). A rerun of init (an upgrade,
Connect Agents) replaces one only while it is as init wrote it: an edited one is refused
with nothing written, whichever version of init wrote it; one written by an init from
before plugins were sealed is still ours to replace."""

from __future__ import annotations

from pathlib import Path

import pytest

from metis_memory.hosts.config_edits import OWNED_MARK
from metis_memory.hosts.configs import CLINE_PLUGIN_PATH
from metis_memory.hosts.opencode import PLUGIN_PATH as OPENCODE_PLUGIN_PATH
from support.init_files import init, snapshot

PLUGINS = [("opencode", OPENCODE_PLUGIN_PATH), ("cline", CLINE_PLUGIN_PATH)]


@pytest.mark.parametrize(("host", "path"), PLUGINS)
def test_an_edited_plugin_is_refused_with_nothing_written(
    workspace: Path, host: str, path: str
) -> None:
    assert init("--host", host, cwd=workspace).returncode == 0
    plugin = workspace / path
    edited = plugin.read_text(encoding="utf-8").replace(
        "async function metisMemory() {",
        "async function metisMemory() {\n  // mine: no memory in title calls\n",
    )
    plugin.write_text(edited, encoding="utf-8")
    before = snapshot(workspace)
    done = init("--host", host, "--command", "other/metis-memory", cwd=workspace)
    assert done.returncode == 1
    assert f"{path} was changed after metis-memory init wrote it" in done.stderr
    assert "nothing was written" in done.stderr
    assert "Move it aside" in done.stderr
    assert snapshot(workspace) == before


@pytest.mark.parametrize(("host", "path"), PLUGINS)
def test_a_plugin_as_an_other_version_of_init_wrote_it_is_replaced(
    workspace: Path, host: str, path: str
) -> None:
    """An upgrade: what the file holds is not what this init writes, but it is exactly what
    an init wrote (its seal says so), so it is replaced."""
    assert init("--host", host, "--command", "old/metis-memory", cwd=workspace).returncode == 0
    done = init("--host", host, cwd=workspace)
    assert done.returncode == 0, done.stderr
    assert f"{path}: updated" in done.stdout
    assert '"old/metis-memory"' not in (workspace / path).read_text(encoding="utf-8")
    again = init("--host", host, cwd=workspace)
    assert f"{path}: unchanged" in again.stdout


@pytest.mark.parametrize(("host", "path"), PLUGINS)
def test_a_plugin_checked_out_with_crlf_is_not_taken_for_an_edited_one(
    workspace: Path, host: str, path: str
) -> None:
    """git's core.autocrlf on Windows checks text files out with CRLF."""
    assert init("--host", host, cwd=workspace).returncode == 0
    plugin = workspace / path
    plugin.write_bytes(plugin.read_bytes().replace(b"\n", b"\r\n"))
    done = init("--host", host, cwd=workspace)
    assert done.returncode == 0, done.stderr
    assert b"\r\n" not in plugin.read_bytes()


@pytest.mark.parametrize(("host", "path"), PLUGINS)
def test_a_plugin_from_before_the_seal_is_still_ours(workspace: Path, host: str, path: str) -> None:
    plugin = workspace / path
    plugin.parent.mkdir(parents=True)
    plugin.write_text(f"// {OWNED_MARK}: the workspace memory, an older version\n")
    done = init("--host", host, cwd=workspace)
    assert done.returncode == 0, done.stderr
    assert f"{path}: updated" in done.stdout
    assert "async function metisMemory()" in plugin.read_text(encoding="utf-8")
