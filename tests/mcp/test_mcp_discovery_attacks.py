"""`metis-memory mcp` with no folder named (opencode starts it so, in the folder it runs in):
where it looks for the workspace when that folder is gone, or when a host's project
variable is not an absolute path. As a host starts it: a real process over stdio."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import mcp
import pytest

from metis_memory import MemoryStore
from support.mcp_stdio import mcp_server
from support.mcp_values import text

SCRIPT = Path(sys.executable).parent / "metis-memory"
MEMORY_URI = "metis://memory/MEMORY.md"


def test_a_folder_removed_under_it_is_a_message_not_a_traceback(tmp_path: Path) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    done = subprocess.run(
        ["sh", "-c", 'cd "$1" && rmdir "$1" && exec "$2" mcp', "sh", str(gone), str(SCRIPT)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith("metis-memory: the folder this server was started in")
    assert "metis-memory mcp DIR" in done.stderr


async def test_a_relative_project_variable_is_not_a_folder_named(tmp_path: Path) -> None:
    """The hook takes a host's project variable only when it is an absolute path
    (`hook_shared.find_workspace`); the server did take `rel` against its own folder, and
    served a new `src/rel/.metis/` while the hook and the plugins read the project's."""
    project = tmp_path / "project"
    src = project / "src"
    (src / "rel").mkdir(parents=True)
    MemoryStore(project).add_entry("MEMORY.md", "- the project's memory")
    env = {"PATH": "/usr/bin:/bin", "CLAUDE_PROJECT_DIR": "rel"}
    async with mcp.Client(mcp_server(cwd=str(src), env=env)) as client:
        read = await client.read_resource(MEMORY_URI)
        assert text(read.contents[0]) == "- the project's memory\n"
        await client.call_tool("memory_add", {"file": "MEMORY.md", "entry": "- from src"})
    assert "- from src" in (project / ".metis" / "MEMORY.md").read_text(encoding="utf-8")
    assert not (src / "rel" / ".metis").exists()
    assert os.listdir(src / "rel") == []


@pytest.mark.parametrize("host", ["opencode", "cline"])
async def test_a_subfolder_of_a_folder_init_connected_writes_beside_its_plugin(
    tmp_path: Path, host: str
) -> None:
    """Before the first write there is no `.metis/` to find: opencode (or the Cline CLI)
    started in `src/` starts the server there, while its plugin reads the memory of the
    folder init wrote it into. The agent's first write lands in that folder's memory."""
    project = tmp_path / "project"
    sub = project / "src"
    sub.mkdir(parents=True)
    subprocess.run(
        [sys.executable, "-m", "metis_memory", "init", "--host", host, str(project)],
        check=True,
        capture_output=True,
    )
    assert not (project / ".metis").exists()
    params = mcp_server(cwd=str(sub), env={"PATH": "/usr/bin:/bin"})
    async with mcp.Client(params) as client:
        await client.call_tool("memory_add", {"file": "MEMORY.md", "entry": "- first fact"})
    assert "- first fact" in (project / ".metis" / "MEMORY.md").read_text(encoding="utf-8")
    assert not (sub / ".metis").exists()


def test_the_plugins_the_server_looks_for_are_the_ones_init_writes() -> None:
    from metis_memory.cli import WORKSPACE_SIGNS
    from metis_memory.hosts import opencode
    from metis_memory.hosts.configs import CLINE_PLUGIN_PATH

    assert {opencode.PLUGIN_PATH, CLINE_PLUGIN_PATH, ".metis"} == set(WORKSPACE_SIGNS)
