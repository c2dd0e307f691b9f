"""`metis.hostPrompts` over real stdio: for every agent host, what its model receives of
the memory through the hook (tests/hosts/test_received.py holds the text equal to the real
hook's), its size, when it is sent and the host's limit; a memory file that cannot be read
is an error that says so, as the hook would report it."""

from __future__ import annotations

from pathlib import Path

from support.lsp_session import MetisClient
from support.memory_files import write_memory

HOSTS = [
    "claude",
    "codex",
    "gemini",
    "cursor",
    "cline",
    "copilot",
    "copilot-cli",
    "opencode",
    "cline-plugin",
    "qwen",
]


async def test_every_host_with_what_it_receives_and_its_size(
    client: MetisClient, workspace: Path
) -> None:
    write_memory(workspace, "MEMORY.md", "# Workspace memory\n\n- Build with `make` 😀\n")
    write_memory(workspace, "USER.md", "- Prefers short answers\n")
    await client.start_session([workspace])
    answer = await client.command("metis.hostPrompts", {})
    assert [a["host"] for a in answer] == HOSTS
    by_host = {a["host"]: a for a in answer}
    claude = by_host["claude"]
    assert claude["title"] == "Claude Code"
    assert claude["text"].startswith("<metis-memory>\nThis is the persistent memory")
    assert (
        "- Build with `make` 😀" in claude["text"] and "- Prefers short answers" in claude["text"]
    )
    assert claude["bytes"] == len(claude["text"].encode("utf-8"))
    assert claude["characters"] == len(claude["text"])
    assert claude["limit"]["characters"] == 10_000
    assert claude["summary"].startswith(f"Claude Code receives {claude['bytes']:,} B (")
    # Gemini escapes < and >: its memory is marked off with brackets instead.
    assert by_host["gemini"]["text"].startswith("[metis-memory]\n")
    assert by_host["cursor"]["limit"] is None
    # The plugins put it in the system prompt of every call (opencode) or prompt (Cline CLI).
    opencode = by_host["opencode"]
    assert opencode["text"] == claude["text"]
    assert "every model call" in opencode["summary"]
    assert by_host["cline-plugin"]["title"] == "Cline CLI"
    assert "every prompt" in by_host["cline-plugin"]["summary"]
    # Nothing in memory: nothing is sent, and the answer says so.
    write_memory(workspace, "MEMORY.md", "")
    write_memory(workspace, "USER.md", "")
    empty = await client.command("metis.hostPrompts", {})
    assert [(a["text"], a["bytes"]) for a in empty] == [("", 0)] * len(HOSTS)


async def test_an_unreadable_memory_file_is_an_error_that_says_so(
    client: MetisClient, workspace: Path
) -> None:
    (workspace / ".metis" / "MEMORY.md").mkdir(parents=True)
    await client.start_session([workspace])
    error = await client.command_error("metis.hostPrompts", {})
    assert "MEMORY.md" in error.message
    unknown = await client.command_error("metis.hostPrompts", {"workspace": "/nowhere/at/all"})
    assert "/nowhere/at/all" in unknown.message
