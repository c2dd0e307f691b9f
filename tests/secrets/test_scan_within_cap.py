"""The secret scan costs what is written or shown, not what was sent or is on disk (issue 39,
item 6): a write over the hard cap is refused by the cap check before any scan (an MCP
`memory_add` of a 1 MiB entry took 16 s to be refused), and a reader that shows a file
only up to its hard cap (the hooks, the MCP `memory` prompt) cuts it before redacting (a
1 MiB one-line MEMORY.md took the hook 15.6 s, past Claude's 10 s timeout).

Work is counted (`secrets.WORK`: the characters the scanner examines), not timed. The
tokens are put together here, never written out, so that secret scanners do not flag this
file; none is real."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import mcp
import pytest
from anthropic.lib.tools import ToolError
from anthropic.types.beta import (
    BetaMemoryTool20250818CreateCommand,
    BetaMemoryTool20250818StrReplaceCommand,
)

from metis_memory import MemoryStore
from metis_memory.analysis import secrets
from metis_memory.analysis.secrets import find_secrets
from metis_memory.anthropic import MetisMemoryTool
from metis_memory.hosts.context import read_context
from metis_memory.store.errors import MemoryHardCapExceeded
from metis_memory.store.files import CAPS, MemoryFile
from metis_memory.tools import ToolExecutionError, memory_dispatcher
from metis_memory.tools.redaction import redact, redact_within
from support.hooks import Hook
from support.host_inputs import CLAUDE_SESSION_START, filled
from support.mcp_stdio import mcp_server
from support.mcp_values import text as text_of

HARD = CAPS[MemoryFile.MEMORY].hard
GITHUB = "ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5"
PAIR = "api_key=" + "Zx9Qw3Er7Ty1Ui5O "
"""A `key = value` pair the rules report (bench/run.py's one-line shape)."""


def key_block(lines: int) -> str:
    return (
        "-----BEGIN RSA "
        + "PRIVATE KEY-----\n"
        + "MIIEowIBAAKCAQEA7bq3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5hJ7kL9mN1pQ\n" * lines
        + "-----END RSA "
        + "PRIVATE KEY-----\n"
    )


def one_line(unit: str, size: int = 2**20) -> str:
    return ("- " + unit * (size // len(unit) + 1))[:size]


def work(call: Any, *args: Any) -> tuple[Any, int]:
    """`call(*args)`'s outcome (its result, or the error it raised) and the scanner's work."""
    secrets._line_secrets.cache_clear()
    secrets._recent_long.clear()
    before = secrets.WORK.chars
    try:
        outcome = call(*args)
    except (ToolExecutionError, ToolError) as exc:
        outcome = exc
    return outcome, secrets.WORK.chars - before


def digest(path: Path) -> str | None:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else None


def memory(workspace: Path, text: str | None = None) -> Path:
    path = workspace / ".metis" / "MEMORY.md"
    if text is not None:
        path.parent.mkdir(exist_ok=True)
        path.write_text(text)
    return path


# ---- writes: the cap first -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("memory_add", {"file": "MEMORY.md", "entry": one_line(PAIR)}),
        ("memory_consolidate", {"file": "MEMORY.md", "content": one_line(PAIR)}),
        ("memory_replace", {"file": "MEMORY.md", "old": "- a", "new": one_line(PAIR)}),
    ],
    ids=["add", "consolidate", "replace"],
)
def test_a_write_over_the_hard_cap_is_refused_before_it_is_scanned(
    store: MemoryStore, workspace: Path, tool: str, arguments: dict[str, str]
) -> None:
    """1 MiB of key = value pairs (each a suspected secret): refused as too large, which
    it is whatever it holds, and the entry never scanned."""
    path = memory(workspace, "- a\n")
    error, spent = work(memory_dispatcher(store).dispatch, tool, arguments)
    assert isinstance(error, ToolExecutionError)
    assert error.code == "hard_cap_exceeded", error.message
    assert "Nothing was written" in error.message
    assert spent < 100 * HARD, f"{spent:,} characters examined for a refused 1 MiB write"
    assert path.read_text() == "- a\n"


def test_a_replace_that_would_pass_the_cap_is_refused_as_the_store_would(
    store: MemoryStore, workspace: Path
) -> None:
    text = "- " + "x" * (HARD - 10) + "\n- a\n"
    path = memory(workspace, text)
    new = f"- b, with {GITHUB}"
    error, _ = work(
        memory_dispatcher(store).dispatch,
        "memory_replace",
        {"file": "MEMORY.md", "old": "- a", "new": new},
    )
    assert isinstance(error, ToolExecutionError)
    assert error.code == "hard_cap_exceeded"
    size = len(text) - len("- a") + len(new)
    store_says = MemoryHardCapExceeded("MEMORY.md", "replace", len(text), size, 2048, HARD)
    assert error.message == str(store_says)
    assert path.read_text() == text


def test_an_old_text_that_overlaps_a_secret_is_not_found_even_past_the_cap(
    store: MemoryStore, workspace: Path
) -> None:
    """The cap is checked after `old` is looked for: a too-large answer would tell that
    `old` (a guess at a hand-typed token) was found, where "not found" tells nothing."""
    path = memory(workspace, f"- CI token: {GITHUB}\n")
    for old in (GITHUB[:10], "zzz"):
        error, _ = work(
            memory_dispatcher(store).dispatch,
            "memory_replace",
            {"file": "MEMORY.md", "old": old, "new": "y" * (HARD // 2) + " " + "y" * HARD},
        )
        assert isinstance(error, ToolExecutionError)
        assert error.code == "not_found", (old, error.code, error.message)
    assert path.read_text() == f"- CI token: {GITHUB}\n"


def test_the_anthropic_tool_checks_the_cap_first_too(workspace: Path) -> None:
    memory(workspace, "")
    tool = MetisMemoryTool(workspace)
    create = BetaMemoryTool20250818CreateCommand(
        command="create", path="/memories/MEMORY.md", file_text=one_line(PAIR)
    )
    error, spent = work(tool.create, create)
    assert isinstance(error, ToolError) and "hard cap" in str(error), error
    assert spent < 100 * HARD
    memory(workspace, "- a\n")
    replace = BetaMemoryTool20250818StrReplaceCommand(
        command="str_replace", path="/memories/MEMORY.md", old_str="- a", new_str=one_line(PAIR)
    )
    error, spent = work(tool.str_replace, replace)
    assert isinstance(error, ToolError) and "hard cap" in str(error), error
    assert spent < 100 * HARD


async def test_mcp_refuses_a_1_mib_entry_as_too_large(workspace: Path) -> None:
    path = memory(workspace, "- a\n")
    async with mcp.Client(mcp_server(str(workspace))) as client:
        result = await client.call_tool(
            "memory_add", {"file": "MEMORY.md", "entry": one_line(PAIR)}
        )
    message = text_of(result.content[0])
    assert result.is_error
    assert result.structured_content == {"code": "hard_cap_exceeded", "message": message}
    assert path.read_text() == "- a\n"


# ---- reads: the cut first --------------------------------------------------------------------


@pytest.mark.parametrize("unit", [PAIR, "lorem ipsum dolor sit amet "], ids=["pairs", "words"])
def test_the_hook_context_scans_only_what_it_shows(
    store: MemoryStore, workspace: Path, unit: str
) -> None:
    """A 1 MiB one-line MEMORY.md: the context holds its first 4 KiB, redacted, and the
    scanner examines fewer characters than the file has (a scan of it all examines each
    character several times)."""
    text = one_line(unit)
    memory(workspace, text)
    shown, spent = work(lambda: read_context(store, stale=False).memory)
    assert spent < len(text), f"{spent:,} characters examined to show {HARD:,} B of 1 MiB"
    assert f"over its {HARD:,} B hard cap" in shown
    assert f"more not shown: MEMORY.md is {len(text):,} B" in shown, shown[-300:]
    head = shown.split("\n[… ")[0]
    assert len(head.encode()) <= HARD + len("[redacted: password or key assignment]")
    if unit == PAIR:
        assert "Zx9Qw3Er" not in shown and "[redacted: " in head


def test_the_hook_sends_a_1_mib_one_line_memory_cut_and_redacted(
    hook: Hook, workspace: Path
) -> None:
    """The real hook, as Claude Code runs it, on the file that took it 15.6 s."""
    memory(workspace, one_line(PAIR))
    payload = filled(CLAUDE_SESSION_START, cwd=str(workspace), session="s-1")
    done = hook("--host", "claude", payload=payload)
    assert done.returncode == 0, done.stderr
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "[redacted: " in context and "Zx9Qw3Er" not in context
    assert f"over its {HARD:,} B hard cap" in context


def test_a_secret_across_the_cut_is_redacted_whole() -> None:
    """The token at every place around the cut: never shown in part, never half a marker."""
    marker = "[redacted: GitHub token]"
    for start in range(HARD - len(GITHUB) - 2, HARD + 2):
        text = "x" * (start - 1) + " " + GITHUB + " and more" * 600
        end = start + len(GITHUB)
        shown, left_out = redact_within(text, HARD)
        assert GITHUB[:6] not in shown and GITHUB[-6:] not in shown, start
        assert shown.startswith(text[: min(start, HARD)])
        if end <= HARD:  # whole before the cut: redacted, and the cut where it was
            assert shown == text[:start] + marker + text[end:HARD], start
            assert left_out == len(text) - HARD
        elif start + len(marker) <= HARD:  # across the cut: the cut moves to its end
            assert shown == text[:start] + marker, start
            assert left_out == len(text) - end
        elif start < HARD:  # across it, with no room for its marker: the cut moves before it
            assert shown == text[:start] and left_out == len(text) - start, start
        else:  # past the cut: not shown
            assert shown == text[:HARD] and left_out == len(text) - HARD, start


@pytest.mark.parametrize("lines", [20, 400], ids=["ends-within-the-margin", "ends-far-past"])
def test_a_key_block_across_the_cut_is_redacted_whole(lines: int) -> None:
    block = key_block(lines)
    text = "- a\n" * ((HARD - 100) // 4) + block + "- after\n" * 2000
    at = text.index(block)
    shown, left_out = redact_within(text, HARD)
    assert shown == text[:at] + "[redacted: private key]"
    after_block = len(text) - at - len(block.rstrip("\n"))
    assert after_block <= left_out < len(text) - at  # (all of it past the cut: not shown)


def test_the_cut_is_the_redaction_of_the_first_bytes() -> None:
    """Away from secrets at the cut, cutting first shows what redacting the whole and then
    cutting the file's bytes at the same place shows; a cut never splits a character."""
    body = f"- token {GITHUB} here\n" + "- ünïcödé entry, 3-byte €\n" * 400
    shown, left_out = redact_within(body, HARD)
    data = body.encode()
    cut = data[:HARD].decode("utf-8", errors="ignore")
    assert shown == redact(cut)
    assert left_out == len(data) - len(cut.encode())
    assert redact_within("- short\n", HARD) == ("- short\n", 0)
    assert find_secrets(shown) == []
