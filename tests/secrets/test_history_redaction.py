"""The write log shown with a secret in it: wherever Metis shows the log (the terminal's
`log`, `blame`, `archive` and `review`, with and without --json; the editor's history, diff
title and hover), a suspected secret is redacted, whoever put it there: an MCP client that
names itself with a token (its `clientInfo` is whatever the client sends), an agent host's
shell whose session variable holds one, or a person who typed one into the file by hand and
removed it again. And no undo or restore writes it back.

Driven by the real console script and the SDK's real MCP client over stdio."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import mcp
from mcp_types import Implementation

from metis_memory import MemoryStore
from metis_memory.hosts.actor import MARKERS
from metis_memory.lsp.features.history import diff_title
from support.mcp_stdio import mcp_server

TOKEN = "ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5"
SCRIPT = Path(sys.executable).parent / "metis-memory"


def cli(workspace: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    """`metis-memory ARGS` in the workspace from a user's terminal (no agent marker unless
    `env` adds one): its exit code and all it printed, stdout and stderr."""
    base = {k: v for k, v in os.environ.items() if k not in MARKERS and k != "AI_AGENT"}
    done = subprocess.run(
        [str(SCRIPT), *args],
        cwd=workspace,
        env={**base, "HOME": str(workspace.parent), **(env or {})},
        capture_output=True,
        encoding="utf-8",
        timeout=60,
        check=False,
    )
    return done.returncode, done.stdout + done.stderr


def everything_shown(workspace: Path) -> str:
    """What every command that shows the log prints, text and JSON."""
    shown = []
    for args in (
        ("log",),
        ("log", "--json"),
        ("blame", "MEMORY.md"),
        ("blame", "MEMORY.md", "--json"),
        ("archive",),
        ("archive", "--json"),
        ("review",),
        ("review", "--json"),
    ):
        code, out = cli(workspace, *args)
        assert code == 0, (args, out)
        shown.append(out)
    return "\n".join(shown)


async def test_an_mcp_client_naming_itself_with_a_token_is_shown_redacted(
    workspace: Path,
) -> None:
    info = Implementation(name=f"agent {TOKEN}", version=TOKEN)
    async with mcp.Client(mcp_server(str(workspace)), client_info=info) as c:
        for name, arguments in (
            ("memory_add", {"file": "MEMORY.md", "entry": "- Build with make"}),
            ("memory_add", {"file": "MEMORY.md", "entry": "- Old note"}),
            ("memory_consolidate", {"file": "MEMORY.md", "content": "- Build with make\n"}),
        ):
            r = await c.call_tool(name, arguments)
            assert not r.is_error, r
        MemoryStore(workspace).set_review(True)
        r = await c.call_tool("memory_add", {"file": "MEMORY.md", "entry": "- Waits"})
        assert not r.is_error, r
    store = MemoryStore(workspace)
    assert store.history()[0].actor == f"agent {TOKEN} {TOKEN}"  # as the client said
    shown = everything_shown(workspace)
    assert TOKEN not in shown
    assert "[redacted: GitHub token]" in shown
    # The editor's diff title, and the review's answers to the person.
    assert TOKEN not in diff_title(store.history()[0])
    (waiting,) = store.staged()
    code, out = cli(workspace, "review", "reject", str(waiting.id))
    assert code == 0, out
    assert out == (
        f"Rejected change #{waiting.id} from agent [redacted: GitHub token] "
        "[redacted: GitHub token]: MEMORY.md was not touched.\n"
    )


def test_a_token_in_an_agent_hosts_session_variable_is_shown_redacted(workspace: Path) -> None:
    claude = {
        "CLAUDECODE": "1",
        "CLAUDE_CODE_SESSION_ID": TOKEN,
        "AI_AGENT": "claude-code_2-1-330_agent",
    }
    code, out = cli(workspace, "add", "MEMORY.md", "- Use pnpm", env=claude)
    assert code == 0, out
    shown = everything_shown(workspace)
    assert TOKEN not in shown
    (record,) = json.loads(cli(workspace, "log", "--json")[1])["records"]
    assert record["session"] == "[redacted: GitHub token]"


def test_a_secret_typed_and_removed_by_hand_is_never_shown_nor_written_back(
    workspace: Path,
) -> None:
    code, out = cli(workspace, "add", "MEMORY.md", "- Build with make")
    assert code == 0, out
    memory = workspace / ".metis" / "MEMORY.md"
    memory.write_text(f"- Build with make\n- CI token {TOKEN}\n")
    assert cli(workspace, "log")[0] == 0  # the outside edit is recorded (#2)
    memory.write_text("- Build with make\n")
    assert cli(workspace, "log")[0] == 0  # and its removal (#3)
    assert TOKEN not in everything_shown(workspace)
    after = memory.read_bytes()
    for args, what in (
        (("undo", "3"), "file as the undo would leave it"),
        (("restore", "MEMORY.md", "--to", "2"), "version to restore"),
    ):
        code, out = cli(workspace, *args)
        assert code == 1, out
        assert TOKEN not in out
        assert out == (
            f"metis-memory: Not written: the {what} holds what looks like a GitHub "
            "token (line 2, column 12). Memory is sent to the model provider with every "
            "prompt and is committed with the repository, so nothing was written. Keep the "
            "credential in a secret manager or an environment variable and remember where it "
            'lives instead, e.g. "`$GITHUB_TOKEN`, in 1Password under Deploy".\n'
        )
        assert memory.read_bytes() == after
