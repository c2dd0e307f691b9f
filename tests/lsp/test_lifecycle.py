"""Start and stop: the watcher's threads go away on `shutdown`, the process exits
on `exit` (0 after shutdown) or when the client vanishes, leaving nothing behind."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, client_capabilities

from support.lsp_session import SERVER_COMMAND, SERVER_ENV, MetisClient, end_session, make_client
from support.memory_files import write_memory
from support.waits import wait_until_async

EXIT_S = 10.0
NOTIFY_THREAD = "notify-rs inoti"  # the Rust watcher's OS thread (comm is cut at 15 chars)

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="reads /proc to see the server's threads"
)


@pytest_lsp.fixture(  # type: ignore[untyped-decorator]  # pytest-lsp ships no annotations here
    config=ClientServerConfig(
        server_command=SERVER_COMMAND, client_factory=make_client, server_env=SERVER_ENV
    )
)
async def client(lsp_client: MetisClient) -> AsyncIterator[None]:
    """The server as editors start it (`python -m metis_memory lsp`), not forked: these tests
    are about its process."""
    yield
    await end_session(lsp_client)


def server_process(client: MetisClient) -> asyncio.subprocess.Process:
    process = client._server
    assert process is not None
    return process


def thread_names(pid: int) -> list[str]:
    names = []
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as fh:
                names.append(fh.read().strip())
        except FileNotFoundError:  # the thread ended while listing
            continue
    return names


async def until(predicate: Callable[[], bool], what: str, timeout: float = EXIT_S) -> None:
    """Bounded wait for a state that sends no notification (a thread ending)."""
    await wait_until_async(predicate, what, timeout)


async def test_shutdown_stops_the_watcher_and_exit_ends_the_process(
    client: MetisClient, tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    write_memory(ws, "MEMORY.md", "- a\n")
    await client.start_session([ws])
    await client.wait_for_note("metis/usageChanged", lambda p: True)
    process = server_process(client)
    await until(lambda: NOTIFY_THREAD in thread_names(process.pid), "the watcher to start")

    await asyncio.wait_for(client.shutdown_async(None), EXIT_S)
    await until(lambda: NOTIFY_THREAD not in thread_names(process.pid), "the watcher thread to end")
    client.exit(None)
    assert await asyncio.wait_for(process.wait(), EXIT_S) == 0
    client.capabilities = None  # already shut down: the fixture must not do it again


async def test_a_vanished_client_ends_the_server(tmp_path: Path) -> None:
    """stdin closing without shutdown/exit (the editor crashed): exit code 1, promptly."""
    ws = tmp_path / "ws"
    write_memory(ws, "MEMORY.md", "- a\n")
    client = make_client()
    await client.start_io(*SERVER_COMMAND)
    try:
        await client.initialize_session(
            types.InitializeParams(
                capabilities=client_capabilities("visual-studio-code"),
                workspace_folders=[types.WorkspaceFolder(uri=ws.as_uri(), name="ws")],
            )
        )
        await client.wait_for_note("metis/usageChanged", lambda p: True)
        process = server_process(client)
        assert process.stdin is not None
        process.stdin.close()
        assert await asyncio.wait_for(process.wait(), EXIT_S) == 1
    finally:
        await asyncio.wait_for(client.stop(), EXIT_S)  # type: ignore[no-untyped-call]


async def test_exit_without_shutdown_is_an_error_exit(client: MetisClient, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    await client.start_session([ws])
    process = server_process(client)
    client.exit(None)
    assert await asyncio.wait_for(process.wait(), EXIT_S) == 1
    client.capabilities = None
