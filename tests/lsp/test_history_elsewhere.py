"""The write log's news from elsewhere, over real stdio: an agent in another process (the
CLI in Claude Code's shell) stages a change, or the person accepts or rejects one in a
terminal, and the editor is told (`metis/reviewChanged`, from the inbox stamp the server
watches); and the person's own save in the editor is logged as theirs, where a change no
buffer holds stays an outside edit."""

from __future__ import annotations

import asyncio
import functools
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import mcp
from lsprotocol import types
from mcp_types import Implementation

from metis_memory.hosts.actor import MARKERS
from metis_memory.store.files import MemoryFile
from metis_memory.store.memory_store import MemoryStore
from metis_memory.store.provenance import Provenance
from metis_memory.tools.history import staged_json
from support.lsp_session import SERVER_ENV, MetisClient
from support.lsp_values import file_uri
from support.mcp_stdio import mcp_server
from support.memory_files import write_memory
from support.waits import WAIT_S, Deadline

HISTORY_CHANGED, REVIEW_CHANGED = "metis/historyChanged", "metis/reviewChanged"

AGENT = Provenance("mcp", "claude-code 2.1.4")
CLAUDE = {"CLAUDECODE": "1", "CLAUDE_CODE_SESSION_ID": "5f0c2a7e-claude-session"}
"""What Claude Code's Bash tool gives a command: the CLI run with it is Claude Code's."""


async def cli(workspace: Path, *args: str, env: dict[str, str] | None = None) -> Any:
    """`metis-memory ARGS --json -w WORKSPACE` in another process: a person's terminal, or an
    agent's shell with `env`."""
    base = {k: v for k, v in SERVER_ENV.items() if k not in MARKERS and k != "AI_AGENT"}
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "metis_memory",
        *args,
        "--json",
        "-w",
        str(workspace),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**base, **(env or {})},
    )
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 0, f"{args} exited {process.returncode}: {err.decode()}"
    return json.loads(out)


async def start(client: MetisClient, workspace: Path) -> None:
    """Initialize as VS Code would, and wait for the server's first look at the folder."""
    await client.start_session([workspace])
    await client.wait_for_note("metis/usageChanged", lambda p: True)


async def add(client: MetisClient, entry: str, **extra: object) -> Any:
    return await client.command("metis.memoryAdd", {"file": "MEMORY.md", "entry": entry, **extra})


def more_than(client: MetisClient, method: str, count: int) -> bool:
    return len(client.notes[method]) > count


async def history_until(
    client: MetisClient,
    holds: Callable[[list[dict[str, Any]]], bool],
    what: str,
    file: str = "MEMORY.md",
) -> list[dict[str, Any]]:
    """Look at the file's history after each `metis/historyChanged` until `holds(records)`."""
    deadline = Deadline(WAIT_S, what)
    while True:
        seen = len(client.notes[HISTORY_CHANGED])
        found = (await client.command("metis.history", {"file": file}))["records"]
        if holds(found):
            return list(found)
        await client.wait_until(
            functools.partial(more_than, client, HISTORY_CHANGED, seen),
            f"a metis/historyChanged, for {what}",
            timeout=max(deadline.remaining(), 0.01),
        )


async def type_in(client: MetisClient, path: Path, text: str) -> None:
    """Type `text` into the buffer, as the person did some time before saving: a request
    answered after the change (the server takes messages in order) means it was taken."""
    client.replace_all(path, text)
    await client.command("metis.review", {})


def write_at_once(path: Path, text: str) -> None:
    """Write the file whole, as one change (beside it, then renamed onto it): a write in
    place can be seen half done, emptied first, and that is an outside edit of its own."""
    staged = path.with_name(f".{path.name}.staged")
    staged.write_text(text, encoding="utf-8")
    staged.replace(path)


def told_saved(client: MetisClient, path: Path) -> None:
    client.text_document_did_save(
        types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri=file_uri(path)))
    )


def save(client: MetisClient, path: Path) -> None:
    """Write the buffer to disk and tell the server, as an editor's save does."""
    write_at_once(path, client.texts[file_uri(path)])
    told_saved(client, path)


def counts(client: MetisClient) -> list[int]:
    return [note["count"] for note in client.notes[REVIEW_CHANGED]]


# ---- the review inbox, changed by other processes --------------------------------------------
async def test_a_change_an_agent_stages_in_another_process_is_announced(
    client: MetisClient, workspace: Path
) -> None:
    memory = write_memory(workspace, "MEMORY.md", "# Memory\n")
    await start(client, workspace)
    await cli(workspace, "review", "on")  # begins the log: .metis/history/ made meanwhile
    answer = await cli(workspace, "add", "MEMORY.md", "- uses pnpm", env=CLAUDE)
    staged = answer["staged"]
    assert (staged["door"], staged["actor"]) == ("cli", "claude-code")
    note = await client.wait_for_note(REVIEW_CHANGED, lambda p: True)
    assert note == {"workspace": file_uri(workspace), "count": 1, "arrived": staged}
    assert memory.read_bytes() == b"# Memory\n"

    accepted = await cli(workspace, "review", "accept", str(staged["id"]))
    assert accepted["after_hash"]
    done = await client.wait_for_note(REVIEW_CHANGED, lambda p: p["count"] == 0)
    assert done == {"workspace": file_uri(workspace), "count": 0, "arrived": None}
    assert memory.read_bytes() == b"# Memory\n- uses pnpm\n"
    # The accepted write is in the history the editor is told of, as the agent's.
    newest = (await history_until(client, lambda r: bool(r), "the accepted write"))[0]
    assert (newest["door"], newest["actor"]) == ("cli", "claude-code")
    # Once each: a sentinel staged last is the next note, so nothing came twice meanwhile.
    sentinel = (await cli(workspace, "add", "MEMORY.md", "- the sentinel", env=CLAUDE))["staged"]
    await client.wait_for_note(REVIEW_CHANGED, lambda p: p["arrived"] == sentinel)
    assert counts(client) == [1, 0, 1]


async def test_a_change_an_mcp_agent_stages_is_announced(
    client: MetisClient, workspace: Path
) -> None:
    """The MCP server, another process the host started, stages the write its client asks."""
    memory = write_memory(workspace, "MEMORY.md", "# Memory\n")
    await start(client, workspace)
    await client.command("metis.setReview", {"on": True})
    info = Implementation(name="metis-test-client", version="9.9.9")
    async with mcp.Client(mcp_server(str(workspace)), client_info=info) as agent:
        r = await agent.call_tool("memory_add", {"file": "MEMORY.md", "entry": "- uses pnpm"})
        assert not r.is_error, r.content
    note = await client.wait_for_note(REVIEW_CHANGED, lambda p: True)
    arrived = note["arrived"]
    assert note["count"] == 1 and arrived["added"] == ["- uses pnpm"]
    assert (arrived["door"], arrived["actor"]) == ("mcp", "metis-test-client 9.9.9")
    assert arrived["person"] == "metis-test-client 9.9.9 through memory_add over MCP"
    assert memory.read_bytes() == b"# Memory\n"
    await client.command("metis.reviewReject", {"id": arrived["id"]})
    await client.wait_for_note(REVIEW_CHANGED, lambda p: p["count"] == 0)
    assert memory.read_bytes() == b"# Memory\n"


async def test_what_waited_before_the_server_began_is_not_news(
    client: MetisClient, workspace: Path
) -> None:
    write_memory(workspace, "MEMORY.md", "# Memory\n")
    await cli(workspace, "review", "on")
    older = (await cli(workspace, "add", "MEMORY.md", "- older", env=CLAUDE))["staged"]
    await start(client, workspace)
    newer = (await cli(workspace, "add", "MEMORY.md", "- newer", env=CLAUDE))["staged"]
    note = await client.wait_for_note(REVIEW_CHANGED, lambda p: True)
    assert note == {"workspace": file_uri(workspace), "count": 2, "arrived": newer}
    # Rejected in a terminal: the count only went down.
    await cli(workspace, "review", "reject", str(older["id"]))
    note = await client.wait_for_note(REVIEW_CHANGED, lambda p: p["count"] == 1)
    assert note["arrived"] is None
    assert counts(client) == [2, 1]


async def test_a_change_staged_as_the_server_begins_is_news(
    client: MetisClient, workspace: Path
) -> None:
    """Staged after the server took the folder but before its watch was in place: the
    watch's first look is no news only for what waited before."""
    write_memory(workspace, "MEMORY.md", "# Memory\n")
    store = MemoryStore(workspace)
    store.set_review(True)
    before = store.add_entry(MemoryFile.MEMORY, "- before", by=AGENT, stage=True).staged
    await client.start_session([workspace])
    # Sent once `initialized` was taken (the folder with it), likely before the watch is in
    # place (it is set up in the watcher's thread).
    await client.wait_for_note("metis/usageChanged", lambda p: True)
    staged = store.add_entry(MemoryFile.MEMORY, "- as it began", by=AGENT, stage=True).staged
    assert before is not None and staged is not None
    note = await client.wait_for_note(REVIEW_CHANGED, lambda p: True)
    assert note == {
        "workspace": file_uri(workspace),
        "count": 2,
        "arrived": staged_json(staged),
    }


async def test_the_servers_own_staging_and_accepting_are_announced_once(
    client: MetisClient, workspace: Path
) -> None:
    """The server's own writes rewrite the inbox stamp too: what the watcher then sees was
    already told."""
    write_memory(workspace, "MEMORY.md", "# Memory\n")
    await start(client, workspace)
    await client.command("metis.setReview", {"on": True})
    answer = await add(client, "- by the chat agent", via="languageModelTool")
    staged = answer["staged"]
    await client.wait_for_note(REVIEW_CHANGED, lambda p: p["count"] == 1)
    await client.command("metis.reviewAccept", {"id": staged["id"]})
    await client.wait_for_note(REVIEW_CHANGED, lambda p: p["count"] == 0)
    sentinel = (await cli(workspace, "add", "MEMORY.md", "- the sentinel", env=CLAUDE))["staged"]
    note = await client.wait_for_note(REVIEW_CHANGED, lambda p: p["arrived"] == sentinel)
    assert note["count"] == 1
    assert [n["arrived"] for n in client.notes[REVIEW_CHANGED]] == [staged, None, sentinel]


# ---- the person's save -------------------------------------------------------------------------
async def test_a_save_in_the_editor_is_logged_as_the_persons_edit(
    client: MetisClient, workspace: Path
) -> None:
    memory = write_memory(workspace, "MEMORY.md", "# Memory\n")
    await start(client, workspace)
    sync = client.initialize_result and client.initialize_result.capabilities.text_document_sync
    assert isinstance(sync, types.TextDocumentSyncOptions) and sync.save, "didSave not asked"
    await add(client, "- a")  # the log begins
    client.open(memory)
    await type_in(client, memory, "# Memory\n- a\n- typed by hand\n")
    save(client, memory)
    found = await history_until(
        client, lambda r: r[0]["operation"] != "add", "the save in the history"
    )
    saved = found[0]
    assert (saved["operation"], saved["door"], saved["actor"]) == ("edit", "editor", "user")
    assert saved["added"] == ["- typed by hand"] and saved["removed"] == []
    assert [r["operation"] for r in found] == ["edit", "add"], "recorded once, never outside"
    note = client.notes[HISTORY_CHANGED][-1]
    assert note == {"workspace": file_uri(workspace), "file": "MEMORY.md"}
    assert saved["person"] == "You in the editor"


async def test_a_save_the_watcher_sees_before_its_notification_waits_for_it(
    client: MetisClient, workspace: Path
) -> None:
    """The editor wrote the file; its didSave comes later. The watcher's look in between
    leaves a disk that reads as the buffer to the save notification."""
    memory = write_memory(workspace, "MEMORY.md", "# Memory\n")
    user = write_memory(workspace, "USER.md", "# User\n")
    await start(client, workspace)
    await add(client, "- a")
    await client.command("metis.memoryAdd", {"file": "USER.md", "entry": "- likes tests"})
    client.open(memory)
    await type_in(client, memory, "# Memory\n- a\n- typed by hand\n")
    write_at_once(memory, client.texts[file_uri(memory)])  # saved, not yet told
    write_at_once(user, "# User\n- likes tests\n- from git pull\n")
    # A look that began after both writes has seen MEMORY.md as saved, and left it.
    await history_until(
        client,
        lambda r: bool(r) and r[0]["operation"] == "outside",
        "USER.md's outside edit",
        "USER.md",
    )
    assert [r["operation"] for r in await history_until(client, bool, "MEMORY.md's log")] == [
        "add"
    ], "the saved disk was taken for an outside edit"
    told_saved(client, memory)
    found = await history_until(client, lambda r: len(r) == 2, "the save in the history")
    assert (found[0]["operation"], found[0]["door"], found[0]["actor"]) == (
        "edit",
        "editor",
        "user",
    )
    assert found[0]["added"] == ["- typed by hand"]


async def test_a_disk_no_buffer_holds_is_an_outside_edit_even_on_a_save(
    client: MetisClient, workspace: Path
) -> None:
    """Another program wrote between the editor's save and its notification, or the buffer
    is open and unsaved while `git pull` writes: neither is the person's."""
    memory = write_memory(workspace, "MEMORY.md", "# Memory\n")
    await start(client, workspace)
    await add(client, "- a")
    client.open(memory)
    await type_in(client, memory, "# Memory\n- a\n- typed, not saved\n")
    write_at_once(memory, "# Memory\n- a\n- from git pull\n")
    found = await history_until(
        client, lambda r: r[0]["operation"] != "add", "the outside edit in the history"
    )
    assert (found[0]["operation"], found[0]["door"]) == ("outside", "outside")
    assert found[0]["person"] == "An outside edit"

    write_at_once(memory, "# Memory\n- a\n- another program's\n")
    told_saved(client, memory)
    found = await history_until(
        client, lambda r: r[0]["added"] == ["- another program's"], "the second outside edit"
    )
    assert (found[0]["operation"], found[0]["door"]) == ("outside", "outside")
    assert [r["operation"] for r in found] == ["outside", "outside", "add"]


async def test_a_save_keeps_its_byte_order_mark_and_crlf_and_is_still_the_persons(
    client: MetisClient, workspace: Path
) -> None:
    """Windows-made files: the disk keeps its BOM, which the editor's buffer never shows, and
    its CRLF line ends, which the buffer has; unicode entries are compared as they are."""
    memory = write_memory(workspace, "MEMORY.md", "\ufeff# Memory\r\n".encode())
    await start(client, workspace)
    await add(client, "- a")
    client.open(memory, memory.read_bytes().decode("utf-8").removeprefix("\ufeff"))
    typed = "# Memory\r\n- a\r\n- naïve café 😀 — typed\r\n"
    await type_in(client, memory, typed)
    write_at_once(memory, "\ufeff" + typed)
    told_saved(client, memory)
    found = await history_until(client, lambda r: len(r) == 2, "the save in the history")
    assert (found[0]["operation"], found[0]["door"], found[0]["actor"]) == (
        "edit",
        "editor",
        "user",
    )
    assert found[0]["added"] == ["- naïve café 😀 — typed"]


def test_a_buffer_typed_and_saved_while_a_look_waits_for_the_lock_is_left_to_the_save(
    tmp_path: Path,
) -> None:
    """The watcher's look at the log runs in a worker thread, and waits for the store's lock
    while another writer holds it; meanwhile the person types and saves. The look compares
    the disk with the buffers as they are then, not as they were when it began (it took
    that save for an outside edit)."""
    import fcntl
    import threading

    from metis_memory.lsp.features.history import LatestTexts, newest_records
    from metis_memory.store.atomic import LOCK_NAME

    store = MemoryStore(tmp_path)
    store.add_entry(MemoryFile.MEMORY, "- a", by=Provenance("editor", "user"))
    (first,) = store.history()
    key = (str(tmp_path), MemoryFile.MEMORY)
    open_texts: dict[tuple[str, MemoryFile], tuple[str, ...]] = {key: ("- a\n",)}
    buffers = {MemoryFile.MEMORY: LatestTexts(open_texts, key, ("- a\n",))}
    found: list[dict[MemoryFile, tuple[int, bool]]] = []
    with open(tmp_path / ".metis" / LOCK_NAME, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another writer holds the lock
        look = threading.Thread(target=lambda: found.append(newest_records(store, buffers)))
        look.start()
        typed = "- a\n- typed and saved meanwhile\n"
        open_texts[key] = (typed,)  # the loop takes the person's typing
        write_at_once(tmp_path / ".metis" / "MEMORY.md", typed)  # and their save
        fcntl.flock(lock, fcntl.LOCK_UN)
        look.join(WAIT_S)
    assert not look.is_alive(), f"the look did not end within {WAIT_S} s"
    assert found == [{MemoryFile.MEMORY: (first.id, False)}], "taken for an outside edit"
    assert [r.operation for r in store.history()] == ["add"]
