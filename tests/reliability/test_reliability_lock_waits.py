"""Writes waiting for a lock another process holds (a stopped agent, say): reads are still
answered at once, and a write the client cancels meanwhile is reported as what it did."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from metis_memory.store.atomic import workspace_lock
from support.reliability import report, server_tracebacks
from support.rpc_client import LspServer

WAITING = "not acquired"
WRITES_WAITING = 8
"""More writes than the default thread pool's threads on a two-core machine (6)."""
HANG_S = 60.0
"""A guard against a hang, not a time limit. Reads do not touch the lock; before writes had
their own pool, a read waited behind them until they gave up on the lock (30 s) and answered
with errors, which the check that no write answered while the lock was held catches."""


def add(entry: str) -> dict[str, Any]:
    return {"command": "metis.memoryAdd", "arguments": [{"file": "MEMORY.md", "entry": entry}]}


def start(workspace: Path, start_server: Any) -> tuple[LspServer, Path]:
    metis = workspace / ".metis"
    metis.mkdir()
    (metis / "MEMORY.md").write_text("# Memory\n")
    server: LspServer = start_server(workspace, env={"METIS_LSP_LOG": "DEBUG"})
    return server, metis


def test_reads_are_answered_while_writes_wait_for_the_lock(
    workspace: Path, start_server: Any
) -> None:
    server, metis = start(workspace, start_server)
    with workspace_lock(metis):
        rids = [
            server.request_nowait("workspace/executeCommand", add(f"- write {n}"))
            for n in range(WRITES_WAITING)
        ]
        server.wait_for_stderr(WAITING, "a write to wait for the lock", 30)
        started = time.monotonic()
        for command in ("metis.usage", "metis.read"):
            server.command(command, {}, timeout=HANG_S)
        server.command("metis.assemblePrompt", {"base": "b"}, timeout=HANG_S)
        took = time.monotonic() - started
        assert not any(server.has_response(rid) for rid in rids), "a write passed the lock"
    for rid in rids:
        message = server.response(rid, timeout=60).message
        assert message is not None and "result" in message, message
    text = (metis / "MEMORY.md").read_text()
    assert all(f"- write {n}\n" in text for n in range(WRITES_WAITING))
    assert server_tracebacks(server) == []
    report("reads behind waiting writes", writes_waiting=WRITES_WAITING, reads_s=round(took, 2))


def test_a_write_cancelled_while_it_waits_reports_what_it_did(
    workspace: Path, start_server: Any
) -> None:
    server, metis = start(workspace, start_server)
    with workspace_lock(metis):
        rid = server.request_nowait("workspace/executeCommand", add("- cancelled?"))
        server.wait_for_stderr(WAITING, "the write to wait for the lock", 30)
        server.notify("$/cancelRequest", {"id": rid})
        server.command("metis.usage", {})  # the cancel notification has been handled
        early = server.response(rid).message if server.has_response(rid) else None
        assert early is None, f"answered while the write still waits for the lock: {early}"
    message = server.response(rid, timeout=30).message
    assert message is not None
    # The write ran once the lock was free: the client is told so, with its hashes.
    assert "result" in message, message
    assert message["result"]["after_size_bytes"] == len("# Memory\n- cancelled?\n")
    assert (metis / "MEMORY.md").read_text() == "# Memory\n- cancelled?\n"
    assert server_tracebacks(server) == []
