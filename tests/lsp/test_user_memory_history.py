"""The user memory's write log and review inbox in the language server, over real stdio: the
history commands and the review commands take `file` "user-memory" (as the write commands
do) and act on the user memory's own log and inbox (`metis-memory/history/` beside its
USER.md, numbered apart from every workspace's); `metis/historyChanged` and
`metis/reviewChanged` of it carry `scope` "user", whether this server, another process or an
agent in another window made the change."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pygls.exceptions import JsonRpcException

from support.cli import cli_elsewhere
from support.lsp_session import MetisClient
from support.lsp_values import file_uri
from support.memory_files import memory_path, user_memory_path, write_memory, write_user_memory

INVALID_PARAMS, REQUEST_FAILED = -32602, -32803
HISTORY_CHANGED, REVIEW_CHANGED = "metis/historyChanged", "metis/reviewChanged"
USER = {"file": "user-memory"}
ENTRY = "- Answer in British English"
CAPS = "(soft cap 1,536 B, hard cap 3,072 B)"
CLAUDE = {"CLAUDECODE": "1", "CLAUDE_CODE_SESSION_ID": "5f0c2a7e-claude-session"}
"""The environment of a command Claude Code's shell runs: its writes are an agent's."""


def data(error: JsonRpcException) -> dict[str, str]:
    assert isinstance(error.data, dict), error
    return error.data


def user_note(client: MetisClient, method: str) -> list[dict[str, Any]]:
    return [p for p in client.notes[method] if p.get("scope") == "user"]


async def add_user(client: MetisClient, entry: str, **extra: object) -> Any:
    return await client.command("metis.memoryAdd", {**USER, "entry": entry, **extra})


async def user_records(client: MetisClient) -> list[dict[str, Any]]:
    return list((await client.command("metis.history", USER))["records"])


async def one_user_write(
    client: MetisClient, user_config_home: Path, workspace: Path, text: str
) -> tuple[Path, dict[str, Any]]:
    """The user memory as `text` left it, a session on `workspace`, and ENTRY added to it from
    the editor: the user memory's path and that write's record."""
    path = write_user_memory(user_config_home, text)
    await client.start_session([workspace])
    await add_user(client, ENTRY)
    (added,) = await user_records(client)
    return path, added


async def staged_agent_write(
    client: MetisClient, user_config_home: Path, workspace: Path
) -> tuple[Path, dict[str, Any]]:
    """The user memory holding "- a", review on in `workspace`, and ENTRY from an agent
    (user_memory_add) waiting for review: the user memory's path and the staged change."""
    path = write_user_memory(user_config_home, "- a\n")
    await client.start_session([workspace])
    await client.command("metis.setReview", {"on": True})
    answer = await add_user(client, ENTRY, workspace=file_uri(workspace), via="languageModelTool")
    return path, dict(answer["staged"])


# ---- the history -------------------------------------------------------------------------
async def test_the_user_memorys_writes_are_listed_in_its_own_history(
    client: MetisClient, user_config_home: Path, workspace: Path
) -> None:
    write_memory(workspace, "MEMORY.md", "- uses pnpm\n")
    await client.start_session([workspace])
    await add_user(client, ENTRY)
    path = user_memory_path(user_config_home)
    note = await client.wait_for_note(HISTORY_CHANGED, lambda p: p.get("scope") == "user")
    assert note == {"workspace": file_uri(path.parent), "file": "USER.md", "scope": "user"}

    listed = await client.command("metis.history", USER)
    (record,) = listed["records"]
    assert listed["archived"] == []
    assert (record["file"], record["operation"], record["door"]) == ("USER.md", "add", "editor")
    assert record["summary"] == f"added “{ENTRY}”"
    assert record["person"] == "You in the editor"
    # The workspace's log holds none of it; the user memory's holds none of the workspace's.
    assert (await client.command("metis.history", {"workspace": file_uri(workspace)}))[
        "records"
    ] == []
    await client.command("metis.memoryAdd", {"file": "MEMORY.md", "entry": "- b"})
    assert [r["file"] for r in await user_records(client)] == ["USER.md"]

    diff = await client.command("metis.historyDiff", {**USER, "id": record["id"]})
    assert (diff["before"], diff["after"]) == ("", f"{ENTRY}\n")
    assert diff["title"] == f"Your user memory: change #{record['id']} by you, just now"
    blamed = await client.command("metis.blame", USER)
    assert [e["hover"] for e in blamed["entries"]] == ["Added by you in the editor, just now"]


async def test_an_agents_write_of_the_user_memory_is_named_by_its_tool(
    client: MetisClient, user_config_home: Path, workspace: Path
) -> None:
    await client.start_session([workspace])
    await add_user(client, ENTRY, workspace=file_uri(workspace), via="languageModelTool")
    (record,) = await user_records(client)
    assert record["person"] == "VS Code chat agent through user_memory_add in VS Code chat"


async def test_undo_and_restore_a_write_of_the_user_memory(
    client: MetisClient, user_config_home: Path, workspace: Path
) -> None:
    path, added = await one_user_write(client, user_config_home, workspace, "# About me\n")
    told = len(user_note(client, HISTORY_CHANGED))

    undone = await client.command("metis.undo", {**USER, "id": added["id"]})
    assert path.read_text() == "# About me\n"
    assert undone["scope"] == "user" and undone["path"] == str(path)
    assert undone["person_text"] == (
        f"Undid change #{added['id']} to your user memory ({path}): 39 B → 11 B {CAPS}."
    )
    assert undone["message"].startswith(  # an agent's words name it too
        f"Undid change #{added['id']} to your user memory (USER.md read in every workspace)"
    )
    await client.wait_until(
        lambda: len(user_note(client, HISTORY_CHANGED)) > told, "the undo's historyChanged"
    )
    updated = await client.wait_for_note(
        "metis/memoryUpdated", lambda p: p.get("operation") == "consolidate"
    )
    assert updated["scope"] == "user" and updated["after_size_bytes"] == 11
    undo, _ = await user_records(client)
    assert (undo["operation"], undo["door"], undo["detail"]) == (
        "undo",
        "editor",
        f"undoes #{added['id']}",
    )

    # What the undo removed is in the user memory's archive, and goes back in.
    (archived,) = (await client.command("metis.history", USER))["archived"]
    assert archived["text"] == ENTRY and archived["person"] == "You in the editor (undo)"
    back = await client.command("metis.unarchive", {**USER, "id": archived["id"]})
    assert path.read_text() == f"# About me\n{ENTRY}\n"
    assert back["person_text"].startswith(
        f"Put an archived entry back in your user memory ({path}): 11 B → 39 B"
    )

    # Restore: the file as it was right after the undo.
    restored = await client.command("metis.restore", {**USER, "id": undo["id"]})
    assert path.read_text() == "# About me\n"
    assert restored["person_text"] == (
        f"Restored your user memory ({path}) as it was after change #{undo['id']}: "
        f"39 B → 11 B {CAPS}."
    )
    assert [r["operation"] for r in await user_records(client)] == [
        "restore",
        "unarchive",
        "undo",
        "add",
    ]


async def test_a_refused_undo_of_the_user_memory_says_so_in_its_words(
    client: MetisClient, user_config_home: Path, workspace: Path
) -> None:
    path, added = await one_user_write(client, user_config_home, workspace, "")
    await client.command("metis.memoryReplace", {**USER, "old": ENTRY, "new": "- Answer in Welsh"})
    error = await client.command_error("metis.undo", {**USER, "id": added["id"]})
    assert error.code == REQUEST_FAILED and data(error)["code"] == "conflict"
    assert data(error)["person_text"].startswith(
        f"Change #{added['id']} to your user memory ({path}) cannot be undone: a later write "
        "changed or removed what it added"
    )
    assert path.read_text() == "- Answer in Welsh\n"

    # Its ids are its own: the workspace's log has no change #1.
    missing = await client.command_error("metis.undo", {"id": added["id"]})
    assert data(missing)["code"] == "not_found"
    gone = await client.command_error("metis.restore", {**USER, "id": 99})
    assert data(gone)["person_text"].startswith("There is no change #99 in the history")


async def test_undo_with_the_user_memory_open_and_edited_is_refused(
    client: MetisClient, user_config_home: Path, workspace: Path
) -> None:
    path, added = await one_user_write(client, user_config_home, workspace, "")
    client.open(path)
    client.replace_all(path, f"{ENTRY}\n- typed, not saved\n")
    error = await client.command_error("metis.undo", {**USER, "id": added["id"]})
    assert data(error)["code"] == "unsaved_changes"
    assert error.message.startswith("Your user memory has unsaved changes in the editor")
    assert path.read_text() == f"{ENTRY}\n"


async def test_the_log_commands_take_only_the_user_memory_as_file(
    client: MetisClient, workspace: Path
) -> None:
    await client.start_session([workspace])
    error = await client.command_error("metis.undo", {"file": "MEMORY.md", "id": 1})
    assert error.code == INVALID_PARAMS
    assert '"file"?: "user-memory"' in error.message


# ---- the review inbox --------------------------------------------------------------------
async def test_an_agents_staged_write_of_the_user_memory_is_listed_and_accepted(
    client: MetisClient, user_config_home: Path, workspace: Path
) -> None:
    path, staged = await staged_agent_write(client, user_config_home, workspace)
    assert path.read_text() == "- a\n"
    # In the user memory's inbox, not the workspace's.
    assert (await client.command("metis.review", {}))["staged"] == []
    inbox = await client.command("metis.review", USER)
    assert inbox == {"on": False, "staged": [staged]}
    assert staged["person"] == "VS Code chat agent through user_memory_add in VS Code chat"
    assert (staged["file"], staged["before"], staged["after"]) == (
        "USER.md",
        "- a\n",
        f"- a\n{ENTRY}\n",
    )

    accepted = await client.command("metis.reviewAccept", {**USER, "id": staged["id"]})
    assert path.read_text() == f"- a\n{ENTRY}\n"
    assert accepted["scope"] == "user"
    assert accepted["person_text"] == (
        f"Accepted change #{staged['id']} by VS Code chat agent. Added entry to your user memory "
        f"({path}): 4 B → 32 B {CAPS}."
    )
    done = await client.wait_for_note(
        REVIEW_CHANGED, lambda p: p.get("scope") == "user" and p["count"] == 0
    )
    assert done == {
        "workspace": file_uri(path.parent),
        "count": 0,
        "arrived": None,
        "scope": "user",
    }
    (record,) = await user_records(client)
    assert (record["door"], record["actor"]) == ("language-model-tool", "VS Code chat agent")
    assert record["person"] == (
        "VS Code chat agent through user_memory_add in VS Code chat (accepted by you)"
    )
    assert (await client.command("metis.review", USER))["staged"] == []


async def test_an_agents_staged_write_of_the_user_memory_is_rejected(
    client: MetisClient, user_config_home: Path, workspace: Path
) -> None:
    path, staged = await staged_agent_write(client, user_config_home, workspace)
    staged_id = staged["id"]
    rejected = await client.command("metis.reviewReject", {**USER, "id": staged_id})
    assert rejected == {
        "rejected": staged_id,
        "message": f"Rejected change #{staged_id} by VS Code chat agent: your user memory is "
        "unchanged.",
    }
    assert path.read_text() == "- a\n"
    assert await user_records(client) == []
    await client.wait_for_note(
        REVIEW_CHANGED, lambda p: p.get("scope") == "user" and p["count"] == 0
    )
    again = await client.command_error("metis.reviewAccept", {**USER, "id": staged_id})
    assert data(again)["code"] == "not_found"


async def test_review_on_for_the_user_memory_itself(
    client: MetisClient, user_config_home: Path, workspace: Path
) -> None:
    """`metis.setReview {file: "user-memory"}` is the user memory's own review (as
    `metis-memory review --user on`): an agent's write of it waits from any workspace."""
    path = write_user_memory(user_config_home, "")
    await client.start_session([workspace])
    assert await client.command("metis.setReview", {**USER, "on": True}) == {"on": True}
    assert (await client.command("metis.review", {}))["on"] is False
    answer = await add_user(client, ENTRY, workspace=file_uri(workspace), via="languageModelTool")
    assert "staged" in answer and path.read_text() == ""
    assert (await client.command("metis.review", USER))["on"] is True


async def test_an_agents_write_staged_in_another_process_is_announced(
    client: MetisClient, user_config_home: Path, workspace: Path
) -> None:
    """Claude Code's shell runs `metis-memory add --user` while review is on where it works:
    the change waits in the user memory's inbox, and the editor hears of it (the watcher sees
    the inbox's stamp beside the user memory); accepting it here writes it."""
    path = write_user_memory(user_config_home, "- a\n")
    await client.start_session([workspace])
    await client.command("metis.setReview", {"on": True})
    await client.command("metis.usage", {})  # the watch is in place once the folder is taken
    await cli_elsewhere("add", "--user", ENTRY, cwd=workspace, env=CLAUDE)
    assert path.read_text() == "- a\n"
    note = await client.wait_for_note(
        REVIEW_CHANGED, lambda p: p.get("scope") == "user" and p["count"] == 1
    )
    arrived = note["arrived"]
    assert note["workspace"] == file_uri(path.parent)
    assert arrived["person"] == "Claude Code with metis-memory add --user"
    accepted = await client.command("metis.reviewAccept", {**USER, "id": arrived["id"]})
    assert accepted["person_text"].startswith(f"Accepted change #{arrived['id']} by Claude Code.")
    assert path.read_text() == f"- a\n{ENTRY}\n"


async def test_a_write_and_a_reject_in_another_process_reach_the_editor(
    client: MetisClient, user_config_home: Path, workspace: Path
) -> None:
    """Another window (or the terminal) writes the user memory and rejects a change waiting
    in its inbox: this editor's history and inbox follow."""
    path, staged = await staged_agent_write(client, user_config_home, workspace)
    staged_id = staged["id"]
    await client.wait_for_note(REVIEW_CHANGED, lambda p: p.get("scope") == "user")
    await cli_elsewhere("add", "--user", "- Tabs, not spaces", cwd=workspace)
    await client.wait_for_note(HISTORY_CHANGED, lambda p: p.get("scope") == "user")
    assert [r["door"] for r in await user_records(client)] == ["cli"]
    await cli_elsewhere("review", "--user", "reject", str(staged_id), cwd=workspace)
    await client.wait_for_note(
        REVIEW_CHANGED, lambda p: p.get("scope") == "user" and p["count"] == 0
    )
    assert path.read_text() == "- a\n- Tabs, not spaces\n"
    assert not memory_path(workspace, "MEMORY.md").exists()


# ---- attacks -----------------------------------------------------------------------------
async def test_a_user_memory_never_written_has_an_empty_history_and_nothing_is_made(
    client: MetisClient, user_config_home: Path, workspace: Path
) -> None:
    await client.start_session([workspace])
    assert await client.command("metis.history", USER) == {"records": [], "archived": []}
    assert await client.command("metis.review", USER) == {"on": False, "staged": []}
    missing = await client.command_error("metis.undo", {**USER, "id": 1})
    assert data(missing)["code"] == "not_found"
    assert list(user_config_home.iterdir()) == []  # a look creates no folder


async def test_a_user_memory_folder_others_may_write_is_refused_in_its_words(
    client: MetisClient, user_config_home: Path, workspace: Path
) -> None:
    path, added = await one_user_write(client, user_config_home, workspace, "")
    path.parent.chmod(0o777)  # another account could have put what the log holds there
    try:
        error = await client.command_error("metis.undo", {**USER, "id": added["id"]})
    finally:
        path.parent.chmod(0o700)
    assert error.code == REQUEST_FAILED
    assert data(error)["code"] == "storage_error"
    assert (
        "is writable by other users (mode 0777), so nothing in it was read or written as your "
        "user memory" in error.message
    )
    assert path.read_text() == f"{ENTRY}\n"
