"""The write log over real stdio: who wrote (the palette is the person, `via` the chat agent),
the history, a record's diff, blame and the hover's line, undo, restore, put-back, the
review inbox, and outside edits seen by the watcher."""

from __future__ import annotations

import functools
import hashlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lsprotocol import types
from pytest_lsp import client_capabilities

from metis_memory.lsp.features.hover_lens import markdown_escaped
from support.lsp_session import MetisClient, hover
from support.lsp_values import file_uri
from support.memory_files import memory_path, write_memory
from support.waits import WAIT_S, Deadline

INVALID_PARAMS, REQUEST_FAILED = -32602, -32803
HISTORY_CHANGED, REVIEW_CHANGED = "metis/historyChanged", "metis/reviewChanged"


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def plain_text_capabilities() -> types.ClientCapabilities:
    """A client whose hovers are plain text: the hover's words as a person reads them."""
    capabilities = client_capabilities("visual-studio-code")
    assert capabilities.text_document is not None and capabilities.text_document.hover
    capabilities.text_document.hover.content_format = [types.MarkupKind.PlainText]
    return capabilities


async def start(
    client: MetisClient,
    workspace: Path,
    *,
    capabilities: types.ClientCapabilities | None = None,
    client_info: types.ClientInfo | None = None,
) -> None:
    """Initialize as VS Code would (with its `clientInfo` when given), and wait for the
    server's first look at the folder (its usage)."""
    result = await client.initialize_session(
        types.InitializeParams(
            capabilities=capabilities or client_capabilities("visual-studio-code"),
            client_info=client_info,
            root_uri=file_uri(workspace),
            workspace_folders=[types.WorkspaceFolder(uri=file_uri(workspace), name="ws")],
        )
    )
    client.initialize_result = result
    await client.wait_for_note("metis/usageChanged", lambda p: True)


async def add(client: MetisClient, entry: str, **extra: object) -> Any:
    return await client.command("metis.memoryAdd", {"file": "MEMORY.md", "entry": entry, **extra})


async def records(client: MetisClient, **args: object) -> list[dict[str, Any]]:
    result = await client.command("metis.history", {"file": "MEMORY.md", **args})
    return list(result["records"])


def more_than(client: MetisClient, method: str, count: int) -> bool:
    return len(client.notes[method]) > count


async def history_until(
    client: MetisClient, holds: Callable[[list[dict[str, Any]]], bool], what: str
) -> list[dict[str, Any]]:
    """Look at the history after each `metis/historyChanged` until `holds(records)`."""
    deadline = Deadline(WAIT_S, what)
    while True:
        seen = len(client.notes[HISTORY_CHANGED])
        found = await records(client)
        if holds(found):
            return found
        await client.wait_until(
            functools.partial(more_than, client, HISTORY_CHANGED, seen),
            f"a metis/historyChanged, for {what}",
            timeout=max(deadline.remaining(), 0.01),
        )


async def hover_text(client: MetisClient, path: Path, line: int) -> str | None:
    shown = await hover(client, path, line, 2)
    if shown is None:
        return None
    assert isinstance(shown.contents, types.MarkupContent)
    return shown.contents.value


# ---- who wrote ---------------------------------------------------------------------------
async def test_the_palettes_write_is_the_persons_and_is_never_staged(
    client: MetisClient, workspace: Path
) -> None:
    await start(client, workspace)
    assert await client.command("metis.setReview", {"on": True}) == {"on": True}
    result = await add(client, "- uses pnpm")
    assert "staged" not in result
    assert memory_path(workspace, "MEMORY.md").read_bytes() == b"- uses pnpm\n"
    note = await client.wait_for_note(HISTORY_CHANGED, lambda p: True)
    assert note == {"workspace": file_uri(workspace), "file": "MEMORY.md"}
    (record,) = await records(client)
    assert (record["operation"], record["door"], record["actor"]) == ("add", "editor", "user")
    assert record["added"] == ["- uses pnpm"] and record["removed"] == []
    assert record["person"] == "You in the editor"
    assert record["summary"] == "added “- uses pnpm”"
    assert client.notes[REVIEW_CHANGED] == []
    assert (await client.command("metis.review", {}))["staged"] == []


async def test_a_chat_agents_write_is_named_after_the_editor(
    client: MetisClient, workspace: Path
) -> None:
    await start(client, workspace, client_info=types.ClientInfo("Visual Studio Code", "1.96.0"))
    result = await add(client, "- uses pnpm", via="languageModelTool")
    assert result["person_text"].startswith("Added entry to MEMORY.md: 0 B → 12 B")
    (record,) = await records(client)
    assert (record["door"], record["actor"]) == ("language-model-tool", "VS Code 1.96.0 chat agent")
    assert record["person"] == "VS Code 1.96.0 chat agent through memory_add in VS Code chat"


async def test_via_takes_only_the_language_model_tool(client: MetisClient, workspace: Path) -> None:
    await start(client, workspace)
    error = await client.command_error(
        "metis.memoryAdd", {"file": "MEMORY.md", "entry": "- x", "via": "mcp"}
    )
    assert error.code == INVALID_PARAMS
    assert "'via'" in error.message and '"via"?: "languageModelTool"' in error.message
    assert not memory_path(workspace, "MEMORY.md").exists()


# ---- the review inbox ----------------------------------------------------------------------
async def test_a_chat_agents_write_waits_for_review_and_is_accepted(
    client: MetisClient, workspace: Path
) -> None:
    memory = write_memory(workspace, "MEMORY.md", "# Memory\n")
    await start(client, workspace)
    await client.command("metis.setReview", {"on": True})
    answer = await add(client, "- uses pnpm", via="languageModelTool")
    assert memory.read_bytes() == b"# Memory\n"  # untouched until accepted
    staged = answer["staged"]
    assert staged["added"] == ["- uses pnpm"] and staged["door"] == "language-model-tool"
    assert (staged["before"], staged["after"]) == ("# Memory\n", "# Memory\n- uses pnpm\n")
    assert answer["agent_text"] == (
        f"Staged for the user's review as change #{staged['id']}: MEMORY.md is unchanged until "
        "the user accepts it (they may reject it). Do not retry this write; carry on with your "
        "task."
    )
    assert answer["person_text"] == (
        f"Change #{staged['id']} to MEMORY.md waits for your review: accept or reject it in "
        f"Memory History, or run `metis-memory review accept {staged['id']}`."
    )
    arrived = await client.wait_for_note(REVIEW_CHANGED, lambda p: True)
    assert arrived == {"workspace": file_uri(workspace), "count": 1, "arrived": staged}
    assert await client.command("metis.review", {}) == {"on": True, "staged": [staged]}

    accepted = await client.command("metis.reviewAccept", {"id": staged["id"]})
    assert memory.read_bytes() == b"# Memory\n- uses pnpm\n"
    assert accepted["after_hash"] == sha(b"# Memory\n- uses pnpm\n")
    assert accepted["person_text"] == (
        f"Accepted change #{staged['id']} by VS Code chat agent. Added entry to MEMORY.md: "
        "9 B → 21 B (soft cap 2,048 B, hard cap 4,096 B)."
    )
    done = await client.wait_for_note(REVIEW_CHANGED, lambda p: p["count"] == 0)
    assert done == {"workspace": file_uri(workspace), "count": 0, "arrived": None}
    updated = await client.wait_for_note("metis/memoryUpdated", lambda p: True)
    assert updated["after_hash"] == sha(b"# Memory\n- uses pnpm\n")
    newest = (await history_until(client, lambda r: bool(r), "the accepted write"))[0]
    assert (newest["door"], newest["actor"]) == ("language-model-tool", "VS Code chat agent")
    assert (await client.command("metis.review", {}))["staged"] == []


async def test_a_staged_consolidation_is_refused_once_the_file_changed(
    client: MetisClient, workspace: Path
) -> None:
    memory = write_memory(workspace, "MEMORY.md", "- a\n- b\n")
    await start(client, workspace)
    await client.command("metis.setReview", {"on": True})
    answer = await client.command(
        "metis.memoryConsolidate",
        {"file": "MEMORY.md", "content": "- a\n", "via": "languageModelTool"},
    )
    staged_id = answer["staged"]["id"]
    await add(client, "- c")  # the person's own write lands meanwhile
    error = await client.command_error("metis.reviewAccept", {"id": staged_id})
    assert error.code == REQUEST_FAILED
    assert isinstance(error.data, dict) and error.data["code"] == "conflict"
    assert error.message == (
        f"MEMORY.md changed since change #{staged_id} (a consolidation by VS Code chat agent) "
        "was staged: accepting it now would drop what was written since. Nothing was written. "
        f"Reject it (`metis-memory review reject {staged_id}`) and ask the agent to "
        "consolidate again."
    )
    assert memory.read_bytes() == b"- a\n- b\n- c\n"
    assert [c["id"] for c in (await client.command("metis.review", {}))["staged"]] == [staged_id]


async def test_a_rejected_change_is_dropped_and_the_file_never_touched(
    client: MetisClient, workspace: Path
) -> None:
    memory = write_memory(workspace, "MEMORY.md", "- a\n")
    await start(client, workspace)
    await client.command("metis.setReview", {"on": True})
    answer = await client.command(
        "metis.memoryReplace",
        {"file": "MEMORY.md", "old": "- a", "new": "- b", "via": "languageModelTool"},
    )
    staged_id = answer["staged"]["id"]
    await client.wait_for_note(REVIEW_CHANGED, lambda p: p["count"] == 1)
    assert await client.command("metis.reviewReject", {"id": staged_id}) == {
        "rejected": staged_id,
        "message": f"Rejected change #{staged_id} by VS Code chat agent: MEMORY.md is unchanged.",
    }
    assert memory.read_bytes() == b"- a\n"
    note = await client.wait_for_note(REVIEW_CHANGED, lambda p: p["count"] == 0)
    assert note["arrived"] is None
    again = await client.command_error("metis.reviewReject", {"id": staged_id})
    assert isinstance(again.data, dict) and again.data["code"] == "not_found"
    assert again.message.startswith(f"no change #{staged_id} waits for review")
    gone = await client.command_error("metis.reviewAccept", {"id": staged_id})
    assert isinstance(gone.data, dict) and gone.data["code"] == "not_found"
    assert memory.read_bytes() == b"- a\n"


async def test_review_off_the_chat_agent_writes_at_once(
    client: MetisClient, workspace: Path
) -> None:
    await start(client, workspace)
    assert await client.command("metis.review", {}) == {"on": False, "staged": []}
    await client.command("metis.setReview", {"on": True})
    assert await client.command("metis.setReview", {"on": False}) == {"on": False}
    result = await add(client, "- uses pnpm", via="languageModelTool")
    assert "staged" not in result
    assert memory_path(workspace, "MEMORY.md").read_bytes() == b"- uses pnpm\n"


# ---- undo, restore, put back -------------------------------------------------------------------
async def test_undo_takes_one_write_back_and_is_recorded(
    client: MetisClient, workspace: Path
) -> None:
    memory = write_memory(workspace, "MEMORY.md", "# Memory\n")
    await start(client, workspace)
    await add(client, "- a")
    await add(client, "- b")
    first = (await records(client))[-1]
    result = await client.command("metis.undo", {"id": first["id"]})
    assert memory.read_bytes() == b"# Memory\n- b\n"
    assert result["operation"] == "consolidate"
    assert result["after_hash"] == sha(b"# Memory\n- b\n")
    assert result["person_text"] == (
        f"Undid change #{first['id']} to MEMORY.md: 17 B → 13 B (soft cap 2,048 B, hard cap "
        "4,096 B)."
    )
    await client.wait_for_note(
        "metis/memoryUpdated", lambda p: p["after_hash"] == sha(memory.read_bytes())
    )
    newest = (await records(client))[0]
    assert (newest["operation"], newest["door"], newest["actor"]) == ("undo", "editor", "user")
    assert newest["removed"] == ["- a"]
    assert newest["detail"] == f"undoes #{first['id']}"


async def test_undo_is_refused_where_a_later_write_changed_the_entry(
    client: MetisClient, workspace: Path
) -> None:
    memory = write_memory(workspace, "MEMORY.md", "# Memory\n")
    await start(client, workspace)
    await add(client, "- uses pnpm 8")
    await add(client, "- other")
    added = (await records(client))[-1]
    await client.command(
        "metis.memoryReplace", {"file": "MEMORY.md", "old": "pnpm 8", "new": "pnpm 9"}
    )
    before = memory.read_bytes()
    error = await client.command_error("metis.undo", {"id": added["id"]})
    assert error.code == REQUEST_FAILED
    assert isinstance(error.data, dict) and error.data["code"] == "conflict"
    assert error.message == (
        f"change #{added['id']} to MEMORY.md cannot be undone: a later write changed or removed "
        "what it added (“- uses pnpm 8”). Nothing was written. See `metis-memory log` for the "
        "later writes."
    )
    assert memory.read_bytes() == before
    missing = await client.command_error("metis.undo", {"id": 999})
    assert isinstance(missing.data, dict) and missing.data["code"] == "not_found"
    assert missing.message.startswith("there is no change #999 in the history")


async def test_ids_the_log_cannot_hold_name_nothing(client: MetisClient, workspace: Path) -> None:
    """SQLite's integers stop at 2**63 - 1: a larger id is refused, never a server fault."""
    await start(client, workspace)
    await add(client, "- a")
    for command in ("metis.undo", "metis.restore", "metis.historyDiff", "metis.reviewAccept"):
        error = await client.command_error(command, {"id": 10**30})
        assert error.code == INVALID_PARAMS, command
        assert "'id'" in error.message
    error = await client.command_error("metis.unarchive", {"id": f"{10**30}:1"})
    assert isinstance(error.data, dict) and error.data["code"] == "not_found"
    assert error.message == f"there is no change #{10**30} in the history: nothing was written."
    assert memory_path(workspace, "MEMORY.md").read_bytes() == b"- a\n"


async def test_undo_is_refused_under_unsaved_edits(client: MetisClient, workspace: Path) -> None:
    memory = write_memory(workspace, "MEMORY.md", "# Memory\n")
    await start(client, workspace)
    await add(client, "- a")
    (record,) = await records(client)
    client.open(memory)
    client.replace_all(memory, "# Memory\n- a\n- typed, not saved\n")
    error = await client.command_error("metis.undo", {"id": record["id"]})
    assert isinstance(error.data, dict) and error.data["code"] == "unsaved_changes"
    assert "MEMORY.md has unsaved changes in the editor" in error.message
    assert memory.read_bytes() == b"# Memory\n- a\n"


async def test_restore_puts_back_the_version_after_a_write(
    client: MetisClient, workspace: Path
) -> None:
    memory = write_memory(workspace, "MEMORY.md", "")
    await start(client, workspace)
    await add(client, "- a")
    await add(client, "- b")
    first = (await records(client))[-1]
    result = await client.command("metis.restore", {"id": first["id"]})
    assert memory.read_bytes() == b"- a\n"
    assert result["person_text"].startswith(
        f"Restored MEMORY.md as it was after change #{first['id']}: 8 B → 4 B"
    )
    again = await client.command_error("metis.restore", {"id": first["id"]})
    assert again.message == (
        f"MEMORY.md is already as it was after change #{first['id']}: nothing was written."
    )
    assert memory.read_bytes() == b"- a\n"


async def test_what_a_consolidation_dropped_is_archived_and_put_back(
    client: MetisClient, workspace: Path
) -> None:
    memory = write_memory(workspace, "MEMORY.md", "")
    await start(client, workspace)
    await add(client, "- keep")
    await add(client, "- drop me")
    await client.command("metis.memoryConsolidate", {"file": "MEMORY.md", "content": "- keep\n"})
    shown = await client.command("metis.history", {})
    (archived,) = shown["archived"]
    consolidation = shown["records"][0]
    assert archived["text"] == "- drop me" and archived["record"] == consolidation["id"]
    assert archived["id"] == f"{consolidation['id']}:1"
    result = await client.command("metis.unarchive", {"id": archived["id"]})
    assert memory.read_bytes() == b"- keep\n- drop me\n"
    assert result["person_text"].startswith("Put an archived entry back in MEMORY.md: 7 B → 17 B")
    assert (await client.command("metis.history", {}))["archived"] == []
    bad = await client.command_error("metis.unarchive", {"id": "drop me"})
    assert isinstance(bad.data, dict) and bad.data["code"] == "invalid_input"
    assert bad.message.startswith("'drop me' is not an archived entry's id (they look like 12:1)")


async def test_a_records_diff_is_redacted_and_titled(client: MetisClient, workspace: Path) -> None:
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    await start(client, workspace)
    await add(client, "- a")
    write_memory(workspace, "MEMORY.md", f"- a\n- token {token}\n")  # behind the server's back
    found = await history_until(
        client, lambda r: r[0]["operation"] == "outside", "the outside edit in the history"
    )
    diff = await client.command("metis.historyDiff", {"id": found[0]["id"]})
    assert diff["before"] == "- a\n"
    assert token not in diff["after"] and "[redacted" in diff["after"]
    assert diff["title"] == f"MEMORY.md: change #{found[0]['id']} by an outside edit, just now"
    assert token not in str(found[0])
    error = await client.command_error("metis.historyDiff", {"id": "1"})
    assert error.code == INVALID_PARAMS


# ---- outside edits -----------------------------------------------------------------------------
async def test_an_outside_edit_is_recorded_when_the_watcher_sees_it(
    client: MetisClient, workspace: Path
) -> None:
    await start(client, workspace)
    await add(client, "- a")
    # As `git pull` writes a file: whole, then renamed over it (written in place, the watcher
    # may look between the truncate and the write and record that too, truthfully).
    pulled = workspace / ".metis" / "MEMORY.md.pulled"
    pulled.write_text("- a\n- from git pull\n", encoding="utf-8")
    os.replace(pulled, workspace / ".metis" / "MEMORY.md")
    found = await history_until(
        client, lambda r: r[0]["operation"] == "outside", "the outside edit in the history"
    )
    outside = found[0]
    assert (outside["door"], outside["actor"]) == ("outside", "unknown")
    assert outside["added"] == ["- from git pull"]
    assert outside["person"] == "An outside edit"
    note = client.notes[HISTORY_CHANGED][-1]
    assert note == {"workspace": file_uri(workspace), "file": "MEMORY.md"}


async def test_a_folder_without_a_log_gets_none_from_an_outside_edit(
    client: MetisClient, workspace: Path
) -> None:
    """Nothing to chain to: the watcher records nothing and takes no lock (no `.lock`)."""
    write_memory(workspace, "MEMORY.md", "- a\n")
    await start(client, workspace)
    write_memory(workspace, "MEMORY.md", "- a\n- b\n")
    await client.wait_for_note(
        "metis/usageChanged", lambda p: p["usage"]["MEMORY.md"]["size_bytes"] == 8
    )
    assert await records(client) == []
    assert sorted(p.name for p in (workspace / ".metis").iterdir()) == ["MEMORY.md"]


# ---- blame and the hover -----------------------------------------------------------------------
async def test_blame_names_who_added_each_entry(client: MetisClient, workspace: Path) -> None:
    write_memory(workspace, "MEMORY.md", "# Memory\n- from before\n")
    await start(client, workspace)
    await add(client, "- mine")
    await add(client, "- the agent's", via="languageModelTool")
    blamed = (await client.command("metis.blame", {"file": "MEMORY.md"}))["entries"]
    assert [(b["line"], b["text"], b["origin"], b["door"]) for b in blamed] == [
        (2, "- from before", "before-log", None),
        (3, "- mine", "log", "editor"),
        (4, "- the agent's", "log", "language-model-tool"),
    ]
    assert [b["hover"] for b in blamed] == [
        "Added before the history began",
        "Added by you in the editor, just now",
        "Added by VS Code chat agent through memory_add in VS Code chat, just now",
    ]


async def test_the_hover_on_an_entry_says_who_added_it(
    client: MetisClient, workspace: Path
) -> None:
    memory = write_memory(workspace, "MEMORY.md", "# Memory\n\n- from before\n")
    await start(client, workspace, capabilities=plain_text_capabilities())
    client.open(memory)
    assert await hover_text(client, memory, 2) is None  # no log yet: nothing to say
    await add(client, "- uses pnpm", via="languageModelTool")
    client.replace_all(memory, memory.read_text(encoding="utf-8"))  # the editor reloads
    assert await hover_text(client, memory, 2) == "Added before the history began"
    assert await hover_text(client, memory, 3) == (
        "Added by VS Code chat agent through memory_add in VS Code chat, just now"
    )
    assert await hover_text(client, memory, 1) is None  # a blank line
    # Unsaved edits: an entry typed above moves the others; they keep their blame.
    client.replace_all(memory, "# Memory\n\n- typed, not saved\n- from before\n- uses pnpm\n")
    assert await hover_text(client, memory, 2) == "Not saved yet"
    assert await hover_text(client, memory, 3) == "Added before the history began"
    assert await hover_text(client, memory, 4) == (
        "Added by VS Code chat agent through memory_add in VS Code chat, just now"
    )
    shown = await hover(client, memory, 4, 0)
    assert shown is not None and shown.range == types.Range(
        types.Position(4, 0), types.Position(4, 11)
    )


async def test_the_hover_on_a_title_that_is_an_entry_has_both(
    client: MetisClient, workspace: Path
) -> None:
    memory = write_memory(workspace, "MEMORY.md", "")
    await start(client, workspace, capabilities=plain_text_capabilities())
    await add(client, "- first")
    client.open(memory)
    text = await hover_text(client, memory, 0)
    assert text is not None
    assert text.startswith("MEMORY.md — within caps (editor buffer, UTF-8 bytes)")
    assert text.endswith("\n\nAdded by you in the editor, just now")


async def test_a_markdown_hover_shows_an_agents_name_as_written(
    client: MetisClient, workspace: Path
) -> None:
    """A client names itself: `[x](https://…)` must not become a link in the hover."""
    memory = write_memory(workspace, "MEMORY.md", "")
    await start(client, workspace, client_info=types.ClientInfo("[x](https://e.example)", "*1*"))
    await add(client, "- uses pnpm", via="languageModelTool")
    client.open(memory)
    shown = await hover(client, memory, 0, 2)
    assert shown is not None and isinstance(shown.contents, types.MarkupContent)
    assert shown.contents.kind == types.MarkupKind.Markdown
    said = "Added by [x](https://e.example) *1* chat agent through memory_add in VS Code chat"
    assert markdown_escaped(said) in shown.contents.value
    assert "\\[x\\]\\(https\\:\\/\\/e\\.example\\) \\*1\\*" in shown.contents.value
    assert "[x](" not in shown.contents.value
