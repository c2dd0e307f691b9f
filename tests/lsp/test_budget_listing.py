"""Over real stdio: an agent's file shows in its lens, and in the Agent Context payload, the
budgets that matter to it (`budgets.evaluate.listed`); the hover still has every one."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types

from support.lsp_session import MetisClient, hover, lenses
from support.lsp_values import file_uri


def rules(count: int) -> str:
    """`count` different lines of 90 characters (no repeats: no duplicate findings)."""
    return "".join(f"- {i:04d} {'x' * 82}\n" for i in range(count))


CLAUDE = rules(150)  # 13,500 B, 150 lines


async def test_the_lens_leaves_out_a_budget_the_file_is_far_from(
    client: MetisClient, workspace: Path
) -> None:
    claude = workspace / "CLAUDE.md"
    claude.write_text(CLAUDE)
    await client.start_session([workspace])
    client.open(claude)
    await client.wait_until(lambda: file_uri(claude) in client.diagnostics, "CLAUDE.md analysed")
    titles = [lens.command.title for lens in await lenses(client, claude) if lens.command]
    assert titles == ["Claude Code: 150 lines of 200 lines (75%) · ok"]
    shown = await hover(client, claude, 0, 2)
    assert shown is not None and isinstance(shown.contents, types.MarkupContent)
    assert "4,194,304 B" in shown.contents.value  # the hover keeps every budget
    # Typed past the 40,000-character warning: that budget is listed again, with its cut.
    client.replace_all(claude, rules(450))
    await client.wait_until(
        lambda: client.codes(claude).count("over-budget") == 2, "both budgets over on CLAUDE.md"
    )
    titles = [lens.command.title for lens in await lenses(client, claude) if lens.command]
    assert titles == [
        "Claude Code: 40,500 characters of 40,000 characters (101%) · over: warned",
        "Claude Code: 450 lines of 200 lines (225%) · over: warned",
    ]


async def test_the_agent_context_has_one_row_for_a_file_far_from_all_but_one(
    client: MetisClient, workspace: Path
) -> None:
    (workspace / "CLAUDE.md").write_text(CLAUDE)
    await client.start_session([workspace])
    (agent,) = await client.command("metis.agentContext", {})
    (row,) = agent["files"]
    assert (row["shown"], row["budget"], row["level"]) == ("CLAUDE.md", "claude-md-lines", "green")
    assert row["also"][-1] == "CLAUDE.md size limit: 13,500 B of 4,194,304 B (0%)"
