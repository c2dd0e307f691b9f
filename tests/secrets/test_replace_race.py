"""Two replaces that each pass the secret guard alone must not splice a token when they run at
once (issue 39, review of item 2). The guard judges the file it read before the store's lock;
the store applied the replace to whatever was on disk under the lock, so `PART1PART2` with
`PART1 -> ghp_<half>` and `PART2 -> <other half>` left a whole GitHub token on disk (18 of 20
runs of two CLI processes). Now a replace is a compare-and-swap on the hash the guard read:
a write that lands in between makes it read and judge again.

The race is made deterministic as in tests/anthropic_tool: an audit hook runs the real CLI's
replace at the instant the tool takes the lock, after its guard has read the file.

The token's halves are put together here, never written out whole; none is real."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from metis_memory import MemoryStore
from metis_memory.analysis.secrets import find_secrets
from metis_memory.anthropic import MetisMemoryTool
from metis_memory.store.atomic import AUDIT_EVENT
from metis_memory.tools import ToolExecutionError, memory_dispatcher
from support.store_faults import run_in_child

FIRST = "ghp_" + "R7xk2LmQ9vT4pW8sZ3"
SECOND = "nB6yH1cF5jD0aE2uK9"
START = "- deploy: PARTONEPARTTWO end\n"


def _memory(tmp_path: Path) -> Path:
    memory = tmp_path / ".metis" / "MEMORY.md"
    memory.parent.mkdir()
    memory.write_text(START)
    return memory


def _cli_replace_at_the_lock(tmp_path: Path) -> None:
    """In this process: at the first lock the store takes, the CLI replaces PARTTWO."""
    fired = threading.Event()

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event == AUDIT_EVENT and args[0] == "lock" and not fired.is_set():
            fired.set()
            done = subprocess.run(
                [sys.executable, "-m", "metis_memory", "replace", "MEMORY.md", "PARTTWO", SECOND],
                cwd=tmp_path,
                capture_output=True,
                timeout=60,
                check=False,
            )
            assert done.returncode == 0, done.stderr

    sys.addaudithook(hook)


def test_a_replace_overtaken_by_another_is_judged_again(tmp_path: Path) -> None:
    memory = _memory(tmp_path)

    def child() -> object:
        _cli_replace_at_the_lock(tmp_path)
        dispatcher = memory_dispatcher(MemoryStore(tmp_path))
        try:
            dispatcher.dispatch(
                "memory_replace", {"file": "MEMORY.md", "old": "PARTONE", "new": FIRST}
            )
        except ToolExecutionError as exc:
            return (exc.code, exc.message)
        return ("written", "")

    outcome = run_in_child(child)
    assert outcome.error_type is None, outcome
    code, message = outcome.value
    text = memory.read_text()
    assert find_secrets(text) == [], f"a token was spliced on disk: {text!r}"
    assert code == "secret_detected", (code, message)
    assert "GitHub" in message and "file after it" in message
    assert text == START.replace("PARTTWO", SECOND)  # the CLI's replace, and nothing else


def test_the_anthropic_tools_str_replace_is_judged_again_too(tmp_path: Path) -> None:
    memory = _memory(tmp_path)

    def child() -> object:
        _cli_replace_at_the_lock(tmp_path)
        tool = MetisMemoryTool(tmp_path)
        try:
            tool.call(
                {
                    "command": "str_replace",
                    "path": "/memories/MEMORY.md",
                    "old_str": "PARTONE",
                    "new_str": FIRST,
                }
            )
        except Exception as exc:  # the tool runner's ToolError
            return str(exc)
        return "written"

    outcome = run_in_child(child)
    assert outcome.error_type is None, outcome
    text = memory.read_text()
    assert find_secrets(text) == [], f"a token was spliced on disk: {text!r}"
    assert "GitHub" in str(outcome.value), outcome.value


def test_a_replace_overtaken_by_a_harmless_write_still_lands(tmp_path: Path) -> None:
    """The compare-and-swap re-reads and writes: an overtaken replace is not refused."""
    memory = _memory(tmp_path)

    def child() -> object:
        fired = threading.Event()

        def hook(event: str, args: tuple[Any, ...]) -> None:
            if event == AUDIT_EVENT and args[0] == "lock" and not fired.is_set():
                fired.set()
                subprocess.run(
                    [sys.executable, "-m", "metis_memory", "add", "MEMORY.md", "- by the CLI"],
                    cwd=tmp_path,
                    capture_output=True,
                    timeout=60,
                    check=True,
                )

        sys.addaudithook(hook)
        dispatcher = memory_dispatcher(MemoryStore(tmp_path))
        return dispatcher.dispatch(
            "memory_replace", {"file": "MEMORY.md", "old": "PARTONE", "new": "first"}
        ).text

    outcome = run_in_child(child)
    assert outcome.error_type is None, outcome
    assert memory.read_text() == "- deploy: firstPARTTWO end\n- by the CLI\n"
