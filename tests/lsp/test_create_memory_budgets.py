"""Create Workspace Memory where `.metis/budgets.toml` gives the memory file a budget the
template is already over: the file is still written (the user asked for it, and the memory's
own caps hold), and the message says so with the numbers, as `check` would fail on it."""

from __future__ import annotations

from pathlib import Path

from metis_memory.store.template import template
from support.lsp_session import MetisClient

TINY = """\
[[budget]]
name = "tiny"
files = [".metis/MEMORY.md"]
unit = "bytes"
limit = 100
past = "refused"
consumer = "our agent"
"""


async def test_a_template_over_a_budget_of_the_workspace_is_said(
    client: MetisClient, workspace: Path
) -> None:
    (workspace / ".metis").mkdir()
    (workspace / ".metis" / "budgets.toml").write_text(TINY)
    await client.start_session([workspace])
    result = await client.command("metis.createMemory", {})
    size = len(template("MEMORY.md").encode())
    assert result["created"] == ["MEMORY.md", "USER.md"]
    assert result["message"] == (
        f"Created .metis/MEMORY.md and .metis/USER.md in {workspace.name} from the template: "
        "replace its example entries with your first facts. Note: .metis/MEMORY.md is "
        f"already over the budget “tiny” of .metis/budgets.toml ({size} B of 100 B "
        f"({100 * size / 100:.0f}%); our agent: text is lost): keep it under that, or "
        "raise the budget."
    )
