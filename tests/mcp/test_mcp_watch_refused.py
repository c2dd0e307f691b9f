"""The MCP server when the OS refuses its watch of `.metis/` (issue 39, item 10): started over
real stdio in a user namespace of its own whose inotify limit leaves room for one watch fewer
than it needs (the machine's limits are untouched), a `subscriptions/listen` stream still
hears of an outside write, and stderr carries one warning saying why and what to do, while
stdout stays the protocol's."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import anyio
import mcp
import pytest
from mcp import StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.subscriptions import Subscription

from metis_memory import MemoryStore
from support.lsp_session import SERVER_ENV

USER_URI = "metis://memory/USER.md"
MEMORY_URI = "metis://memory/MEMORY.md"
WAIT_S = 15

LOWER_THEN_SERVE = 'echo 1 > /proc/sys/user/max_inotify_watches && exec "$0" "$@"'
"""Run in the new namespace: one watch (the server's watcher needs the folder and `.metis/`),
then the server itself."""


def _unshare() -> str:
    """unshare(1), once it is known to give this test a namespace whose limit it may set."""
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("needs unshare(1) to lower the inotify limit for one process only")
    probe = [unshare, "--user", "--map-root-user", "sh", "-c", LOWER_THEN_SERVE, "true"]
    done = subprocess.run(probe, capture_output=True, text=True, timeout=30)
    if done.returncode != 0:
        pytest.skip(f"no user namespace for the limit here: {done.stderr.strip()[-300:]}")
    return unshare


async def test_outside_writes_reach_listeners_when_the_watch_is_refused(tmp_path: Path) -> None:
    unshare = _unshare()
    workspace = tmp_path / "ws"
    workspace.mkdir()
    MemoryStore(workspace).add_entry("MEMORY.md", "- before the server")
    command = [sys.executable, "-m", "metis_memory", "mcp", str(workspace)]
    params = StdioServerParameters(
        command=unshare,
        args=["--user", "--map-root-user", "sh", "-c", LOWER_THEN_SERVE, *command],
        env={**SERVER_ENV, "COLUMNS": "100000"},  # the SDK's log handler wraps at 80
    )
    stderr_path = tmp_path / "stderr.txt"

    async def next_uri(events: Subscription, what: str) -> str | None:
        try:
            with anyio.fail_after(WAIT_S):
                event = await events.__anext__()
        except TimeoutError:
            raise AssertionError(
                f"no resource update within {WAIT_S} s of {what}; "
                f"server stderr: {stderr_path.read_text()!r}"
            ) from None
        return getattr(event, "uri", None)

    with stderr_path.open("w") as stderr:
        async with (
            mcp.Client(stdio_client(params, errlog=stderr)) as client,
            client.listen(resource_subscriptions=[USER_URI, MEMORY_URI]) as events,
        ):
            MemoryStore(workspace).add_entry("USER.md", "- written by another process")
            assert await next_uri(events, "another process's add") == USER_URI
            (workspace / ".metis" / "MEMORY.md").write_text("- by hand\n")
            assert await next_uri(events, "a write by hand") == MEMORY_URI
    log = stderr_path.read_text()
    refusals = [line for line in log.splitlines() if "refused to watch" in line]
    assert len(refusals) == 1, log
    assert "polling MEMORY.md and USER.md" in refusals[0], refusals[0]
    assert "fs.inotify.max_user_watches" in refusals[0], refusals[0]
