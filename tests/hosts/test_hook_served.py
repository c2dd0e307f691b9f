"""What a session is recorded as having (issue 39): only what its hook wrote (item 6), read
back whatever the host's stamp (item 12), decided on the memory as it is under the
session's lock, and kept while the session is in use (the "also seen" pair)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from metis_memory.hosts.hook import STALE_BUDGET_ENV
from metis_memory.hosts.sessions import MAX_AGE_S, SessionLog, session_workspace
from metis_memory.store.cache import CACHE_ENV, locked_private
from support.hooks import Hook
from support.host_inputs import (
    CLAUDE_PROMPT,
    CLAUDE_SESSION_START,
    VSCODE_COPILOT_PROMPT,
    VSCODE_SESSION_START,
    filled,
)
from support.memory_files import write_memory
from support.waits import wait_until

MEMORY = "- entry point `cmd/tallyd/main.go`\n- CI runs on Fridays only\n"


def context_of(stdout: str) -> str:
    answer = json.loads(stdout)
    text: str = answer["hookSpecificOutput"]["additionalContext"]
    return text


def _env(tmp_path: Path, **more: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_PROJECT_DIR")}
    return {**env, CACHE_ENV: str(tmp_path / "cache"), **more}


def _log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> SessionLog:
    """The session records the hook processes of this test use (the cache they are given)."""
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    return SessionLog()


# ---- item 6: recorded only once answered --------------------------------------------------------
SLOW_CHECK = """
import os, sys, threading
import metis_memory.workspace.staleness as staleness

def slow(*args, **kwargs):
    open(os.environ["MARK"], "w").close()  # the hook is building its answer now
    threading.Event().wait()  # ... and never finishes: the host's timeout will end it

staleness.stale_references = slow
from metis_memory.cli import main_exit
sys.argv = ["metis-memory", *sys.argv[1:]]
main_exit()
"""


def test_a_hook_killed_before_it_answered_leaves_the_session_without_a_record(
    hook: Hook, workspace: Path, tmp_path: Path
) -> None:
    """Before: the record was written before the answer was built, so a hook killed by the
    host's timeout (a slow secret scan, a hung check) left "sent" recorded, and every later
    prompt answered "unchanged": the session never got the memory."""
    write_memory(workspace, "MEMORY.md", MEMORY)
    mark = tmp_path / "building"
    start = json.dumps(filled(CLAUDE_SESSION_START, cwd=str(workspace), session="s")).encode()
    proc = subprocess.Popen(
        [sys.executable, "-c", SLOW_CHECK, "hook", "--host", "claude"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=workspace,
        env=_env(tmp_path, MARK=str(mark), **{STALE_BUDGET_ENV: "600000"}),
    )
    try:
        assert proc.stdin is not None
        proc.stdin.write(start)
        proc.stdin.close()
        proc.stdin = None  # (so that `communicate` does not flush it)
        wait_until(mark.exists, "the hook to start building its answer")
    finally:
        proc.send_signal(signal.SIGKILL)  # as a host's timeout does
        out, _ = proc.communicate(timeout=60)
    assert out == b"", "killed before it answered"
    prompt = filled(CLAUDE_PROMPT, cwd=str(workspace), session="s")
    done = hook("--host", "claude", payload=prompt)
    assert done.returncode == 0 and "Fridays" in context_of(done.stdout)


def test_a_host_that_stopped_reading_is_sent_the_memory_again(
    hook: Hook, workspace: Path, tmp_path: Path
) -> None:
    """An answer that could not be written (stdout closed) is not recorded either."""
    write_memory(workspace, "MEMORY.md", MEMORY)
    start = json.dumps(filled(CLAUDE_SESSION_START, cwd=str(workspace), session="s")).encode()
    script = Path(sys.executable).parent / "metis-memory"
    read, write = os.pipe()
    os.close(read)  # nobody will read what the hook prints
    try:
        done = subprocess.run(
            [str(script), "hook", "--host", "claude"],
            input=start,
            stdout=write,
            stderr=subprocess.PIPE,
            cwd=workspace,
            env=_env(tmp_path),
            timeout=60,
            check=False,
        )
    finally:
        os.close(write)
    assert done.returncode == 0
    prompt = filled(CLAUDE_PROMPT, cwd=str(workspace), session="s")
    assert "Fridays" in context_of(hook("--host", "claude", payload=prompt).stdout)


# ---- item 12: a stamp of any length -------------------------------------------------------------
@pytest.mark.parametrize(
    "stamp",
    [10**450, 1e308, "9" * 64, "\u00e9" * 60 + '"\\'],
    ids=["451 digits", "1e308", "64 digits", "escapes"],
)
def test_a_huge_host_stamp_still_gives_a_record_read_back(
    stamp: object, hook: Hook, workspace: Path
) -> None:
    """Before: a 451-digit JSON number made the record 518 bytes, over the 512 read back,
    so the record read as none, and the second hook file of the same session start (and
    the next prompt) sent the memory again."""
    write_memory(workspace, "MEMORY.md", MEMORY)
    start = {**filled(VSCODE_SESSION_START, cwd=str(workspace), session="s"), "timestamp": stamp}
    assert "Fridays" in context_of(hook("--host", "copilot", payload=start).stdout)
    second_file = hook("--host", "copilot", payload=start)
    assert (second_file.stdout, second_file.stderr) == ("", "")
    prompt = filled(VSCODE_COPILOT_PROMPT, cwd=str(workspace), session="s")
    assert hook("--host", "copilot", payload=prompt).stdout == ""
    # ... and a different start (a resume) still sends: equal stamps only are one event.
    resumed = {**start, "timestamp": stamp * 2 if isinstance(stamp, str) else 7}
    assert "Fridays" in context_of(hook("--host", "copilot", payload=resumed).stdout)


# ---- also seen: the memory read under the session's lock --------------------------------------
def _holds_open(pid: int, path: Path) -> bool:
    fds = Path(f"/proc/{pid}/fd")
    try:
        return any(os.readlink(fds / fd) == str(path) for fd in os.listdir(fds))
    except OSError:  # (the process ended, or a descriptor closed while listed)
        return False


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc to see the wait")
def test_a_hook_waiting_for_the_lock_sends_the_memory_as_it_is_once_it_has_it(
    hook: Hook, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Copilot CLI runs two hook files per prompt: one decides while the other waits for
    the session's lock. Before: the waiter had read the memory before it asked for the
    lock, so a write landing meanwhile was not what it sent (or recorded)."""
    del hook
    write_memory(workspace, "MEMORY.md", MEMORY)
    log = _log(tmp_path, monkeypatch)
    record = Path(log._record(session_workspace(workspace), "s"))
    lock = record.with_name(record.name + ".lock")
    script = Path(sys.executable).parent / "metis-memory"
    start = json.dumps(filled(CLAUDE_SESSION_START, cwd=str(workspace), session="s")).encode()
    with locked_private(lock) as held:  # another hook of the session, deciding
        assert held
        proc = subprocess.Popen(
            [str(script), "hook", "--host", "claude"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=workspace,
            env=_env(tmp_path),
        )
        assert proc.stdin is not None
        proc.stdin.write(start)
        proc.stdin.close()
        proc.stdin = None  # (so that `communicate` does not flush it)
        wait_until(lambda: _holds_open(proc.pid, lock), "the hook to wait for the lock")
        write_memory(workspace, "MEMORY.md", MEMORY + "- deploys need two approvals\n")
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0 and err == b"", err
    assert "two approvals" in context_of(out.decode())


# ---- also seen: a record in use is not pruned ---------------------------------------------------
def test_a_session_in_use_keeps_its_record_past_the_prune_age(
    hook: Hook, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: the prune went by the time the record was written, so a session whose
    memory did not change for 14 days lost its record while in use, and its next prompt
    got the memory a second time."""
    write_memory(workspace, "MEMORY.md", MEMORY)
    log = _log(tmp_path, monkeypatch)
    start = filled(CLAUDE_SESSION_START, cwd=str(workspace), session="s")
    prompt = filled(CLAUDE_PROMPT, cwd=str(workspace), session="s")
    assert "Fridays" in context_of(hook("--host", "claude", payload=start).stdout)
    record = Path(log._record(session_workspace(workspace), "s"))
    written = time.time() - MAX_AGE_S - 24 * 3600  # written 15 days ago...
    os.utime(record, (written, written))
    assert hook("--host", "claude", payload=prompt).stdout == ""  # ...and used today
    log.prune()
    assert record.exists()
    assert hook("--host", "claude", payload=prompt).stdout == ""
    # A session idle past the age is pruned, and gets the memory once more.
    os.utime(record, (written, written))
    log.prune()
    assert not record.exists()
    assert "Fridays" in context_of(hook("--host", "claude", payload=prompt).stdout)
