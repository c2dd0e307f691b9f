"""Faults under the language server: the memory file deleted while open, `.metis/`
deleted and recreated, renamed away and back, replaced by a file, and the holder of the
workspace lock killed while writers wait. The server must keep publishing what is on
disk, give a clear error where it cannot, never write what it should not, and the
waiting writers must take over the lock as soon as its holder is dead."""

from __future__ import annotations

import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from metis_memory.store.atomic import workspace_lock
from metis_memory.store.errors import LockTimeout
from support.memory_files import temp_files
from support.reliability import report, scaled, server_tracebacks
from support.rpc_client import LspServer
from support.waits import Deadline

CYCLES = scaled(3, 1)
DUPLICATE = "# Memory\n- builds with make\n- Builds with make\n"
EMPTY_ENTRY = "# Memory\n- runs on Python 3.11\n-\n"
HANG_S = 60.0
"""A guard against a hang, not a time limit: filelock retries every 50 ms, and a writer that
could not take a dead holder's lock over would give up at its 30 s lock timeout and answer
with an error, which the checks after the wait catch."""


def latest_usage(server: LspServer, file: str = "MEMORY.md") -> dict[str, Any] | None:
    notes = server.notes("metis/usageChanged")
    return notes[-1]["usage"][file] if notes else None


def wait_for_disk_size(server: LspServer, size: int, file: str = "MEMORY.md") -> None:
    def holds() -> bool:
        usage = latest_usage(server, file)
        return usage is not None and usage["size_bytes"] == size and usage["source"] == "disk"

    server.wait_until(holds, f"usage of {file} on disk to be {size} B")


def test_the_watcher_survives_metis_deleted_recreated_and_renamed(
    workspace: Path, start_server: Any
) -> None:
    metis, away = workspace / ".metis", workspace / ".metis-away"
    memory = metis / "MEMORY.md"
    metis.mkdir()
    memory.write_text(DUPLICATE)
    server = start_server(workspace)
    server.wait_for_codes(memory, ["duplicate-entry"])
    started = time.monotonic()
    for _ in range(CYCLES):
        shutil.rmtree(metis)
        server.wait_for_codes(memory, [])
        wait_for_disk_size(server, 0)

        metis.mkdir()
        memory.write_text(EMPTY_ENTRY)
        server.wait_for_codes(memory, ["empty-entry"])
        wait_for_disk_size(server, len(EMPTY_ENTRY))

        metis.rename(away)
        server.wait_for_codes(memory, [])
        wait_for_disk_size(server, 0)
        away.rename(metis)
        server.wait_for_codes(memory, ["empty-entry"])

        # The watch is on the directory that came back: an edit inside it is seen.
        memory.write_text(DUPLICATE)
        server.wait_for_codes(memory, ["duplicate-entry"])
    # A write through the server still lands, is announced and is seen.
    result = server.command("metis.memoryAdd", {"file": "MEMORY.md", "entry": "- after the storm"})
    assert memory.read_text() == DUPLICATE + "- after the storm\n"
    wait_for_disk_size(server, result["after_size_bytes"])
    server.wait_for_note(
        "metis/memoryUpdated", lambda p: p["after_hash"] == result["after_hash"], "the event"
    )
    assert server.alive() and server_tracebacks(server) == []
    report(
        "watcher",
        cycles=CYCLES,
        changes_followed=6 * CYCLES + 1,
        seconds=round(time.monotonic() - started, 1),
    )


def test_metis_replaced_by_a_file_is_a_clear_error_and_recovers(
    workspace: Path, start_server: Any
) -> None:
    metis = workspace / ".metis"
    memory = metis / "MEMORY.md"
    metis.mkdir()
    memory.write_text(DUPLICATE)
    server = start_server(workspace)
    server.wait_for_codes(memory, ["duplicate-entry"])

    shutil.rmtree(metis)
    metis.write_bytes(b"a file where .metis/ should be\n")
    server.wait_for_codes(memory, [])
    for command, file in (("metis.memoryAdd", "MEMORY.md"), ("metis.memoryAdd", "USER.md")):
        error = server.command_error(command, {"file": file, "entry": "- lost?"})
        assert error.tool_code == "storage_error", error
        assert "A file stands where" in error.message and "Nothing was changed" in error.message
    assert metis.read_bytes() == b"a file where .metis/ should be\n"
    assert server.command("metis.usage", {})["MEMORY.md"]["size_bytes"] == 0

    metis.unlink()
    metis.mkdir()
    memory.write_text(EMPTY_ENTRY)
    server.wait_for_codes(memory, ["empty-entry"])
    server.command("metis.memoryAdd", {"file": "MEMORY.md", "entry": "- back"})
    assert memory.read_text() == EMPTY_ENTRY + "- back\n"
    assert server.alive() and server_tracebacks(server) == []


def test_the_memory_file_deleted_while_open_in_the_editor(
    workspace: Path, start_server: Any
) -> None:
    metis = workspace / ".metis"
    memory = metis / "MEMORY.md"
    metis.mkdir()
    memory.write_text(DUPLICATE)
    server = start_server(workspace)
    uri = server.open(memory, DUPLICATE)
    server.wait_for_codes(memory, ["duplicate-entry"])

    memory.unlink()
    # The user keeps typing in the buffer of the deleted file.
    edited = DUPLICATE + "- typed after the delete\n"
    server.change_all(uri, edited, 2)
    # The editor shows the buffer: diagnostics, usage and hover follow it.
    assert server.command("metis.usage", {})["MEMORY.md"] == {
        "size_bytes": len(edited),
        "soft_cap": 2048,
        "hard_cap": 4096,
        "over_soft_cap": False,
        "over_hard_cap": False,
        "source": "buffer",
        "level": "ok",
        "state": "within budget",
    }
    assert server.hover(uri, 0, 0) is not None
    assert server.codes_of(uri) == ["duplicate-entry"]
    # Writing now would put a file under the user's unsaved edits: refused, nothing made.
    for command, args in (
        ("metis.memoryAdd", {"file": "MEMORY.md", "entry": "- agent fact"}),
        ("metis.memoryReplace", {"file": "MEMORY.md", "old": "make", "new": "cmake"}),
        ("metis.memoryConsolidate", {"file": "MEMORY.md", "content": "- short\n"}),
    ):
        error = server.command_error(command, args)
        assert error.tool_code == "unsaved_changes", error
        assert "Nothing was written" in error.message
    assert not memory.exists(), "a refused write created the file"
    # The other file is unaffected.
    server.command("metis.memoryAdd", {"file": "USER.md", "entry": "- prefers tabs"})
    assert (metis / "USER.md").read_text() == "- prefers tabs\n"

    # The user saves: the file is back, and agent writes work again.
    memory.write_text(edited)
    server.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
    server.command("metis.memoryAdd", {"file": "MEMORY.md", "entry": "- agent fact"})
    assert memory.read_text() == edited + "- agent fact\n"

    # Closed and deleted: the server follows the disk to an empty file.
    server.close(uri)
    memory.unlink()
    server.wait_for_codes(memory, [])
    wait_for_disk_size(server, 0)
    assert server.alive() and server_tracebacks(server) == []


# ---- the lock holder killed -------------------------------------------------------------------

HOLDER = r"""
import sys
from pathlib import Path
from metis_memory.store.atomic import workspace_lock
with workspace_lock(Path(sys.argv[1])):
    print("held", flush=True)
    sys.stdin.read()  # until killed
"""

# The CLI's own main(), with filelock's debug log on stderr: it says when it waits.
CLI_WITH_LOCK_LOG = r"""
import logging, sys
logging.basicConfig(level=logging.DEBUG, stream=sys.stderr, format="%(name)s %(message)s")
from metis_memory.cli import main
sys.exit(main(sys.argv[1:]))
"""
WAITING = "not acquired"


def _lines(pipe: Any, into: queue.Queue[str]) -> None:
    for line in iter(pipe.readline, ""):
        into.put(line)
    into.put("")


def wait_for_line(lines: queue.Queue[str], needle: str, what: str, timeout: float) -> None:
    deadline = Deadline(timeout, what)
    while True:
        remaining = deadline.remaining()
        if remaining <= 0:
            raise deadline.expired()
        try:
            line = lines.get(timeout=remaining)
        except queue.Empty:
            continue
        if needle in line:
            return
        if line == "":
            raise AssertionError(f"the process ended before {what}")


def test_a_killed_lock_holder_frees_the_waiting_writers(workspace: Path, start_server: Any) -> None:
    metis = workspace / ".metis"
    memory = metis / "MEMORY.md"
    metis.mkdir()
    memory.write_text("# Memory\n")
    server: LspServer = start_server(workspace, env={"METIS_LSP_LOG": "DEBUG"})

    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(metis)], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    cli: subprocess.Popen[str] | None = None
    try:
        assert holder.stdout is not None and holder.stdout.readline() == b"held\n"
        with pytest.raises(LockTimeout), workspace_lock(metis, timeout=0.2):
            pytest.fail("took a lock another process holds")

        rid = server.request_nowait(
            "workspace/executeCommand",
            {
                "command": "metis.memoryAdd",
                "arguments": [{"file": "MEMORY.md", "entry": "- through the server"}],
            },
        )
        cli = subprocess.Popen(
            [
                *(sys.executable, "-c", CLI_WITH_LOCK_LOG, "add", "-w", str(workspace)),
                *("--json", "MEMORY.md", "- through the CLI"),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        cli_log: queue.Queue[str] = queue.Queue()
        threading.Thread(target=_lines, args=(cli.stderr, cli_log), daemon=True).start()
        # Both writers are waiting for the lock, by their own account.
        wait_for_line(cli_log, WAITING, "the CLI to wait for the lock", 30)
        server.wait_for_stderr(WAITING, "the server's write to wait for the lock", 30)
        assert memory.read_text() == "# Memory\n"
        assert not server.has_response(rid), "the server wrote past a held lock"

        killed = time.monotonic()
        os.kill(holder.pid, signal.SIGKILL)
        assert holder.wait(10) == -signal.SIGKILL
        result = server.response(rid, timeout=HANG_S).message
        out, _ = cli.communicate(timeout=HANG_S)
        took = time.monotonic() - killed
    finally:
        for proc in (holder, cli):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()
    assert result is not None and "result" in result, result
    assert cli.returncode == 0
    by_server, by_cli = result["result"], json.loads(out)
    # The two writes chained: one was based on the other's result, nothing was lost.
    first, second = sorted((by_server, by_cli), key=lambda r: r["before_size_bytes"])
    assert second["before_hash"] == first["after_hash"]
    text = memory.read_text()
    assert text.count("- through the server\n") == 1 and text.count("- through the CLI\n") == 1
    assert temp_files(metis) == []
    assert server.alive()
    report("lock-holder-killed", writers_waiting=2, takeover_s=round(took, 2), lost=0)


# ---- a full disk and a read-only filesystem, under the server ----------------------------------


def remount(mount_point: Path, mode: str) -> None:
    """Remount; while the server still holds its write log open for writing (it closes it
    after a second unused), the kernel says the mount point is busy: tried again, 10 s at
    most."""
    deadline = time.monotonic() + 10
    while True:
        done = subprocess.run(
            ["mount", "-o", f"remount,{mode}", str(mount_point)], capture_output=True, text=True
        )
        if done.returncode == 0:
            return
        if "busy" not in done.stderr or time.monotonic() > deadline:
            raise AssertionError(f"remount,{mode} failed: {done.stderr.strip()}")
        time.sleep(0.05)


def test_a_full_disk_and_a_read_only_filesystem_under_the_server(
    small_tmpfs: Path, start_server: Any
) -> None:
    workspace = small_tmpfs / "ws"
    metis = workspace / ".metis"
    metis.mkdir(parents=True)
    memory = metis / "MEMORY.md"
    memory.write_text("# Memory\n- builds with make\n")
    original = memory.read_bytes()
    server: LspServer = start_server(workspace)
    server.command("metis.usage", {})

    filler = small_tmpfs / "filler"
    with filler.open("wb", buffering=0) as out:  # fill the disk to the last byte
        for size in (4096, 1):
            try:
                while True:
                    out.write(b"\0" * size)
            except OSError:
                pass
    writes = [
        ("metis.memoryAdd", {"file": "MEMORY.md", "entry": "- " + "x" * 3000}),
        ("metis.memoryReplace", {"file": "MEMORY.md", "old": "make", "new": "cmake " * 400}),
        ("metis.memoryConsolidate", {"file": "MEMORY.md", "content": "- y\n" * 900}),
    ]
    for command, args in writes:
        error = server.command_error(command, args)
        assert error.tool_code == "storage_error", error.message
        assert "The disk is full: free some space and retry." in error.message
        assert memory.read_bytes() == original and temp_files(metis) == []
    filler.unlink()
    server.command("metis.memoryAdd", {"file": "MEMORY.md", "entry": "- space again"})
    assert memory.read_bytes() == original + b"- space again\n"

    saved = memory.read_bytes()
    remount(small_tmpfs, "ro")
    try:
        for command, args in writes:
            error = server.command_error(command, args)
            assert error.tool_code == "storage_error", error.message
            assert "read-only" in error.message and "Nothing was changed" in error.message
        assert server.command("metis.usage", {})["MEMORY.md"]["size_bytes"] == len(saved)
    finally:
        remount(small_tmpfs, "rw")
    assert memory.read_bytes() == saved and temp_files(metis) == []
    server.command("metis.memoryAdd", {"file": "MEMORY.md", "entry": "- writable again"})
    assert memory.read_bytes() == saved + b"- writable again\n"
    assert server.alive() and server_tracebacks(server) == []
    assert server.shutdown() == 0
