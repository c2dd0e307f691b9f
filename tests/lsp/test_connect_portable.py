"""Connect Agents writes files a team can commit, over real stdio: nothing in them names
this machine (run with no `metis-memory` on PATH, where the server used to write its own
interpreter's path), the hosts ticked are those found in the folder and on the machine,
and `metis.installLauncher` gives this machine a `metis-memory` that runs for real.

The server here is spawned, not forked: it runs with a HOME and a PATH of this module's own
(the forked servers share the suite's one environment)."""

from __future__ import annotations

import atexit
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_lsp
from pytest_lsp import ClientServerConfig

from metis_memory import __version__
from metis_memory.hosts.configs import SETUPS
from metis_memory.hosts.launcher import MARK
from support.lsp_session import SERVER_COMMAND, SERVER_ENV, MetisClient, end_session, make_client

HOME = Path(tempfile.mkdtemp(prefix="metis-connect-home-"))
BIN = Path(tempfile.mkdtemp(prefix="metis-connect-path-"))
"""The server's PATH: one folder, where a test puts the commands it wants found."""
atexit.register(shutil.rmtree, HOME, True)
atexit.register(shutil.rmtree, BIN, True)
ENV = {
    **{
        k: v
        for k, v in SERVER_ENV.items()
        if k not in ("PIPX_BIN_DIR", "XDG_BIN_HOME", "CODEX_HOME", "PYTHONPATH")
    },
    "HOME": str(HOME),
    "PATH": str(BIN),
}
LAUNCHER = HOME / ".local" / "bin" / "metis-memory"
REQUEST_FAILED = -32803
ROOTED = re.compile(r"""(?:^|[\s"'=:(\[,])(/[\w.~-]+/[\w.~-]+)""", re.M)
"""A path from the root with at least two parts, where a file could name one: a JSON or TOML
string, an argument, a line's start (not `#!/bin/sh`, not `/memories/` in prose)."""


@pytest_lsp.fixture(  # type: ignore[untyped-decorator]  # pytest-lsp ships no annotations here
    config=ClientServerConfig(
        server_command=SERVER_COMMAND, client_factory=make_client, server_env=ENV
    )
)
async def client(lsp_client: MetisClient) -> AsyncIterator[None]:
    yield
    await end_session(lsp_client)


@pytest.fixture(autouse=True)
def empty_home_and_path() -> Iterator[None]:
    for folder in (HOME, BIN):
        for entry in folder.iterdir():
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()
    yield


def machine_paths(workspace: Path) -> list[str]:
    """What would make a file work on this machine only."""
    launcher = Path(sys.argv[0]).resolve()
    return [
        sys.executable,
        os.path.realpath(sys.executable),
        sys.prefix,
        str(launcher.parent),
        str(workspace),
        str(HOME),
        tempfile.gettempdir(),
        "server.py",
        "python",
        "metis_memory",
    ]


async def test_connect_never_writes_a_path_on_this_machine(
    client: MetisClient, workspace: Path
) -> None:
    assert shutil.which("metis-memory", path=ENV["PATH"]) is None
    await client.start_session([workspace])
    result = await client.command("metis.connectAgents", {"hosts": list(SETUPS)})
    assert result["command"] == "metis-memory"
    # One entry per file, whichever hosts share it (.mcp.json: Claude Code and Copilot CLI).
    files = {e.path for s in SETUPS.values() for e in s.edits("metis-memory")}
    assert sorted(f["path"] for f in result["files"]) == sorted(files)
    assert {f["change"] for f in result["files"]} == {"created"}
    for file in result["files"]:
        text = (workspace / file["path"]).read_text(encoding="utf-8")
        assert "metis-memory" in text, f"{file['path']} does not run metis-memory"
        for path in machine_paths(workspace):
            assert path not in text, f"{file['path']} names {path!r}:\n{text}"
        assert not ROOTED.findall(text), f"{file['path']} names {ROOTED.findall(text)}"
    # Agents cannot run it here yet: the result says so, and where a launcher would go.
    assert result["onPath"] is False
    assert result["launcher"] == {
        "path": "~/.local/bin/metis-memory",
        "state": "absent",
        "found": None,
        "binOnPath": False,
        "pathHint": 'export PATH="$HOME/.local/bin:$PATH"',
    }


async def test_hosts_are_found_by_folder_files_path_and_home(
    client: MetisClient, workspace: Path
) -> None:
    (workspace / "CLAUDE.md").write_text("# Rules\n")
    (workspace / ".clinerules").mkdir()
    (workspace / "QWEN.md").write_text("# Rules\n")
    (HOME / ".gemini").mkdir()
    (HOME / ".config" / "opencode").mkdir(parents=True)
    for command in ("codex", "opencode"):
        (BIN / command).write_text("#!/bin/sh\n")
        (BIN / command).chmod(0o755)
    await client.start_session([workspace])
    hosts = await client.command("metis.agentHosts", {})
    assert {h["name"]: h["detected"] for h in hosts} == {name: [] for name in SETUPS} | {
        "claude": ["CLAUDE.md in this folder"],
        "codex": ["codex on PATH"],
        "gemini": ["~/.gemini/ on this machine"],
        "cline": [".clinerules in this folder"],
        "opencode": ["opencode on PATH", "~/.config/opencode/ on this machine"],
        "qwen": ["QWEN.md in this folder"],
    }


async def test_the_launcher_runs_metis_memory_and_stays_ours(
    client: MetisClient, workspace: Path
) -> None:
    await client.start_session([workspace])
    result = await client.command("metis.installLauncher", {})
    assert result["written"] is True and result["onPath"] is False
    assert result["launcher"]["state"] == "current"
    assert result["message"].startswith("Added ~/.local/bin/metis-memory: it runs the metis-memory")
    assert result["message"].endswith(
        "~/.local/bin is not on your PATH, so agents do not find it yet: add this line to your "
        "shell's startup file (~/.profile, ~/.bashrc or ~/.zshrc), then start the agent from "
        'a new terminal:\nexport PATH="$HOME/.local/bin:$PATH"'
    )
    assert (LAUNCHER.stat().st_mode & 0o777) == 0o755 and MARK in LAUNCHER.read_text()
    done = subprocess.run(
        ["metis-memory", "--version"],
        env={"PATH": f"{LAUNCHER.parent}:/usr/bin:/bin", "HOME": str(HOME)},
        capture_output=True,
        encoding="utf-8",
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stdout.strip()) == (0, f"metis-memory {__version__}"), done.stderr
    for argument in ({}, {"refresh": True}):
        again = await client.command("metis.installLauncher", argument)
        assert again["written"] is False and again["launcher"]["state"] == "current"
    connect = await client.command("metis.connectAgents", {"hosts": ["claude"], "dryRun": True})
    assert connect["launcher"]["state"] == "current" and connect["onPath"] is False


async def test_a_launcher_that_is_not_ours_is_a_conflict_and_left_alone(
    client: MetisClient, workspace: Path
) -> None:
    LAUNCHER.parent.mkdir(parents=True)
    LAUNCHER.write_text('#!/bin/sh\nexec my-own-metis "$@"\n')
    await client.start_session([workspace])
    error = await client.command_error("metis.installLauncher", {})
    assert error.code == REQUEST_FAILED
    assert error.data == {"code": "conflict", "is_user_visible": True}
    assert error.message.startswith(
        "~/.local/bin/metis-memory exists and was not written by this extension"
    )
    refresh = await client.command("metis.installLauncher", {"refresh": True})
    assert refresh["written"] is False and refresh["launcher"]["state"] == "foreign"
    assert LAUNCHER.read_text() == '#!/bin/sh\nexec my-own-metis "$@"\n'
    connect = await client.command("metis.connectAgents", {"hosts": ["cursor"], "dryRun": True})
    assert connect["launcher"]["state"] == "foreign"
