"""The hook's first look (issue 26, item 6): a prompt whose session already has this very
memory is answered from `hosts/hook_command.py` and `fingerprint.py` alone, without the
store, the CLI's parser, `dataclasses` or `typing`; anything it is not sure of goes to the
full hook, which decides as before."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from metis_memory import MemoryStore
from metis_memory.hosts.context import read_context
from metis_memory.store.fingerprint import READ_LIMIT_BYTES, quick_digest
from support.hooks import Hook
from support.host_inputs import CLAUDE_PROMPT, CLAUDE_SESSION_START, filled

MEMORY = "- the payments service retries webhooks 5 times\n"
HEAVY = ("metis_memory.store.memory_store", "metis_memory.cli", "argparse", "dataclasses", "typing")
"""What an unchanged prompt must not load: each costs more than the whole quick answer."""


def payload(template: dict[str, object], workspace: Path, session: str = "q-1") -> bytes:
    return json.dumps(filled(template, cwd=str(workspace), session=session)).encode()


def loaded_by_prompt(workspace: Path, cache: Path, data: bytes) -> tuple[str, set[str]]:
    """Run `metis-memory hook --host claude` in a fresh interpreter as the console script
    does; its stdout and the modules it had loaded when it answered."""
    probe = (
        "import sys\n"
        "from metis_memory.entry import main\n"
        "sys.argv = ['metis-memory', 'hook', '--host', 'claude']\n"
        "code = main()\n"
        "sys.stderr.write('\\nMODULES ' + ' '.join(sorted(sys.modules)))\n"
        "sys.exit(code)\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.endswith("_PROJECT_DIR")}
    env["METIS_MEMORY_CACHE_DIR"] = str(cache)
    done = subprocess.run(
        [sys.executable, "-c", probe],
        input=data,
        capture_output=True,
        cwd=workspace,
        env=env,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    err = done.stderr.decode()
    return done.stdout.decode(), set(err.rsplit("MODULES ", 1)[1].split())


def test_an_unchanged_prompt_is_answered_without_the_store(
    store: MemoryStore, workspace: Path, tmp_path: Path
) -> None:
    store.add_entry("MEMORY.md", MEMORY)
    cache = tmp_path / "cache"
    out, _ = loaded_by_prompt(workspace, cache, payload(CLAUDE_SESSION_START, workspace))
    assert MEMORY.strip() in out
    out, modules = loaded_by_prompt(workspace, cache, payload(CLAUDE_PROMPT, workspace))
    assert out == ""
    assert not modules & set(HEAVY), f"an unchanged prompt loaded {modules & set(HEAVY)}"
    # ... and a change is seen (by the full hook, which the quick look hands it to).
    store.add_entry("MEMORY.md", "- CI runs on Fridays only")
    out, modules = loaded_by_prompt(workspace, cache, payload(CLAUDE_PROMPT, workspace))
    assert "Fridays" in out and "metis_memory.store.memory_store" in modules


def test_a_record_planted_in_a_shared_cache_still_gets_the_memory_sent(
    store: MemoryStore, workspace: Path, tmp_path: Path, hook: Hook
) -> None:
    """The quick look reads the record through the same checks as the full hook: a cache
    others may write in is no record, so the memory is sent (with the full hook's warning)."""
    del hook
    store.add_entry("MEMORY.md", MEMORY)
    shared = tmp_path / "shared"
    shared.mkdir()
    cache_run = loaded_by_prompt(workspace, shared, payload(CLAUDE_SESSION_START, workspace))
    assert MEMORY.strip() in cache_run[0]
    (shared / "metis-memory").chmod(0o777)  # now anyone could have planted "it has this"
    out, _ = loaded_by_prompt(workspace, shared, payload(CLAUDE_PROMPT, workspace))
    assert MEMORY.strip() in out


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    user=st.none() | st.binary(max_size=300),
    memory=st.none() | st.binary(max_size=300) | st.text(max_size=200).map(str.encode),
)
def test_the_quick_digest_is_the_full_reads_digest(
    tmp_path_factory: pytest.TempPathFactory, user: bytes | None, memory: bytes | None
) -> None:
    """Missing files, empty ones, bytes that are not UTF-8, CRLF: equal digests, so "the
    session has it" means the same to both looks."""
    ws = tmp_path_factory.mktemp("ws")
    metis = ws / ".metis"
    if user is not None or memory is not None:
        metis.mkdir()
    for name, data in (("USER.md", user), ("MEMORY.md", memory)):
        if data is not None:
            (metis / name).write_bytes(data)
    assert quick_digest(str(ws)) == read_context(MemoryStore(ws), stale=False).digest


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    everywhere=st.none() | st.just(b"") | st.binary(max_size=300),
    folder=st.booleans(),
    memory=st.none() | st.binary(max_size=300),
)
def test_the_quick_digest_with_a_user_memory_is_the_full_reads_digest(
    tmp_path_factory: pytest.TempPathFactory,
    everywhere: bytes | None,
    folder: bool,
    memory: bytes | None,
) -> None:
    """The user memory (issue 43) missing, in a folder of its own or not, empty, not
    UTF-8: the quick look and the store's read agree, so a change to it is seen by both."""
    ws, config = tmp_path_factory.mktemp("ws"), tmp_path_factory.mktemp("config")
    if memory is not None:
        (ws / ".metis").mkdir()
        (ws / ".metis" / "MEMORY.md").write_bytes(memory)
    if folder or everywhere is not None:
        (config / "metis-memory").mkdir(mode=0o700)
    if everywhere is not None:
        (config / "metis-memory" / "USER.md").write_bytes(everywhere)
        (config / "metis-memory" / "USER.md").chmod(0o600)
    full = read_context(
        MemoryStore(ws).with_user_memory(MemoryStore.for_user(str(config))), stale=False
    )
    assert quick_digest(str(ws), str(config)) == full.digest
    without = read_context(
        MemoryStore(ws).with_user_memory(MemoryStore.for_user(str(ws))), stale=False
    )
    assert (full.digest == without.digest) == (everywhere is None)


def test_a_user_memory_the_store_may_refuse_is_left_to_it(
    workspace: Path, user_config_home: Path
) -> None:
    """Only a user memory whose folder and file are the user's alone is read here; for any
    other the store decides (and says why, in a note)."""
    MemoryStore.for_user().add_entry("USER.md", "- answers in British English")
    folder = user_config_home / "metis-memory"
    real = folder / "USER.md"
    assert quick_digest(str(workspace)) == read_context(MemoryStore(workspace)).digest
    for path, mode in ((folder, 0o770), (folder, 0o707), (real, 0o660), (real, 0o606)):
        before = path.stat().st_mode
        path.chmod(mode)
        assert quick_digest(str(workspace)) is None, (path.name, oct(mode))
        path.chmod(before)
    (user_config_home / "notes.md").write_bytes(real.read_bytes())
    real.unlink()
    real.symlink_to(user_config_home / "notes.md")
    assert quick_digest(str(workspace)) is None
    real.unlink()
    away = user_config_home.parent / f"{user_config_home.name}-away"
    folder.rename(away)
    folder.symlink_to(away, target_is_directory=True)
    assert quick_digest(str(workspace)) is None


def test_anything_but_plain_files_is_left_to_the_store(store: MemoryStore, workspace: Path) -> None:
    store.add_entry("MEMORY.md", MEMORY)
    metis = workspace / ".metis"
    real = metis / "MEMORY.md"
    assert quick_digest(str(workspace)) is not None
    (workspace / "notes.md").write_bytes(real.read_bytes())
    real.unlink()
    real.symlink_to(workspace / "notes.md")  # inside the workspace: the store follows it
    assert quick_digest(str(workspace)) is None
    real.unlink()
    os.mkfifo(real)
    assert quick_digest(str(workspace)) is None  # (and nothing blocked on the FIFO)
    real.unlink()
    with real.open("wb") as f:  # sparse: past the read limit without writing 16 MiB
        f.truncate(READ_LIMIT_BYTES + 1)
    assert quick_digest(str(workspace)) is None
    real.unlink()
    other = workspace.parent / "elsewhere"
    other.mkdir()
    metis.rename(other / ".metis")
    metis.symlink_to(other / ".metis")
    assert quick_digest(str(workspace)) is None


def test_a_hook_that_cannot_load_still_exits_0_with_one_line(workspace: Path) -> None:
    """A half-upgraded install (seen while the hook's modules were being rewritten): the
    host gets exit 0 and nothing on stdout, not a traceback it would show or block on."""
    probe = (
        "import sys\n"
        "class Broken:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'metis_memory.hosts.hook_command':\n"
        "            raise ImportError('simulated: half-installed')\n"
        "sys.meta_path.insert(0, Broken())\n"
        "from metis_memory.entry import main\n"
        "sys.exit(main(['hook', '--host', 'gemini']))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        input=payload(CLAUDE_PROMPT, workspace),
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0 and done.stdout == b""
    lines = done.stderr.decode().splitlines()
    assert len(lines) == 1 and "could not load" in lines[0] and "half-installed" in lines[0]


def test_a_host_that_stopped_reading_still_gets_exit_0(
    store: MemoryStore, workspace: Path, tmp_path: Path
) -> None:
    """stdout closed before the answer (a host that gave up on a slow hook): no traceback,
    and exit 0, on the quick path (Gemini's `{}`) and the full one (the memory)."""
    store.add_entry("MEMORY.md", MEMORY)
    env = {k: v for k, v in os.environ.items() if not k.endswith("_PROJECT_DIR")}
    env["METIS_MEMORY_CACHE_DIR"] = str(tmp_path / "cache")
    script = Path(sys.executable).parent / "metis-memory"
    gemini_prompt = {
        "session_id": "gone",
        "hook_event_name": "BeforeAgent",
        "cwd": str(workspace),
        "prompt": "hi",
    }
    for _ in range(2):  # the first sends the memory (full path), the second `{}` (quick)
        proc = subprocess.Popen(
            [str(script), "hook", "--host", "gemini"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=workspace,
            env=env,
        )
        assert proc.stdout is not None and proc.stdin is not None and proc.stderr is not None
        proc.stdout.close()  # the host is gone before the hook answers
        proc.stdin.write(json.dumps(gemini_prompt).encode())
        proc.stdin.close()
        err = proc.stderr.read()
        assert proc.wait(timeout=60) == 0, err
        assert b"Traceback" not in err, err


@pytest.mark.parametrize("when", [float("nan"), float("inf"), "not a time", True, 10**30])
def test_a_timestamp_no_host_sends_is_no_stamp(
    store: MemoryStore, workspace: Path, hook: Hook, when: object
) -> None:
    """Python's json reads NaN and Infinity; such a `timestamp` must not cost the memory."""
    store.add_entry("MEMORY.md", MEMORY)
    start = {**filled(CLAUDE_SESSION_START, cwd=str(workspace), session="t"), "timestamp": when}
    done = hook("--host", "claude", payload=start)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert MEMORY.strip() in done.stdout
    prompt = {**filled(CLAUDE_PROMPT, cwd=str(workspace), session="t"), "timestamp": when}
    again = hook("--host", "claude", payload=prompt)
    assert again.returncode == 0 and again.stdout == "" and again.stderr == ""


def test_claude_code_started_inside_copilot_cli_stays_claude_code(
    store: MemoryStore, workspace: Path, hook: Hook
) -> None:
    """A shell that Copilot CLI started carries COPILOT_CLI=1 into whatever runs there;
    Claude Code's input (with its transcript_path) still gets Claude Code's answer."""
    store.add_entry("MEMORY.md", MEMORY)
    start = filled(CLAUDE_SESSION_START, cwd=str(workspace), session="inside")
    done = hook("--host", "claude", payload=start, env={"COPILOT_CLI": "1"})
    answer = json.loads(done.stdout)
    assert MEMORY.strip() in answer["hookSpecificOutput"]["additionalContext"]
