"""The user memory (one USER.md read in every workspace, `$XDG_CONFIG_HOME/metis-memory/`)
in the language server, over real stdio: a memory document wherever it is opened, with no
folder or with some, its fixes and commands addressed to it (`file` "user-memory"), its
usage in every workspace's, followed when another process writes it; and its entries that
name something of an open workspace, moved there."""

from __future__ import annotations

import hashlib
import urllib.parse
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from support.cli import cli_elsewhere
from support.lsp_session import CLIENT_COMMANDS, MetisClient, apply_workspace_edit, hover, lenses
from support.lsp_values import file_uri, span
from support.memory_files import user_memory_path, write_memory, write_user_memory

TOKEN = "AKIAIOSFODNN7EXAMPLE"
FILLER = "".join(f"- a fact about me, number {n}\n" for n in range(60))
HEADING = "## User context, every workspace (user memory)"


def data(error: JsonRpcException) -> dict[str, str]:
    assert isinstance(error.data, dict), error
    return error.data


def titled(actions: list[types.CodeAction], title: str) -> types.CodeAction:
    found = [a for a in actions if a.title == title]
    assert len(found) == 1, f"no single {title!r} in {[a.title for a in actions]}"
    return found[0]


# ---- a memory document wherever it is opened ---------------------------------------------
@pytest.mark.parametrize("with_folder", [False, True], ids=["no folder", "a workspace folder"])
async def test_the_user_memory_opened_gets_the_memory_diagnostics_and_fixes(
    client: MetisClient, user_config_home: Path, workspace: Path, with_folder: bool
) -> None:
    text = (
        "# About me\n\n- Answer in British English\n- answer in  british ENGLISH\n"
        f"- my deploy key {TOKEN}\n" + FILLER
    )
    path = write_user_memory(user_config_home, text)
    await client.start_session([workspace] if with_folder else [], options=CLIENT_COMMANDS)
    uri = client.open(path)
    await client.wait_for_codes(path, ["duplicate-entry", "over-soft-cap", "secret"])
    size = len(text.encode())
    assert client.diagnostic(path, "over-soft-cap").message == (
        f"Your user memory is {size:,} B, over its 1,536 B soft cap (hard cap 3,072 B): "
        "consolidate before adding more"
    )
    assert client.diagnostic(path, "secret").message == (
        "Possible AWS access key in your user memory: it goes into the system prompt of every "
        "workspace (a write that adds one is refused); redact it and keep the credential in a "
        "secret store"
    )

    duplicate = await client.actions(path, (3, 3))
    remove = titled(
        duplicate, "Remove duplicate entry “answer in british ENGLISH” (it repeats line 3)"
    )
    assert remove.edit is not None
    edited = apply_workspace_edit(remove.edit, lambda u: client.texts[u], client.encoding)
    assert edited == {uri: text.replace("- answer in  british ENGLISH\n", "")}
    start = client.diagnostic(path, "over-soft-cap").range.start
    cap = await client.actions(path, (start.line, start.character))
    consolidate = titled(cap, "Consolidate your user memory…")
    assert consolidate.command is not None
    assert consolidate.command.command == "metis.openConsolidation"
    assert list(consolidate.command.arguments or ()) == [{"file": "user-memory"}]
    titled(cap, "Tidy your user memory")  # the duplicate dropped, as a workspace file's

    entry = await client.actions(path, (2, 5))
    prompt = titled(entry, "Replace entry “Answer in British English”…")
    assert prompt.command is not None and list(prompt.command.arguments or ()) == [
        {"file": "user-memory", "old": "- Answer in British English"}
    ]
    assert not [a for a in entry if a.title.startswith("Move entry")]  # no other file here


async def test_the_user_memory_reached_through_a_symlinked_config_folder(
    client: MetisClient, user_config_home: Path, tmp_path: Path
) -> None:
    """Dotfiles often make ~/.config a link: the file opened under the link's path is still
    the user memory."""
    write_user_memory(user_config_home, "- tabs\n- TABS\n")
    alias = tmp_path / "dotfiles-config"
    alias.symlink_to(user_config_home, target_is_directory=True)
    through = alias / "metis-memory" / "USER.md"
    await client.start_session([])
    client.open(through)
    await client.wait_for_codes(through, ["duplicate-entry"])


async def test_a_user_md_elsewhere_is_not_the_user_memory(
    client: MetisClient, user_config_home: Path, tmp_path: Path
) -> None:
    write_user_memory(user_config_home, "- x\n")
    other = tmp_path / "notes" / "metis-memory" / "USER.md"
    other.parent.mkdir(parents=True)
    other.write_text("- tabs\n- TABS\n")
    await client.start_session([])
    client.open(other)
    # A request answered after the open: had it been taken for a memory file, its
    # diagnostics would have been published before (each open is analysed at once).
    await client.command("metis.openUserMemory", {})
    assert client.codes(other) == []


# ---- followed on disk, and in every workspace's usage -----------------------------------
async def test_another_process_writing_the_user_memory_refreshes_its_diagnostics_and_usage(
    client: MetisClient, user_config_home: Path, workspace: Path
) -> None:
    path = write_user_memory(user_config_home, "- Answer in British English\n")
    await client.start_session([workspace])
    first = await client.wait_for_note(
        "metis/usageChanged", lambda p: p["usage"]["userMemory"]["size_bytes"] == 28
    )
    assert first["workspace"] == file_uri(workspace)
    assert first["usage"]["userMemory"] == {
        "size_bytes": 28,
        "soft_cap": 1536,
        "hard_cap": 3072,
        "over_soft_cap": False,
        "over_hard_cap": False,
        "source": "disk",
        "level": "ok",
        "state": "within budget",
        "path": str(path),
        "uri": file_uri(path),
        "exists": True,
    }
    await cli_elsewhere("add", "--user", "- answer in british english")  # another workspace's agent
    await client.wait_for_codes(path, ["duplicate-entry"])  # closed: its disk is analysed
    await client.wait_for_note(
        "metis/usageChanged", lambda p: p["usage"]["userMemory"]["size_bytes"] == 56
    )


async def test_the_usage_holds_the_user_memory_before_it_exists(
    client: MetisClient, user_config_home: Path, workspace: Path
) -> None:
    await client.start_session([workspace])
    usage = await client.command("metis.usage", {})
    assert set(usage) == {"MEMORY.md", "USER.md", "userMemory"}
    part = usage["userMemory"]
    assert part["exists"] is False and part["size_bytes"] == 0 and part["level"] == "ok"
    assert part["path"] == str(user_memory_path(user_config_home))
    note = await client.wait_for_note("metis/usageChanged", lambda p: True)
    assert note["usage"]["userMemory"]["exists"] is False
    assert not user_memory_path(user_config_home).parent.exists(), "nothing is made by reading"


async def test_typing_in_the_user_memory_moves_every_workspaces_usage(
    client: MetisClient, user_config_home: Path, tmp_path: Path
) -> None:
    shop, blog = tmp_path / "shop", tmp_path / "blog"
    shop.mkdir()
    blog.mkdir()
    path = write_user_memory(user_config_home, "- a\n")
    await client.start_session([shop, blog])
    client.open(path)
    client.replace_all(path, "- a\n- b\n")
    for folder in (shop, blog):

        def typed(p: dict[str, Any], folder: Path = folder) -> bool:
            return bool(
                p["workspace"] == file_uri(folder) and p["usage"]["userMemory"]["size_bytes"] == 8
            )

        note = await client.wait_for_note("metis/usageChanged", typed)
        assert note["usage"]["userMemory"]["source"] == "buffer"


# ---- commands addressed to it --------------------------------------------------------------
async def test_open_user_memory_says_where_it_is_and_creates_nothing(
    client: MetisClient, user_config_home: Path
) -> None:
    await client.start_session([])
    path = user_memory_path(user_config_home)
    assert await client.command("metis.openUserMemory", {}) == {
        "path": str(path),
        "uri": file_uri(path),
        "exists": False,
    }
    assert not path.parent.exists()
    write_user_memory(user_config_home, "- x\n")
    assert (await client.command("metis.openUserMemory", {}))["exists"] is True


async def test_the_writes_take_user_memory_with_no_folder_open(
    client: MetisClient, user_config_home: Path
) -> None:
    await client.start_session([])
    path = user_memory_path(user_config_home)
    added = await client.command(
        "metis.memoryAdd", {"file": "user-memory", "entry": "- Answer in British English"}
    )
    assert path.read_text() == "- Answer in British English\n"
    assert added["scope"] == "user" and added["path"] == str(path)
    assert added["operation"] == "add" and added["after_size_bytes"] == 28
    updated = await client.wait_for_note("metis/memoryUpdated", lambda p: True)
    assert updated["scope"] == "user" and updated["file"] == "USER.md"

    await client.command(
        "metis.memoryReplace",
        {"file": "user-memory", "old": "British", "new": "Australian"},
    )
    assert path.read_text() == "- Answer in Australian English\n"

    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    stale = hashlib.sha256(b"something else").hexdigest()
    error = await client.command_error(
        "metis.memoryConsolidate",
        {"file": "user-memory", "content": "- short\n", "expectedHash": stale},
    )
    assert data(error)["code"] == "conflict"
    assert path.read_text() == "- Answer in Australian English\n"
    await client.command(
        "metis.memoryConsolidate",
        {"file": "user-memory", "content": "- short\n", "expectedHash": digest},
    )
    assert path.read_text() == "- short\n"


async def test_a_secret_is_refused_in_the_user_memory_too(
    client: MetisClient, user_config_home: Path
) -> None:
    await client.start_session([])
    error = await client.command_error(
        "metis.memoryAdd", {"file": "user-memory", "entry": f"- deploy with {TOKEN}"}
    )
    assert data(error)["code"] == "secret_detected"
    assert TOKEN not in str(error) and TOKEN not in data(error).get("person_text", "")
    assert not user_memory_path(user_config_home).exists()


async def test_unsaved_edits_of_the_user_memory_are_protected(
    client: MetisClient, user_config_home: Path
) -> None:
    path = write_user_memory(user_config_home, "- a\n")
    await client.start_session([])
    client.open(path)
    client.replace_all(path, "- a\n- typed, not saved\n")
    error = await client.command_error("metis.memoryAdd", {"file": "user-memory", "entry": "- b"})
    assert data(error)["code"] == "unsaved_changes"
    assert "Your user memory has unsaved changes in the editor" in str(error)
    assert path.read_text() == "- a\n"


async def test_tidy_the_prompt_and_the_proposal_take_the_user_memory(
    client: MetisClient, user_config_home: Path, workspace: Path
) -> None:
    write_user_memory(user_config_home, "- tabs\n- TABS\n")
    await client.start_session([workspace])
    tidy = await client.command("metis.tidy", {"file": "user-memory"})
    assert tidy == {"file": "user-memory", "content": "- tabs\n", "changed": True}
    prompt = await client.command(
        "metis.consolidationPrompt", {"file": "user-memory", "text": "- tabs\n"}
    )
    assert prompt.startswith("You curate the user memory (USER.md read in every workspace)")
    assert "belongs in that workspace's MEMORY.md" in prompt

    # The editor's proposal for it: `?user-memory` (or its folder's URI) in the query.
    uri = "metis-proposal:" + urllib.parse.quote("/user memory/USER proposal.md") + "?user-memory"
    over = "# About me\n" + FILLER
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            types.TextDocumentItem(uri=uri, language_id="markdown", version=1, text=over)
        )
    )
    measured = await client.wait_for_note("metis/proposalUsage", lambda p: p["uri"] == uri)
    assert measured["file"] == "USER.md" and measured["scope"] == "user"
    assert measured["size_bytes"] == len(over.encode()) and measured["level"] == "warning"
    await client.wait_until(
        lambda: [d.code for d in client.diagnostics.get(uri, [])] == ["over-soft-cap"],
        "the proposal analysed as the user memory",
    )
    assert client.diagnostics[uri][0].message.startswith("Your user memory is ")


async def test_the_assembled_prompt_holds_the_user_memory_first(
    client: MetisClient, user_config_home: Path, workspace: Path
) -> None:
    write_user_memory(user_config_home, "- Answer in British English\n")
    write_memory(workspace, "USER.md", "- Works on the shop at weekends\n")
    await client.start_session([workspace])
    prompt = await client.command("metis.assemblePrompt", {"base": "You are helpful."})
    assert prompt.index(HEADING) < prompt.index("## User context (USER.md)")
    assert "- Answer in British English" in prompt
    assert "- Works on the shop at weekends" in prompt


# ---- workspace-specific entries, moved to their workspace ---------------------------------
@pytest.fixture
def shop(tmp_path: Path) -> Path:
    root = tmp_path / "shop"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("print('shop')\n")
    (root / "Makefile").write_text(".PHONY: itest\nitest:\n\tpytest\n")
    return root


SPECIFIC = "# About me\n\n- Answer in British English\n- The shop's entry point is `src/app.py`\n"


async def test_an_entry_naming_a_file_of_an_open_workspace_is_moved_there(
    client: MetisClient, user_config_home: Path, shop: Path
) -> None:
    path = write_user_memory(user_config_home, SPECIFIC)
    await client.start_session([shop], options=CLIENT_COMMANDS)
    client.open(path)
    await client.wait_for_codes(path, ["workspace-specific"])
    found = client.diagnostic(path, "workspace-specific")
    assert found.message == (
        "This entry names `src/app.py`, a file of the workspace shop: your user memory is read "
        "in every workspace. Move it to shop's MEMORY.md."
    )
    assert found.severity == types.DiagnosticSeverity.Information and found.source == "metis"
    line = SPECIFIC.splitlines()[3]
    assert span(found.range) == ((3, line.index("src")), (3, line.index("src") + 10))

    move = titled(await client.actions(path, (3, 5)), "Move to shop's MEMORY.md")
    assert move.is_preferred and move.command is not None
    assert move.command.command == "metis.moveToWorkspace"
    entry = "- The shop's entry point is `src/app.py`"
    assert list(move.command.arguments or ()) == [{"entry": entry, "workspace": file_uri(shop)}]

    result = await client.command(move.command.command, *(move.command.arguments or ()))
    assert (shop / ".metis" / "MEMORY.md").read_text() == entry + "\n"
    assert path.read_text() == "# About me\n\n- Answer in British English\n"
    assert result["person_text"] == (
        "Moved the entry “The shop's entry point is `src/app.py`” from your user memory to "
        "shop's MEMORY.md."
    )
    assert result["added"]["file"] == "MEMORY.md" and result["removed"]["scope"] == "user"
    client.close(path)  # back to the disk, where the entry is gone
    await client.wait_for_codes(path, [])


async def test_a_target_of_the_workspaces_makefile_is_workspace_specific(
    client: MetisClient, user_config_home: Path, shop: Path, tmp_path: Path
) -> None:
    """Closed, with three workspaces open: one fix per workspace the entry names something
    of (what all three had would be the user's habit, in none of them alone)."""
    blog, docs = tmp_path / "blog", tmp_path / "docs"
    blog.mkdir()
    docs.mkdir()
    (blog / "Makefile").write_text("itest:\n\ttrue\n")
    path = write_user_memory(user_config_home, "- Run `make itest` before pushing\n")
    await client.start_session([shop, blog, docs], options=CLIENT_COMMANDS)
    await client.wait_for_codes(path, ["workspace-specific"])
    assert client.diagnostic(path, "workspace-specific").message.startswith(
        "This entry names `make itest`, a target of shop's Makefile: "
    )
    client.open(path)
    actions = await client.actions(path, (0, 3))
    assert [a.title for a in actions if a.title.startswith("Move to")] == [
        "Move to shop's MEMORY.md",
        "Move to blog's MEMORY.md",
    ]


async def test_a_workspace_opened_later_makes_an_entry_specific(
    client: MetisClient, user_config_home: Path, shop: Path, workspace: Path
) -> None:
    path = write_user_memory(user_config_home, SPECIFIC)
    await client.start_session([workspace])
    client.open(path)
    await client.wait_until(lambda: file_uri(path) in client.diagnostics, "the first analysis")
    assert client.codes(path) == []  # `src/app.py` is nowhere open
    client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(
            types.WorkspaceFoldersChangeEvent(
                added=[types.WorkspaceFolder(file_uri(shop), "shop")], removed=[]
            )
        )
    )
    await client.wait_for_codes(path, ["workspace-specific"])


async def test_a_move_the_workspace_refuses_leaves_the_user_memory_as_it_was(
    client: MetisClient, user_config_home: Path, shop: Path
) -> None:
    full = "".join(f"- shop fact {n:03d} that takes room\n" for n in range(140))
    write_memory(shop, "MEMORY.md", full)  # over its 4,096 B hard cap: an add is refused
    path = write_user_memory(user_config_home, SPECIFIC)
    await client.start_session([shop])
    entry = "- The shop's entry point is `src/app.py`"
    error = await client.command_error(
        "metis.moveToWorkspace", {"entry": entry, "workspace": file_uri(shop)}
    )
    assert data(error)["code"] == "hard_cap_exceeded"
    assert path.read_text() == SPECIFIC
    assert (shop / ".metis" / "MEMORY.md").read_text() == full


async def test_a_move_offered_on_an_older_user_memory_is_refused(
    client: MetisClient, user_config_home: Path, shop: Path
) -> None:
    path = write_user_memory(user_config_home, SPECIFIC)
    await client.start_session([shop])
    entry = "- The shop's entry point is `src/app.py`"
    stale = hashlib.sha256(b"# About me\n").hexdigest()
    error = await client.command_error(
        "metis.moveToWorkspace",
        {"entry": entry, "workspace": file_uri(shop), "expectedHash": stale},
    )
    assert data(error)["code"] == "conflict"
    missing = await client.command_error(
        "metis.moveToWorkspace", {"entry": "- not there", "workspace": file_uri(shop)}
    )
    assert data(missing)["code"] == "not_found"
    assert path.read_text() == SPECIFIC and not (shop / ".metis").exists()


async def test_a_move_to_a_workspace_that_has_the_entry_only_removes_it(
    client: MetisClient, user_config_home: Path, shop: Path
) -> None:
    entry = "- The shop's entry point is `src/app.py`"
    write_memory(shop, "MEMORY.md", "- the shop's ENTRY point is `src/app.py`\n")
    path = write_user_memory(user_config_home, SPECIFIC)
    await client.start_session([shop])
    result = await client.command(
        "metis.moveToWorkspace", {"entry": entry, "workspace": file_uri(shop)}
    )
    assert result["added"] is None
    assert result["person_text"].startswith("shop's MEMORY.md has the entry ")
    assert (
        shop / ".metis" / "MEMORY.md"
    ).read_text() == "- the shop's ENTRY point is `src/app.py`\n"
    assert path.read_text() == "# About me\n\n- Answer in British English\n"


# ---- attacked ------------------------------------------------------------------------------
async def test_the_lens_and_hover_name_the_user_memory(
    client: MetisClient, user_config_home: Path
) -> None:
    path = write_user_memory(user_config_home, "# About me\n- Answer in British English\n")
    await client.start_session([])
    client.open(path)
    (lens,) = await lenses(client, path)
    assert lens.command is not None
    assert lens.command.title.startswith("Your user memory (USER.md in every workspace): 39 B · ")
    shown = await hover(client, path, 0, 2)
    assert shown is not None and isinstance(shown.contents, types.MarkupContent)
    assert shown.contents.value.startswith("**Your user memory (USER.md in every workspace)**")


async def test_a_user_memory_folder_others_may_write_is_reported_not_used(
    client: MetisClient, user_config_home: Path, workspace: Path
) -> None:
    """What it says would reach every workspace: the store refuses it, and the editor says
    why where the size would be, never "0 B, within caps"."""
    path = write_user_memory(user_config_home, "- planted by someone else\n")
    path.parent.chmod(0o777)
    await client.start_session([workspace])
    note = await client.wait_for_note(
        "metis/usageChanged", lambda p: p["usage"]["userMemory"]["level"] == "error"
    )
    part = note["usage"]["userMemory"]
    assert part["exists"] is True and "error" in part
    assert "read or written as your user memory" in part["error"]
    assert part["state"].startswith("cannot be read — ")
    opened = await client.command("metis.openUserMemory", {})
    assert opened["exists"] is True and "chmod go-w" in opened["error"]
    error = await client.command_error("metis.memoryAdd", {"file": "user-memory", "entry": "- x"})
    assert "read or written as your user memory" in str(error)
    assert path.read_text() == "- planted by someone else\n"
    # The workspace's own memory is served as ever.
    assert (await client.command("metis.usage", {}))["MEMORY.md"]["level"] == "ok"


async def test_the_config_folder_opened_as_a_workspace_is_not_the_user_memory(
    client: MetisClient, user_config_home: Path
) -> None:
    """~/.config opened as a folder: its `.metis/USER.md` and the user memory's are two
    files, each with its own diagnostics."""
    path = write_user_memory(user_config_home, "- a\n- A\n")
    own = write_memory(user_config_home, "USER.md", "- b\n-\n")
    await client.start_session([user_config_home])
    await client.wait_for_codes(path, ["duplicate-entry"])
    await client.wait_for_codes(own, ["empty-entry"])
    usage = await client.command("metis.usage", {})
    assert usage["USER.md"]["size_bytes"] == 6 and usage["userMemory"]["size_bytes"] == 8


async def test_a_multi_line_entry_with_crlf_moves_whole(
    client: MetisClient, user_config_home: Path, shop: Path
) -> None:
    entry = "- The shop's tests:\r\n  run `make itest` first"
    text = "# About me\r\n\r\n" + entry + "\r\n- Answer in British English\r\n"
    path = user_memory_path(user_config_home)
    path.parent.mkdir(mode=0o700, parents=True)
    path.write_bytes(text.encode())
    path.chmod(0o600)
    await client.start_session([shop])
    await client.wait_for_codes(path, ["workspace-specific"])
    await client.command("metis.moveToWorkspace", {"entry": entry, "workspace": file_uri(shop)})
    assert (shop / ".metis" / "MEMORY.md").read_bytes() == (entry + "\r\n").encode()
    assert path.read_bytes() == b"# About me\r\n\r\n- Answer in British English\r\n"


async def test_an_agents_write_of_the_user_memory_waits_for_review_on_in_its_workspace(
    client: MetisClient, user_config_home: Path, workspace: Path
) -> None:
    """Review on where the agent works covers the user memory it writes: a write that
    reaches every workspace is never less reviewed than one that stays in this one."""
    path = write_user_memory(user_config_home, "- a\n")
    await client.start_session([workspace])
    await client.command("metis.setReview", {"on": True})
    answer = await client.command(
        "metis.memoryAdd",
        {
            "file": "user-memory",
            "entry": "- Answer in British English",
            "workspace": file_uri(workspace),
            "via": "languageModelTool",
        },
    )
    assert "staged" in answer and answer["scope"] == "user"
    assert path.read_text() == "- a\n"
    told = await client.wait_for_note("metis/reviewChanged", lambda p: p.get("scope") == "user")
    assert told["count"] == 1 and told["workspace"] == file_uri(path.parent)
    # The person's own write is never staged.
    await client.command(
        "metis.memoryAdd", {"file": "user-memory", "entry": "- b", "workspace": file_uri(workspace)}
    )
    assert path.read_text() == "- a\n- b\n"


async def test_a_move_into_a_memory_with_unsaved_edits_is_refused(
    client: MetisClient, user_config_home: Path, shop: Path
) -> None:
    target = write_memory(shop, "MEMORY.md", "- a\n")
    path = write_user_memory(user_config_home, SPECIFIC)
    await client.start_session([shop])
    client.open(target)
    client.replace_all(target, "- a\n- typed, not saved\n")
    entry = "- The shop's entry point is `src/app.py`"
    error = await client.command_error(
        "metis.moveToWorkspace", {"entry": entry, "workspace": file_uri(shop)}
    )
    assert data(error)["code"] == "unsaved_changes"
    assert target.read_text() == "- a\n" and path.read_text() == SPECIFIC
