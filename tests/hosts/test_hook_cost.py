"""What a hook process loads (issue 42, item 4): every hook path stays within a few Python
starts (`make bench` times it), because it imports only what its answer needs. A session
start and a prompt after a write read the store, redact and record the session, without
`dataclasses` (and the `inspect`, `ast`, `dis` and `tokenize` it pulls in), `typing`,
`pathlib` (with `urllib.parse` and `ipaddress`), the CLI's parser or OpenSSL's hashlib:
those alone cost more than the rest of the hook. A timing
would not hold on a shared machine; which modules a run loaded does."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from metis_memory import MemoryStore
from support.host_inputs import (
    CLAUDE_PROMPT,
    CLAUDE_SESSION_START,
    CLI_AGENT_START,
    CLI_PROMPT_SUBMIT,
    filled,
)

HEAVY = (
    "dataclasses",
    "inspect",
    "ast",
    "typing",
    "argparse",
    "_hashlib",
    "pathlib",
    "metis_memory.cli",
    "metis_memory.store.usage",
)
"""What no hook path loads when the memory names no path (the bench's memory, and most)."""

MEMORY = "- the payments service retries webhooks 5 times\n"
KEY = "ghp_" + "k7Qz3Lp9Xw2Rt6Yb8Nc4Vd1Fs5Gh0Jm3Ka7B"
"""A GitHub token's shape, in pieces (no leak to secret scanners)."""


def run_hook(
    workspace: Path, cache: Path, template: dict[str, object], host: str = "claude"
) -> tuple[str, set[str]]:
    """`metis-memory hook --host HOST` in a fresh interpreter, as the console script
    starts it: its stdout and the modules loaded when it had answered."""
    probe = (
        "import sys\n"
        "from metis_memory.entry import main\n"
        f"sys.argv = ['metis-memory', 'hook', '--host', {host!r}]\n"
        "code = main()\n"
        "sys.stderr.write('\\nMODULES ' + ' '.join(sorted(sys.modules)))\n"
        "sys.exit(code)\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.endswith("_PROJECT_DIR")}
    env["METIS_MEMORY_CACHE_DIR"] = str(cache)
    data = json.dumps(filled(template, cwd=str(workspace), session="cost-1")).encode()
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
    head, modules = err.rsplit("MODULES ", 1)
    assert "metis-memory hook:" not in head, head  # no warning either
    return done.stdout.decode(), set(modules.split())


@pytest.mark.parametrize("secret", [False, True], ids=["plain", "with a secret to redact"])
def test_a_session_start_and_a_changed_prompt_load_only_what_they_need(
    store: MemoryStore, workspace: Path, tmp_path: Path, secret: bool
) -> None:
    store.add_entry("MEMORY.md", MEMORY)
    if secret:  # (written as a person would: the write tools refuse a new secret)
        path = workspace / ".metis" / "MEMORY.md"
        path.write_text(path.read_text() + f"- deploy token {KEY}\n")
    cache = tmp_path / "cache"
    out, modules = run_hook(workspace, cache, CLAUDE_SESSION_START)
    assert MEMORY.strip() in out
    assert KEY not in out
    assert ("[redacted: " in out) == secret
    assert not modules & set(HEAVY), f"a session start loaded {sorted(modules & set(HEAVY))}"

    store.add_entry("MEMORY.md", "- CI runs on Fridays only")
    out, modules = run_hook(workspace, cache, CLAUDE_PROMPT)
    assert "Fridays" in out and "changed since you last saw it" in out
    assert KEY not in out
    assert not modules & set(HEAVY), f"a changed prompt loaded {sorted(modules & set(HEAVY))}"

    out, modules = run_hook(workspace, cache, CLAUDE_PROMPT)
    assert out == ""
    assert not modules & {*HEAVY, "metis_memory.store.memory_store"}


def test_a_user_memory_costs_no_import_on_any_path(
    store: MemoryStore, workspace: Path, tmp_path: Path
) -> None:
    """Issue 43: with the user memory present, a session start and a prompt after a write
    to it read it through the store; an unchanged prompt reads it in the quick look."""
    store.add_entry("MEMORY.md", MEMORY)
    everywhere = MemoryStore.for_user()
    everywhere.add_entry("USER.md", "- answers in British English")
    cache = tmp_path / "cache"
    out, modules = run_hook(workspace, cache, CLAUDE_SESSION_START)
    assert "British English" in out and MEMORY.strip() in out
    assert not modules & set(HEAVY), f"a session start loaded {sorted(modules & set(HEAVY))}"

    everywhere.add_entry("USER.md", "- works in UTC")
    out, modules = run_hook(workspace, cache, CLAUDE_PROMPT)
    assert "works in UTC" in out and "changed since you last saw it" in out
    assert not modules & set(HEAVY), f"a changed prompt loaded {sorted(modules & set(HEAVY))}"

    out, modules = run_hook(workspace, cache, CLAUDE_PROMPT)
    assert out == ""
    loaded = modules & {*HEAVY, "metis_memory.store.memory_store"}
    assert not loaded, f"an unchanged prompt loaded {sorted(loaded)}"


def test_the_cline_clis_detached_hooks_are_answered_without_the_store(
    store: MemoryStore, workspace: Path, tmp_path: Path
) -> None:
    """The Cline CLI runs the VS Code extension's hook files before every prompt, detached
    and with their output ignored (test_hook_cline_cli.py): nothing is ever sent for its
    events, so the answer is given without reading the memory."""
    store.add_entry("MEMORY.md", MEMORY)
    for template in (CLI_AGENT_START, CLI_PROMPT_SUBMIT):
        out, modules = run_hook(workspace, tmp_path / "cache", template, host="cline")
        assert out.strip() == '{"cancel":false}'
        loaded = modules & {*HEAVY, "metis_memory.store.memory_store"}
        assert not loaded, f"{template['hookName']} loaded {sorted(loaded)}"
