"""The harness that forks the tests' servers (support/forked_server.py) behaves as a server
process would for pytest-lsp: a killed launcher leaves no server behind."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import pytest

from support.forked_server import ZYGOTE
from support.lsp_session import MetisClient
from support.memory_files import write_memory
from support.waits import wait_until_async


def children(pid: int) -> set[int]:
    found = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                stat = fh.read()
        except FileNotFoundError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.add(int(entry))
    return found


async def forked_session(
    client: MetisClient, workspace: Path
) -> tuple[int, asyncio.subprocess.Process]:
    """A started session's server (the zygote's one child) and the launcher pytest-lsp runs."""
    if os.environ.get("METIS_TEST_SPAWN") == "1":
        pytest.skip("METIS_TEST_SPAWN=1: servers are started, not forked")
    write_memory(workspace, "MEMORY.md", "- a\n")
    await client.start_session([workspace])
    await client.wait_for_note("metis/usageChanged", lambda p: True)
    assert ZYGOTE.pid is not None
    servers = children(ZYGOTE.pid)
    assert len(servers) == 1, f"one server forked for this session, found {servers}"
    assert client._server is not None
    return servers.pop(), client._server


async def test_a_killed_launcher_takes_its_server_with_it(
    client: MetisClient, tmp_path: Path
) -> None:
    server, launcher = await forked_session(client, tmp_path)
    launcher.send_signal(signal.SIGKILL)
    await wait_until_async(
        lambda: server not in children(ZYGOTE.pid or 0), "the server to end with its launcher"
    )
    assert await launcher.wait() == -signal.SIGKILL
    client.capabilities = None  # the server is gone: the fixture has nothing to shut down


async def test_a_killed_server_ends_its_launcher_with_the_same_signal(
    client: MetisClient, tmp_path: Path
) -> None:
    """As a spawned server's process would end for its client (an OOM kill, a test's kill)."""
    server, launcher = await forked_session(client, tmp_path)
    os.kill(server, signal.SIGKILL)
    assert await launcher.wait() == -signal.SIGKILL
    client.capabilities = None  # the server is gone: the fixture has nothing to shut down
