"""`workspace/executeCommand`: the stable contract editors and agents call.

Every command takes one JSON object, validated by its pydantic model
(`arguments.parse`). Failures are `arguments.CommandError`s: `invalid_input` is JSON-RPC
-32602 (invalid params), every other failure -32803 (LSP RequestFailed). Writes go through
the tool dispatcher (same validation as the agent's tools, same events), in a worker
thread because the store takes a file lock and fsyncs.

`file` "user-memory" is the user memory (one USER.md read in every workspace): its writes go
through its own tools (`user_memory_add`, `user_memory_replace`, `user_memory_consolidate`), and
`workspace` is then not needed.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, TypeVar

from ...analysis.positions import utf8_size
from ...store.errors import MemoryStoreError, NotUtf8
from ...store.files import MemoryFile
from ...store.usage import Usage, read_disk
from ..arguments import CommandError, parse
from ..context import ServerContext
from ..protocol import (
    ASSEMBLE_PROMPT,
    CONSOLIDATION_PROMPT,
    MEMORY_ADD,
    MEMORY_CONSOLIDATE,
    MEMORY_EVICTION,
    MEMORY_REPLACE,
    MEMORY_UPDATED,
    OPEN_USER_MEMORY,
    READ,
    TIDY,
    USAGE,
    Command,
)
from ..usage_text import USER_MEMORY_PART, usage_json, user_memory_json
from ..views import editor_text
from ..workspaces import USER_MEMORY_NAME, Folder, WorkspaceArgumentError
from .history_notes import by_client, review_changed, write_landed

if TYPE_CHECKING:
    from ...store.events import MemoryEvent
    from ...tools import ToolExecutionError
    from ..command_args import MemoryAddArgs, MemoryConsolidateArgs, MemoryReplaceArgs

    WriteArgs = MemoryAddArgs | MemoryReplaceArgs | MemoryConsolidateArgs


T = TypeVar("T")

TOOL_OF = {
    MEMORY_ADD: "memory_add",
    MEMORY_REPLACE: "memory_replace",
    MEMORY_CONSOLIDATE: "memory_consolidate",
}
USER_TOOL_OF = {
    MEMORY_ADD: "user_memory_add",
    MEMORY_REPLACE: "user_memory_replace",
    MEMORY_CONSOLIDATE: "user_memory_consolidate",
}
_OPERATION_OF = {MEMORY_ADD: "add", MEMORY_REPLACE: "replace", MEMORY_CONSOLIDATE: "consolidate"}
USER_MEMORY = "user-memory"
"""`file` of a command about the user memory (`command_args.USER_MEMORY`)."""
_WRITES = ThreadPoolExecutor(max_workers=2, thread_name_prefix="metis-write")
"""Writes wait for the lock (up to 30 s behind a stopped holder): in a pool of their own,
they never hold up the reads (hover, usage, read, prompt) that share the default one."""


def from_store_error(exc: MemoryStoreError) -> CommandError:
    from ...tools.dispatch import to_tool_error

    return from_tool_error(to_tool_error(exc))


def from_tool_error(exc: ToolExecutionError) -> CommandError:
    """The tool's error: its text for an agent as `message`, a person's in `data`."""
    from ...tools.people import EDITOR

    return CommandError(exc.code, exc.message, exc.for_people(EDITOR))


def take_folder(ls: ServerContext, command: str, workspace: str | None) -> Folder:
    """The folder a command's `workspace` argument designates."""
    try:
        return ls.folders.resolve(workspace)
    except WorkspaceArgumentError as exc:
        raise CommandError("invalid_input", f"invalid input for {command}: {exc}") from None


def take_file(
    ls: ServerContext, command: str, file: str, workspace: str | None
) -> tuple[Folder, MemoryFile]:
    """The memory file a command's `file` (and `workspace`) designate: "user-memory" is the
    user memory, whatever the workspace (none need be open)."""
    if file == USER_MEMORY:
        return ls.folders.user, MemoryFile.USER
    return take_folder(ls, command, workspace), MemoryFile(file)


def named(folder: Folder, file: MemoryFile, *, start: bool = False) -> str:
    """How a person's message names the file: "MEMORY.md", or "your user memory" ("Your
    user memory" to begin a sentence)."""
    if not folder.user_memory:
        return file.value
    return USER_MEMORY_NAME[0].upper() + USER_MEMORY_NAME[1:] if start else USER_MEMORY_NAME


# ---- the commands ----------------------------------------------------------------
async def memory_write(
    ls: ServerContext, command: Command[WriteArgs], args: tuple[Any, ...]
) -> dict[str, object]:
    """metis.memoryAdd / memoryReplace / memoryConsolidate: the person at the editor's write,
    or (`via`) an agent's in its chat, which waits for the user's review when review is on
    (the answer is then the staged change, and `metis/reviewChanged` follows)."""
    from ...tools import ToolExecutionError
    from ...tools.people import EDITOR
    from ..command_args import MemoryConsolidateArgs, tool_input

    params = parse(command, args)
    folder, file = take_file(ls, command, params.file, params.workspace)
    await refuse_unsaved(ls, folder, file, _OPERATION_OF[command])
    dispatcher = folder.dispatcher()
    if folder.user_memory and params.via is not None:
        # An agent's write of the user memory waits for review when review is on for it, or
        # for the workspace the agent writes from (whose dispatcher holds the user memory's
        # tools too, so reviewed): one that reaches every workspace is never less reviewed.
        # An agent whose folder is not named (several open, none given) is held as review
        # on in any of them holds it: which one it works in cannot be told.
        origin = _origin(ls, params.workspace) or await in_writer(
            functools.partial(_reviewing, ls.folders.all())
        )
        if origin is not None:
            dispatcher = origin.dispatcher()
    expected = params.expectedHash if isinstance(params, MemoryConsolidateArgs) else None
    tool, given = TOOL_OF[command], tool_input(params)
    if folder.user_memory:  # its own tools: the same input less `file`
        tool = USER_TOOL_OF[command]
        del given["file"]
    write = functools.partial(
        dispatcher.dispatch, tool, given, expected_hash=expected, by=by_client(ls, params.via)
    )
    try:
        result = await in_writer(write)
    except ToolExecutionError as exc:
        raise from_tool_error(exc) from None
    written = result.write
    assert written is not None
    answer = result.to_json(EDITOR)
    staged = answer.get("staged")
    if isinstance(staged, dict):  # an agent's write waits for the user: the file is unchanged
        await review_changed(ls, folder, arrived=staged)
        return answer
    write_landed(ls, folder, written)
    return answer


def _origin(ls: ServerContext, workspace: str | None) -> Folder | None:
    """The workspace a write command's `workspace` names, if it names one."""
    try:
        return ls.folders.resolve(workspace)
    except WorkspaceArgumentError:
        return None


def _reviewing(folders: list[Folder]) -> Folder | None:
    """The first open folder with review on (each asked in a writer thread: its write log)."""
    for folder in folders:
        try:
            if folder.store.review_enabled():
                return folder
        except MemoryStoreError:
            continue  # its log cannot be read: its own writes say so
    return None


async def in_writer(write: Callable[[], T]) -> T:
    """Run a write in the writers' pool and wait for it. A write cannot be taken back once
    it is running (it may already wait for the lock): a cancelled request still gets what
    happened, not a "cancelled" that hides it."""
    job = asyncio.get_running_loop().run_in_executor(_WRITES, write)
    try:
        return await asyncio.shield(job)
    except asyncio.CancelledError:
        return await job


async def refuse_unsaved(
    ls: ServerContext, folder: Folder, file: MemoryFile, operation: str
) -> None:
    """Refuse to write under the user's edits: an open buffer that differs from disk and
    from every recent disk version (a clean buffer the editor has yet to reload is not an
    edit; the write goes to disk and the editor reloads it)."""
    documents = ls.open_documents(folder.file_key(file))
    if not documents:
        return
    try:
        snap = await asyncio.to_thread(folder.store.snapshot, file)
    except MemoryStoreError as exc:
        raise from_store_error(exc) from None
    on_disk = editor_text(snap.text)
    folder.remember_disk_text(file, on_disk)
    for doc in documents:  # any buffer of the file (it may be open under two URIs)
        text = editor_text(doc.source)  # a byte-order mark is not an edit
        if text == on_disk or folder.was_on_disk(file, text):
            continue
        raise CommandError(
            "unsaved_changes",
            f"{named(folder, file, start=True)} has unsaved changes in the editor: save or "
            "revert them first, then "
            f"retry. Nothing was written (the {operation} would have replaced the file under "
            "your edits).",
        )


async def assemble_prompt(ls: ServerContext, args: tuple[Any, ...]) -> str:
    from ...tools.redaction import redacted_prompt

    params = parse(ASSEMBLE_PROMPT, args)
    folder = take_folder(ls, ASSEMBLE_PROMPT, params.workspace)
    try:
        return await asyncio.to_thread(redacted_prompt, folder.store, params.base)
    except MemoryStoreError as exc:
        raise from_store_error(exc) from None


def consolidation_prompt(args: tuple[Any, ...]) -> str:
    """`metis.consolidationPrompt {file, text}`: what a language model is asked, so that every
    editor drafts a consolidation with the same instruction. Suspected secrets in the text
    are redacted (the draft then holds `[redacted: KIND]` where they were: applying it takes
    them out of the file)."""
    from ...analysis.consolidation_prompt import consolidation_prompt as prompt
    from ...store.files import MemoryFile
    from ...tools.redaction import redact

    params = parse(CONSOLIDATION_PROMPT, args)
    user_memory = params.file == USER_MEMORY
    file = MemoryFile.USER if user_memory else MemoryFile(params.file)
    return prompt(file, redact(params.text), user_memory=user_memory)


async def usage(ls: ServerContext, args: tuple[Any, ...]) -> dict[str, dict[str, object]]:
    """Both files of the workspace, and (`userMemory`) the user memory its prompt holds."""
    folder = take_folder(ls, USAGE, parse(USAGE, args).workspace)
    found = usage_json(await current_usage(ls, folder))
    return {**found, USER_MEMORY_PART: await user_memory_usage(ls)}


async def user_memory_usage(ls: ServerContext) -> dict[str, object]:
    """The user memory's size (its buffer's when open), where it is, and whether it is there."""
    user = ls.folders.user
    path = user.store.path(MemoryFile.USER)
    doc = ls.open_document(user.file_key(MemoryFile.USER))
    if doc is not None:
        return user_memory_json(Usage(MemoryFile.USER, utf8_size(doc.source), "buffer"), path, True)
    state = await asyncio.to_thread(read_disk, user.store, MemoryFile.USER)
    exists = state.snapshot.exists if state.snapshot is not None else True
    return user_memory_json(state.usage, path, exists)


async def open_user_memory(ls: ServerContext, args: tuple[Any, ...]) -> dict[str, object]:
    """`metis.openUserMemory {}`: where the user memory is, and whether it exists (nothing is
    created: the first write does that). A client opens `uri`, or, when it is missing, offers
    to add an entry (`metis.memoryAdd` with `file` "user-memory")."""
    parse(OPEN_USER_MEMORY, args)
    user = ls.folders.user
    path = user.store.path(MemoryFile.USER)
    answer: dict[str, object] = {"path": str(path), "uri": user.file_uri(MemoryFile.USER)}
    try:
        answer["exists"] = await asyncio.to_thread(user.store.exists, MemoryFile.USER)
    except MemoryStoreError as exc:  # there, but not to be used (another user's, a folder)
        answer["exists"] = True
        answer["error"] = from_store_error(exc).person_text
        return answer
    if not answer["exists"]:
        # Missing, or something else stands where it goes (a file named metis-memory): then
        # its first write fails, and the editor must say so before asking for an entry.
        state = await asyncio.to_thread(read_disk, user.store, MemoryFile.USER)
        error = user_memory_json(state.usage, path, False).get("error")
        if isinstance(error, str):
            answer["error"] = error
    return answer


async def read(ls: ServerContext, args: tuple[Any, ...]) -> dict[str, dict[str, object]]:
    """`memory_read` from the disk (what an agent's next prompt holds), not the buffers."""
    from ...tools.read import memory_read

    folder = take_folder(ls, READ, parse(READ, args).workspace)
    try:
        return await asyncio.to_thread(memory_read, folder.store)
    except MemoryStoreError as exc:
        raise from_store_error(exc) from None


async def current_usage(ls: ServerContext, folder: Folder) -> dict[MemoryFile, Usage]:
    """Each file's size: the open buffer's when open, else the disk's."""
    usages: dict[MemoryFile, Usage] = {}
    for file in MemoryFile:
        doc = ls.open_document(folder.file_key(file))
        if doc is not None:
            usages[file] = Usage(file, utf8_size(doc.source), "buffer")
            continue
        state = await asyncio.to_thread(read_disk, folder.store, file)
        usages[file] = state.usage  # an unreadable file carries its reason
    return usages


async def tidy(ls: ServerContext, args: tuple[Any, ...]) -> dict[str, object]:
    """The file's tidy proposal; `file` is as asked ("user-memory" for the user memory)."""
    from ...analysis.tidy import tidy as tidy_text

    params = parse(TIDY, args)
    folder, file = take_file(ls, TIDY, params.file, params.workspace)
    text = await current_text(ls, folder, file)
    content = tidy_text(text)
    return {"file": params.file, "content": content, "changed": content != text}


async def current_text(ls: ServerContext, folder: Folder, file: MemoryFile) -> str:
    """The file's text as the user sees it: the open buffer's, else the disk's."""
    doc = ls.open_document(folder.file_key(file))
    if doc is not None:
        return doc.source
    try:
        snap = await asyncio.to_thread(folder.store.snapshot, file)
    except MemoryStoreError as exc:
        raise from_store_error(exc) from None
    if snap.utf8_error_offset is not None:
        raise from_store_error(NotUtf8(file.value, snap.utf8_error_offset))
    return snap.text


# ---- events ----------------------------------------------------------------------
def forward_event(ls: ServerContext, folder: Folder, event: MemoryEvent) -> None:
    """Send a store event to the client (called in the writing thread)."""
    method = MEMORY_UPDATED if event.event_type == "memory.updated" else MEMORY_EVICTION
    payload = {**event.payload(), "workspace": folder.uri}
    ls.notify_soon(method, payload)


def register(server: ServerContext) -> None:
    """The store's commands: the three writes and the reads; every write, whoever makes it
    through this server, is forwarded to the client."""
    server.fan_out.store_events.append(lambda folder, event: forward_event(server, folder, event))

    @server.command(MEMORY_ADD)
    async def memory_add(ls: ServerContext, *args: Any) -> dict[str, object]:
        return await memory_write(ls, MEMORY_ADD, args)

    @server.command(MEMORY_REPLACE)
    async def memory_replace(ls: ServerContext, *args: Any) -> dict[str, object]:
        return await memory_write(ls, MEMORY_REPLACE, args)

    @server.command(MEMORY_CONSOLIDATE)
    async def memory_consolidate(ls: ServerContext, *args: Any) -> dict[str, object]:
        return await memory_write(ls, MEMORY_CONSOLIDATE, args)

    @server.command(ASSEMBLE_PROMPT)
    async def assemble_prompt_command(ls: ServerContext, *args: Any) -> str:
        return await assemble_prompt(ls, args)

    @server.command(CONSOLIDATION_PROMPT)
    def consolidation_prompt_command(ls: ServerContext, *args: Any) -> str:
        return consolidation_prompt(args)

    @server.command(USAGE)
    async def usage_command(ls: ServerContext, *args: Any) -> dict[str, dict[str, object]]:
        return await usage(ls, args)

    @server.command(TIDY)
    async def tidy_command(ls: ServerContext, *args: Any) -> dict[str, object]:
        return await tidy(ls, args)

    @server.command(READ)
    async def read_command(ls: ServerContext, *args: Any) -> dict[str, dict[str, object]]:
        return await read(ls, args)

    @server.command(OPEN_USER_MEMORY)
    async def open_user_memory_command(ls: ServerContext, *args: Any) -> dict[str, object]:
        return await open_user_memory(ls, args)
