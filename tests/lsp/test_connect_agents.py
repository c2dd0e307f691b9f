"""`metis.agentHosts` / `metis.connectAgents` over real stdio: the editor's way to run
`metis-memory init`, with the same files and the same refusals."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from metis_memory.hosts.configs import INSTRUCTIONS_PATH, SETUPS
from support.lsp_session import MetisClient

INVALID_PARAMS, REQUEST_FAILED = -32602, -32803


async def test_agent_hosts_lists_every_host_with_its_files(
    client: MetisClient, workspace: Path
) -> None:
    await client.start_session([workspace])
    hosts = await client.command("metis.agentHosts", {})
    assert [h["name"] for h in hosts] == list(SETUPS)
    copilot = next(h for h in hosts if h["name"] == "copilot")
    assert copilot["title"] == "GitHub Copilot in VS Code"
    assert INSTRUCTIONS_PATH in copilot["files"]
    assert ".github/hooks/metis-memory.json" in copilot["files"]
    # The hosts of issue 42, with the files that bring them the memory every turn.
    offered = {h["name"]: (h["title"], h["files"]) for h in hosts}
    assert offered["opencode"] == (
        "opencode",
        [".opencode/plugins/metis-memory.js", "opencode.json"],
    )
    assert offered["qwen"] == ("Qwen Code", [".qwen/settings.json"])
    assert offered["cline"][0] == "Cline"
    assert ".cline/plugins/metis-memory.js" in offered["cline"][1]


async def test_an_editor_that_registers_the_mcp_server_is_offered_what_it_will_write(
    client: MetisClient, workspace: Path
) -> None:
    """The picker lists the files Connect Agents writes: with `editorProvidesMcp`, as VS Code
    sends both, not `.vscode/mcp.json`."""
    await client.start_session([workspace])
    for editor, expected in ((False, True), (True, False)):
        argument = {"editorProvidesMcp": editor}
        hosts = {h["name"]: h["files"] for h in await client.command("metis.agentHosts", argument)}
        assert (".vscode/mcp.json" in hosts["copilot"]) is expected
        result = await client.command(
            "metis.connectAgents", {"hosts": ["copilot"], "dryRun": True, **argument}
        )
        assert [f["path"] for f in result["files"]] == hosts["copilot"]


async def test_connect_writes_the_chosen_hosts_files(client: MetisClient, workspace: Path) -> None:
    await client.start_session([workspace])
    result = await client.command(
        "metis.connectAgents", {"hosts": ["copilot", "claude"], "editorProvidesMcp": True}
    )
    assert {f["path"]: f["change"] for f in result["files"]} == {
        ".github/hooks/metis-memory.json": "created",
        INSTRUCTIONS_PATH: "created",
        ".claude/settings.json": "created",
        ".mcp.json": "created",
    }
    assert not (workspace / ".vscode").exists()  # the editor registers its MCP server itself
    assert "applyTo: '**'" in (workspace / INSTRUCTIONS_PATH).read_text()
    settings = json.loads((workspace / ".claude/settings.json").read_text())
    command = settings["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    assert command == f"{result['command']} hook --host claude"
    hooks = json.loads((workspace / ".github/hooks/metis-memory.json").read_text())
    command = hooks["hooks"]["userPromptSubmitted"][0]["bash"]
    assert command == f"{result['command']} hook --host copilot"
    assert [t["host"] for t in result["todo"]] == ["GitHub Copilot in VS Code", "Claude Code"]
    again = await client.command("metis.connectAgents", {"hosts": ["copilot", "claude"]})
    assert {f["change"] for f in again["files"] if f["path"] != ".vscode/mcp.json"} == {"unchanged"}


async def test_dry_run_writes_nothing(client: MetisClient, workspace: Path) -> None:
    await client.start_session([workspace])
    result = await client.command("metis.connectAgents", {"hosts": ["cursor"], "dryRun": True})
    assert [f["change"] for f in result["files"]] == ["created", "created"]
    assert "would create" in result["report"]
    assert list(workspace.iterdir()) == []


async def test_a_file_that_cannot_be_merged_is_a_conflict_naming_line_and_column(
    client: MetisClient, workspace: Path
) -> None:
    (workspace / ".cursor").mkdir()
    (workspace / ".cursor/hooks.json").write_text('{\n  "version": 1,\n  "hooks": {,}\n}\n')
    await client.start_session([workspace])
    error = await client.command_error("metis.connectAgents", {"hosts": ["cursor", "copilot"]})
    assert error.code == REQUEST_FAILED
    assert error.data == {"code": "conflict", "is_user_visible": True}
    assert ".cursor/hooks.json is not valid JSON at line 3, column 13" in error.message
    assert not (workspace / ".cursor/mcp.json").exists() and not (workspace / ".github").exists()


@pytest.mark.parametrize(
    ("argument", "problem"),
    [
        ({}, "'hosts' is required"),
        ({"hosts": []}, "'hosts' must be a non-empty list"),
        ({"hosts": "claude"}, "'hosts' must be a list, got str"),
        ({"hosts": ["emacs"]}, "unknown host 'emacs'"),
        ({"hosts": ["claude"], "dryRun": "yes"}, "must be true or false"),
        ({"hosts": ["claude"], "force": True}, "'force' is not an accepted field"),
    ],
)
async def test_bad_input_is_invalid_params(
    client: MetisClient, workspace: Path, argument: dict[str, object], problem: str
) -> None:
    await client.start_session([workspace])
    error = await client.command_error("metis.connectAgents", argument)
    assert error.code == INVALID_PARAMS and problem in error.message
    assert list(workspace.iterdir()) == []


async def test_the_preview_is_what_is_written(client: MetisClient, workspace: Path) -> None:
    """The editor shows the dry run's texts, then writes with its `plan`: exactly those."""
    (workspace / ".claude").mkdir()
    (workspace / ".claude/settings.json").write_text('{\n  "model": "opus"\n}\n')
    await client.start_session([workspace])
    preview = await client.command("metis.connectAgents", {"hosts": ["claude"], "dryRun": True})
    files = {f["path"]: f for f in preview["files"]}
    assert files[".claude/settings.json"]["before"] == '{\n  "model": "opus"\n}\n'
    assert files[".mcp.json"]["before"] is None
    assert re.fullmatch(r"[0-9a-f]{64}", preview["plan"])
    written = await client.command(
        "metis.connectAgents", {"hosts": ["claude"], "expectedPlan": preview["plan"]}
    )
    assert written["plan"] == preview["plan"] and "before" not in written["files"][0]
    for path, file in files.items():
        assert (workspace / path).read_text() == file["after"]


async def test_a_file_changed_since_the_preview_is_a_conflict_and_nothing_is_written(
    client: MetisClient, workspace: Path
) -> None:
    await client.start_session([workspace])
    preview = await client.command(
        "metis.connectAgents", {"hosts": ["claude", "cursor"], "dryRun": True}
    )
    (workspace / ".mcp.json").write_text('{"mcpServers": {"other": {"command": "x"}}}\n')
    error = await client.command_error(
        "metis.connectAgents", {"hosts": ["claude", "cursor"], "expectedPlan": preview["plan"]}
    )
    assert error.code == REQUEST_FAILED
    assert error.data == {"code": "conflict", "is_user_visible": True}
    assert error.message == (
        "The agent files changed since their changes were shown (one was edited, created or "
        "removed): nothing was written. Run Connect Agents… again to see the changes as they "
        "are now."
    )
    assert sorted(p.name for p in workspace.iterdir()) == [".mcp.json"]
    # Other hosts than those shown: another plan, refused too.
    again = await client.command(
        "metis.connectAgents", {"hosts": ["claude", "cursor"], "dryRun": True}
    )
    error = await client.command_error(
        "metis.connectAgents", {"hosts": ["claude"], "expectedPlan": again["plan"]}
    )
    assert error.data == {"code": "conflict", "is_user_visible": True}
    assert sorted(p.name for p in workspace.iterdir()) == [".mcp.json"]


async def test_expected_plan_must_be_a_sha256(client: MetisClient, workspace: Path) -> None:
    await client.start_session([workspace])
    error = await client.command_error(
        "metis.connectAgents", {"hosts": ["claude"], "expectedPlan": "abc"}
    )
    assert error.code == INVALID_PARAMS and "expectedPlan" in error.message
    assert list(workspace.iterdir()) == []


async def test_a_host_reading_one_of_several_files_is_offered_the_one_here(
    client: MetisClient, workspace: Path
) -> None:
    """opencode reads `opencode.jsonc` as well as `opencode.json`: init writes into the one
    that is there, and the picker names that one (by name: nothing is read for the list)."""
    (workspace / "opencode.jsonc").write_text('{\n  "model": "anthropic/claude-sonnet-4-5"\n}\n')
    await client.start_session([workspace])
    hosts = {h["name"]: h for h in await client.command("metis.agentHosts", {})}
    assert hosts["opencode"]["files"] == [".opencode/plugins/metis-memory.js", "opencode.jsonc"]
    assert hosts["opencode"]["detected"] == ["opencode.jsonc in this folder"]
    preview = await client.command("metis.connectAgents", {"hosts": ["opencode"], "dryRun": True})
    assert [f["path"] for f in preview["files"]] == hosts["opencode"]["files"]
    (workspace / "opencode.jsonc").unlink()
    hosts = {h["name"]: h for h in await client.command("metis.agentHosts", {})}
    assert hosts["opencode"]["files"] == [".opencode/plugins/metis-memory.js", "opencode.json"]
