"""Any root: a `.metis/MEMORY.md` the client opens gets the same feedback whatever the
workspace folders are (none, `.metis/` itself, an ancestor, an unrelated folder), and a
write through a command lands in that file's own `.metis/`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from support.lsp_session import CLIENT_COMMANDS, MetisClient, hover, lenses
from support.lsp_values import file_uri
from support.memory_files import write_memory

OVER_SOFT_CAP = "# Memory\n\n- build with make\n- BUILD with make\n" + "- filler ✓ line\n" * 130
CODES = ["duplicate-entry"] * 130 + ["over-soft-cap"]


@dataclass(frozen=True)
class Root:
    """How the client was started for a project at `tmp/mono/api`."""

    folders: tuple[str, ...]
    """Workspace folders, relative to `tmp`."""
    workspace: str
    """The `workspace` the server reports and accepts for the project, relative to `tmp`."""


ROOTS = {
    "project folder": Root(("mono/api",), "mono/api"),
    "no folder": Root((), "mono/api"),
    ".metis as the folder": Root(("mono/api/.metis",), "mono/api/.metis"),
    "ancestor folder": Root(("mono",), "mono/api"),
    "unrelated folder": Root(("elsewhere",), "mono/api"),
}


@pytest.fixture(params=list(ROOTS))
def root(request: pytest.FixtureRequest) -> Root:
    return ROOTS[request.param]


async def test_the_same_feedback_and_writes_from_any_root(
    client: MetisClient, tmp_path: Path, root: Root
) -> None:
    project = tmp_path / "mono" / "api"
    (tmp_path / "elsewhere").mkdir()
    memory = write_memory(project, "MEMORY.md", OVER_SOFT_CAP)
    user = write_memory(project, "USER.md", "- likes tea\n")
    workspace = file_uri(tmp_path / root.workspace)
    await client.start_session([tmp_path / f for f in root.folders], options=CLIENT_COMMANDS)
    client.open(memory)

    await client.wait_for_codes(memory, CODES)
    usage = await client.wait_for_note("metis/usageChanged", lambda p: p["workspace"] == workspace)
    assert usage["usage"]["MEMORY.md"]["size_bytes"] == len(OVER_SOFT_CAP.encode())
    result = await hover(client, memory, 0, 2)
    assert result is not None and "MEMORY.md" in str(result.contents)
    (lens,) = await lenses(client, memory)
    assert lens.command is not None and "over soft cap" in lens.command.title

    cap = client.diagnostic(memory, "over-soft-cap")
    actions = await client.actions(memory, (cap.range.start.line, cap.range.start.character))
    titles = [a.title for a in actions]
    assert "Tidy MEMORY.md" in titles and "Consolidate MEMORY.md…" in titles
    (consolidate,) = [a for a in actions if a.title == "Consolidate MEMORY.md…"]
    assert consolidate.command is not None
    assert list(consolidate.command.arguments or ()) == [
        {"file": "MEMORY.md", "workspace": workspace}
    ]

    # The closed USER.md of that workspace is watched while MEMORY.md is open.
    user.write_text("- likes tea\n- LIKES tea\n", encoding="utf-8")
    await client.wait_for_codes(user, ["duplicate-entry"])

    # Commands accept the workspace, and write into its own .metis/.
    written = await client.command(
        "metis.memoryAdd", {"file": "USER.md", "entry": "prefers tabs", "workspace": workspace}
    )
    assert written["operation"] == "add" and written["file"] == "USER.md"
    assert user.read_text(encoding="utf-8").endswith("prefers tabs\n")
    assert sorted(p.name for p in (tmp_path / "mono").iterdir()) == ["api"]
    tidy = await client.command("metis.tidy", {"file": "MEMORY.md", "workspace": workspace})
    assert tidy["changed"] is True


async def test_an_adopted_workspace_lasts_while_a_file_of_it_is_open(
    client: MetisClient, tmp_path: Path
) -> None:
    project = tmp_path / "proj"
    memory = write_memory(project, "MEMORY.md", "- fact\n")
    user = write_memory(project, "USER.md", "- likes tea\n- LIKES tea\n")
    await client.start_session([])
    workspace = file_uri(project)
    client.open(memory)
    await client.wait_for_codes(user, ["duplicate-entry"])  # the closed file, from disk
    # With one workspace, `workspace` may be left out.
    assert (await client.command("metis.usage", {}))["MEMORY.md"]["size_bytes"] == 7

    client.close(memory)
    # Nothing of it is open: its diagnostics are withdrawn and it is no longer known.
    await client.wait_for_codes(user, [])
    error = await client.command_error("metis.usage", {"workspace": workspace})
    assert "nor a document in one, nor the directory of an open memory file" in (error.message)
    # Opened again, it is adopted again, with what changed on disk meanwhile.
    user.write_text("- likes tea\n-\n", encoding="utf-8")
    client.open(memory)
    await client.wait_for_codes(user, ["empty-entry"])


async def test_two_projects_under_one_ancestor_keep_their_own_memory(
    client: MetisClient, tmp_path: Path
) -> None:
    mono = tmp_path / "mono"
    api = write_memory(mono / "api", "MEMORY.md", "- api fact\n")
    web = write_memory(mono / "web", "MEMORY.md", "- web fact\n- WEB fact\n")
    await client.start_session([mono])
    client.open(api)
    client.open(web)
    await client.wait_for_codes(web, ["duplicate-entry"])
    await client.wait_for_codes(api, [])
    # Three workspaces now (mono, api, web): `workspace` is required and tells them apart.
    missing = await client.command_error("metis.memoryAdd", {"file": "MEMORY.md", "entry": "x"})
    assert "3 workspaces are open, so 'workspace' is required" in missing.message
    for name in ("api", "web"):
        await client.command(
            "metis.memoryAdd",
            {"file": "USER.md", "entry": f"- {name} user fact", "workspace": file_uri(mono / name)},
        )
    assert (mono / "api/.metis/USER.md").read_text(encoding="utf-8") == "- api user fact\n"
    assert (mono / "web/.metis/USER.md").read_text(encoding="utf-8") == "- web user fact\n"
    assert not (mono / ".metis").exists()


async def test_a_removed_folder_leaves_its_open_files_served(
    client: MetisClient, tmp_path: Path
) -> None:
    """The client closes the folder while MEMORY.md stays open: the file keeps its feedback
    as a file of its own workspace."""
    from lsprotocol import types

    project = tmp_path / "proj"
    memory = write_memory(project, "MEMORY.md", "- fact\n- FACT\n")
    await client.start_session([project])
    client.open(memory)
    await client.wait_for_codes(memory, ["duplicate-entry"])
    client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(
            types.WorkspaceFoldersChangeEvent(
                added=[], removed=[types.WorkspaceFolder(file_uri(project), "proj")]
            )
        )
    )
    usage = await client.command("metis.usage", {"workspace": file_uri(project)})
    assert usage["MEMORY.md"]["size_bytes"] == 14
    await client.wait_for_codes(memory, ["duplicate-entry"])


async def test_a_percent_encoded_path_is_forgotten_when_closed(
    client: MetisClient, tmp_path: Path
) -> None:
    """`my proj` is `my%20proj` in the URI: closing the file must still drop its workspace."""
    project = tmp_path / "my proj"
    memory = write_memory(project, "MEMORY.md", "- fact\n- FACT\n")
    await client.start_session([])
    client.open(memory)
    assert "%20" in file_uri(memory)
    await client.wait_for_codes(memory, ["duplicate-entry"])
    assert (await client.command("metis.usage", {}))["MEMORY.md"]["size_bytes"] == 14
    client.close(memory)
    await client.wait_for_codes(memory, [])
    error = await client.command_error("metis.usage", {})
    assert "no workspace is open" in error.message


async def test_a_folder_open_twice_stays_until_both_are_removed(
    client: MetisClient, tmp_path: Path
) -> None:
    """`/p` and `/p/.metis` stand for one workspace: removing one leaves the other."""
    from lsprotocol import types

    project = tmp_path / "p"
    write_memory(project, "USER.md", "- likes tea\n- LIKES tea\n")
    await client.start_session([project, project / ".metis"])
    user = project / ".metis" / "USER.md"
    await client.wait_for_codes(user, ["duplicate-entry"])
    client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(
            types.WorkspaceFoldersChangeEvent(
                added=[], removed=[types.WorkspaceFolder(file_uri(project), "p")]
            )
        )
    )
    usage = await client.command("metis.usage", {"workspace": file_uri(project / ".metis")})
    assert usage["USER.md"]["size_bytes"] == 24
    assert client.codes(user) == ["duplicate-entry"]  # still watched and reported


async def test_a_removed_folder_with_an_open_file_is_reported_under_its_directory(
    client: MetisClient, tmp_path: Path
) -> None:
    from lsprotocol import types

    project = tmp_path / "p"
    memory = write_memory(project, "MEMORY.md", "- fact\n")
    await client.start_session([project / ".metis"])
    client.open(memory)
    await client.wait_for_note(
        "metis/usageChanged", lambda p: p["workspace"] == file_uri(project / ".metis")
    )
    client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(
            types.WorkspaceFoldersChangeEvent(
                added=[], removed=[types.WorkspaceFolder(file_uri(project / ".metis"), ".metis")]
            )
        )
    )
    moved = await client.wait_for_note(
        "metis/usageChanged", lambda p: p["workspace"] == file_uri(project)
    )
    assert moved["usage"]["MEMORY.md"]["size_bytes"] == 7
