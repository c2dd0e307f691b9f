"""The quick-fix menu on a line, over real stdio: each title says what it does and which
entry, and one entry is never offered two removals, however many findings it has."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types

from support.lsp_session import CLIENT_COMMANDS, MetisClient, apply_workspace_edit
from support.memory_files import write_memory

TOKEN = "ghp_" + "a1B2c3D4" * 4 + "e5F6"  # in pieces: no secret scanner flags this file
MEMORY = (
    "# Memory\n"  # 0
    "- Deploy with `scripts/deploy.sh` and `ops/rollback.sh`.\n"  # 1: two stale paths
    "- Build with make\n"  # 2
    "- build with  MAKE\n"  # 3: a repeat of line 3 (1-based)
)


def removals(actions: list[types.CodeAction]) -> list[types.CodeAction]:
    return [a for a in actions if a.title.startswith("Remove")]


async def test_an_entry_with_two_stale_paths_is_offered_one_removal(
    client: MetisClient, workspace: Path
) -> None:
    memory = write_memory(workspace, "MEMORY.md", MEMORY)
    await client.start_session([workspace], options=CLIENT_COMMANDS)
    uri = client.open(memory)
    await client.wait_for_codes(memory, ["stale-reference", "stale-reference", "duplicate-entry"])
    actions = await client.actions(memory, (1, 0), (1, 60))  # the whole line: both findings
    titles = [a.title for a in actions]
    (remove,) = removals(actions)
    assert remove.title == (
        "Remove stale entry “Deploy with `scripts/deploy.sh` and…” "
        "(`scripts/deploy.sh` does not exist)"
    )
    # It fixes both findings, and the Problems panel's quick fix for either offers it.
    assert remove.diagnostics is not None
    assert [d.code for d in remove.diagnostics] == ["stale-reference", "stale-reference"]
    assert titles.count("Consolidate MEMORY.md with this entry selected…") == 1
    assert "Move entry “Deploy with `scripts/deploy.sh` and…” to USER.md" in titles
    fixed = apply_workspace_edit(remove.edit or types.WorkspaceEdit(), lambda _u: MEMORY, "utf-16")
    assert fixed[uri] == MEMORY.replace(MEMORY.splitlines(keepends=True)[1], "")

    on_repeat = await client.actions(memory, (3, 2))
    (remove,) = removals(on_repeat)
    assert remove.title == "Remove duplicate entry “build with MAKE” (it repeats line 3)"
    assert remove.is_preferred


async def test_a_repeat_whose_path_went_stale_is_removed_once(
    client: MetisClient, workspace: Path
) -> None:
    text = "- see `docs/gone.md`\n- See `docs/gone.md`\n"
    memory = write_memory(workspace, "MEMORY.md", text)
    await client.start_session([workspace], options=CLIENT_COMMANDS)
    client.open(memory)
    await client.wait_for_codes(memory, ["stale-reference", "duplicate-entry", "stale-reference"])
    (remove,) = removals(await client.actions(memory, (1, 0), (1, 19)))
    assert remove.title == "Remove duplicate entry “See `docs/gone.md`” (it repeats line 1)"
    assert remove.diagnostics is not None
    assert sorted(str(d.code) for d in remove.diagnostics) == ["duplicate-entry", "stale-reference"]


async def test_no_title_shows_a_secret(client: MetisClient, workspace: Path) -> None:
    memory = write_memory(workspace, "MEMORY.md", f"- deploy key {TOKEN} for CI\n")
    await client.start_session([workspace], options=CLIENT_COMMANDS)
    client.open(memory)
    await client.wait_for_codes(memory, ["secret"])
    actions = await client.actions(memory, (0, 20))
    titles = [a.title for a in actions]
    assert "Redact the GitHub token on line 1" in titles
    assert "Remove entry “deploy key [secret] for CI”" in titles
    assert "Replace entry “deploy key [secret] for CI”…" in titles
    for action in actions:
        assert TOKEN[4:12] not in action.title
        if action.command is not None:
            assert TOKEN[4:12] not in action.command.title


async def test_another_agents_file_gets_the_same_titles_and_one_removal(
    client: MetisClient, workspace: Path
) -> None:
    claude = workspace / "CLAUDE.md"
    text = f"# Rules\n- see `docs/gone.md`\n- See `docs/gone.md`\n- token {TOKEN}\n"
    claude.write_text(text, encoding="utf-8")
    await client.start_session([workspace])
    client.open(claude)
    await client.wait_until(
        lambda: (
            sorted(client.codes(claude)).count("stale-reference") == 2
            and {"duplicate-entry", "secret"} <= set(client.codes(claude))
        ),
        f"the repeat, its stale paths and the secret on {claude}",
    )
    (remove,) = removals(await client.actions(claude, (2, 0), (2, 19)))
    assert remove.title == "Remove duplicate entry “See `docs/gone.md`” (it repeats line 2)"
    assert remove.diagnostics is not None
    assert sorted(str(d.code) for d in remove.diagnostics) == ["duplicate-entry", "stale-reference"]
    titles = [a.title for a in await client.actions(claude, (3, 12))]
    assert "Redact the GitHub token on line 4" in titles
