"""The write log in the editor: the history and the archive, a record's diff, blame (and the
hover's line), undo, restore, putting an archived entry back, and the review inbox; and the
outside changes the `.metis/` watcher finds, recorded as they are seen.

The user memory (one USER.md read in every workspace) has a log and an inbox of its own,
beside it: a command names them with `file` "user-memory" (as the write commands name the
user memory), and acts on `Workspaces.user`, its records and changes numbered apart from
every workspace's.

Everything here reads or writes through `tools.history` and `tools.review`, off the event
loop: the store takes its lock and fsyncs, and replaying a log of 1,000 records for blame
takes a while the first time (`BlameCache` keeps each file's until the disk or the log
moves). Undo, restore and put-back are the person's own writes; accepting applies the staged
change as the agent that made it (the log says so). Each write is announced as the
others are (`history_notes.write_landed`); a refusal is a `CommandError` that says what
blocks it and that nothing was written.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from ...store.errors import MemoryStoreError, fmt_bytes
from ...store.files import CAPS, MemoryFile
from ..arguments import CommandError, parse
from ..context import ServerContext  # at run time: pygls reads the handlers' annotations
from ..protocol import (
    BLAME,
    HISTORY,
    HISTORY_DIFF,
    RESTORE,
    REVIEW,
    REVIEW_ACCEPT,
    REVIEW_REJECT,
    SET_REVIEW,
    UNARCHIVE,
    UNDO,
)
from .commands import (
    USER_MEMORY,
    from_store_error,
    from_tool_error,
    in_writer,
    named,
    refuse_unsaved,
    take_folder,
)
from .history_notes import (
    BY_USER,
    HistorySeen,
    history_changed,
    review_began,
    review_changed,
    write_landed,
)
from .lifecycle import MemoryWatching

if TYPE_CHECKING:
    from ...analysis.entries import Outline
    from ...store.events import Scope
    from ...store.memory_store import MemoryStore, WriteResult
    from ...store.trace import TraceRecord
    from ...tools.history import Blamed
    from ..workspaces import FileKey, Folder

log = logging.getLogger(__name__)
T = TypeVar("T")

NOT_SAVED = "Not saved yet"
"""The hover on an entry the buffer has and the file on disk has not."""


# ---- whose log ---------------------------------------------------------------------------
def take_log(ls: ServerContext, command: str, file: str | None, workspace: str | None) -> Folder:
    """The folder whose log (or inbox) a command names: the user memory's with `file`
    "user-memory", whatever the workspace; else the workspace's."""
    if file == USER_MEMORY:
        return ls.folders.user
    return take_folder(ls, command, workspace)


def _scope(folder: Folder) -> Scope:
    return "user" if folder.user_memory else "workspace"


def _user_path(folder: Folder) -> str | None:
    """The user memory's real path, when `folder` is it (what its messages name)."""
    return str(folder.store.path(MemoryFile.USER)) if folder.user_memory else None


# ---- running the tools -------------------------------------------------------------------
def _refused(exc: Exception, folder: Folder) -> CommandError:
    from ...tools import ToolExecutionError
    from ...tools.dispatch import to_tool_error, user_memory_error

    path = _user_path(folder)
    if path is not None:  # said of the user memory: its path, its tools, `--user`
        error = exc if isinstance(exc, ToolExecutionError) else to_tool_error(_store_error(exc))
        return from_tool_error(user_memory_error(error, path))
    if isinstance(exc, ToolExecutionError):
        return from_tool_error(exc)
    return from_store_error(_store_error(exc))


def _store_error(exc: Exception) -> MemoryStoreError:
    assert isinstance(exc, MemoryStoreError)
    return exc


async def _read(folder: Folder, call: Callable[[], T]) -> T:
    """A read of the folder's log or files, in a worker thread; its refusal as a
    CommandError."""
    from ...tools import ToolExecutionError

    try:
        return await asyncio.to_thread(call)
    except (ToolExecutionError, MemoryStoreError) as exc:
        raise _refused(exc, folder) from None


async def _write(folder: Folder, call: Callable[[], T]) -> T:
    """A write of the folder's, in the writers' pool (see `commands.in_writer`)."""
    from ...tools import ToolExecutionError

    try:
        return await in_writer(call)
    except (ToolExecutionError, MemoryStoreError) as exc:
        raise _refused(exc, folder) from None


# ---- reading the log ---------------------------------------------------------------------
async def history(ls: ServerContext, args: tuple[Any, ...]) -> dict[str, object]:
    """`metis.history {file?, limit?}`: records newest first, and what the archive keeps
    (`file` "user-memory": the user memory's)."""
    from ...tools.history import archived, record_json

    params = parse(HISTORY, args)
    folder = take_log(ls, HISTORY, params.file, params.workspace)
    store = folder.store
    file = None if params.file == USER_MEMORY else params.file
    user = folder.user_memory

    def read() -> dict[str, object]:
        records = store.history(file, params.limit)
        try:
            kept = [a.to_json() for a in archived(store, file)]
        except MemoryStoreError as exc:  # a file unreadable now: its records still show
            log.info("the archive of %s cannot be listed: %s", folder.path, exc)
            kept = []
        return {"records": [record_json(r, user_memory=user) for r in records], "archived": kept}

    return await _read(folder, read)


async def history_diff(ls: ServerContext, args: tuple[Any, ...]) -> dict[str, object]:
    """`metis.historyDiff {id}`: the file before and after a record, redacted, with a title."""
    from ...tools.history import find_record

    params = parse(HISTORY_DIFF, args)
    folder = take_log(ls, HISTORY_DIFF, params.file, params.workspace)
    record = await _read(folder, lambda: find_record(folder.store, params.id))
    return {
        "id": record.id,
        "file": record.file,
        "before": _side(record.before_text, record.before_size_bytes),
        "after": _side(record.after_text, record.after_size_bytes),
        "title": diff_title(record, user_memory=folder.user_memory),
    }


def _side(text: str | None, size: int) -> str:
    from ...tools.redaction import redact

    if text is None:
        return f"(not kept: the file was {fmt_bytes(size)}, too large for the history)\n"
    return redact(text)


def diff_title(record: TraceRecord, *, user_memory: bool = False) -> str:
    """ "MEMORY.md: change #12 by Claude Code 2.1.4, 2 days ago" (the diff editor's title;
    "Your user memory: change #3 by you, just now" for a record of its log)."""
    from ...tools.history import actor_name, ago

    who = "an outside edit" if record.door == "outside" else actor_name(record.actor)
    name = "Your user memory" if user_memory else record.file
    return f"{name}: change #{record.id} by {who}, {ago(record.time)}"


async def blame_command(ls: ServerContext, args: tuple[Any, ...]) -> dict[str, object]:
    """`metis.blame {file}`: who added each entry of the file as it is on disk."""
    from ...tools.history import blame
    from .commands import take_file

    params = parse(BLAME, args)
    folder, file = take_file(ls, BLAME, params.file, params.workspace)
    found = await _read(folder, lambda: blame(folder.store, file))
    return {"entries": [b.to_json() for b in found]}


# ---- writes ------------------------------------------------------------------------------
def _sizes(result: WriteResult) -> str:
    caps = CAPS[result.file]
    return (
        f"{fmt_bytes(result.before_size_bytes)} → {fmt_bytes(result.after_size_bytes)} "
        f"(soft cap {fmt_bytes(caps.soft)}, hard cap {fmt_bytes(caps.hard)})"
    )


def _written(folder: Folder, result: WriteResult, said: str) -> dict[str, object]:
    """The write result JSON (as `metis.memoryConsolidate` answers) of an undo, a restore or a
    put-back: `said` is what happened, for the agent and the person alike (of the user
    memory: in its words, `scope` "user" and its `path`)."""
    from ...tools.dispatch import SOFT_CAP_HINT, ToolResult
    from ...tools.people import EDITOR
    from ...tools.user_words import for_agent, for_person

    line = f"{said}: {_sizes(result)}"
    text = f"{line} {SOFT_CAP_HINT}" if result.over_soft_cap else f"{line}."
    shorten = EDITOR.shorten.format(file=result.file.value)
    person = f"{line}, over the soft cap: {shorten}." if result.over_soft_cap else f"{line}."
    path = _user_path(folder)
    if path is not None:
        text, person = for_agent(text), for_person(person, path)
    done = ToolResult(text=text, write=result, operation="consolidate", user_memory=path)
    answer = done.to_json(EDITOR)
    answer["person_text"] = person
    return answer


def _announce(ls: ServerContext, folder: Folder, result: WriteResult) -> None:
    """`metis/memoryUpdated` (and `memoryEviction`) as for any write, then the refresh and
    `metis/historyChanged`."""
    from ...store.events import events_for_write

    for event in events_for_write("consolidate", result, scope=_scope(folder)):
        ls.fan_out.store_event(folder, event)
    write_landed(ls, folder, result)


async def _record_file(folder: Folder, record_id: int) -> MemoryFile:
    from ...tools.history import find_record

    record = await _read(folder, lambda: find_record(folder.store, record_id))
    return MemoryFile(record.file)


async def undo(ls: ServerContext, args: tuple[Any, ...]) -> dict[str, object]:
    """`metis.undo {id}`: reverse that write where its entries are as it left them."""
    from ...tools import history as tools

    params = parse(UNDO, args)
    folder = take_log(ls, UNDO, params.file, params.workspace)
    file = await _record_file(folder, params.id)
    await refuse_unsaved(ls, folder, file, "undo")
    result = await _write(folder, lambda: tools.undo(folder.store, params.id, BY_USER))
    _announce(ls, folder, result)
    return _written(folder, result, f"Undid change #{params.id} to {file.value}")


async def restore(ls: ServerContext, args: tuple[Any, ...]) -> dict[str, object]:
    """`metis.restore {id}`: the file as it was right after that write."""
    from ...tools import history as tools

    params = parse(RESTORE, args)
    folder = take_log(ls, RESTORE, params.file, params.workspace)
    file = await _record_file(folder, params.id)
    await refuse_unsaved(ls, folder, file, "restore")
    result = await _write(folder, lambda: tools.restore(folder.store, params.id, BY_USER))
    _announce(ls, folder, result)
    return _written(folder, result, f"Restored {file.value} as it was after change #{params.id}")


async def unarchive(ls: ServerContext, args: tuple[Any, ...]) -> dict[str, object]:
    """`metis.unarchive {id: "12:1"}`: put an archived entry back in its file."""
    from ...tools import history as tools
    from ..command_args import MAX_ID

    params = parse(UNARCHIVE, args)
    folder = take_log(ls, UNARCHIVE, params.file, params.workspace)
    head = params.id.partition(":")[0]
    if head.isdigit():  # else put_back says what an archived entry's id looks like
        if int(head) > MAX_ID:
            raise CommandError(
                "not_found", f"there is no change #{head} in the history: nothing was written."
            )
        file = await _record_file(folder, int(head))
        await refuse_unsaved(ls, folder, file, "put-back")
    result = await _write(folder, lambda: tools.put_back(folder.store, params.id, BY_USER))
    _announce(ls, folder, result)
    return _written(folder, result, f"Put an archived entry back in {result.file.value}")


# ---- the review inbox --------------------------------------------------------------------
async def review(ls: ServerContext, args: tuple[Any, ...]) -> dict[str, object]:
    """`metis.review`: whether agents' writes wait, and what waits (oldest first); `file`
    "user-memory": the user memory's own review, and its inbox (where an agent's write of it
    waits, whichever workspace's review held it)."""
    from ...tools.history import staged_json

    params = parse(REVIEW, args)
    folder = take_log(ls, REVIEW, params.file, params.workspace)
    store = folder.store
    user = folder.user_memory

    def read() -> dict[str, object]:
        return {
            "on": store.review_enabled(),
            "staged": [staged_json(change, user_memory=user) for change in store.staged()],
        }

    return await _read(folder, read)


async def set_review(ls: ServerContext, args: tuple[Any, ...]) -> dict[str, object]:
    """`metis.setReview {on}`: make agents' writes wait for the user, or stop."""
    params = parse(SET_REVIEW, args)
    folder = take_log(ls, SET_REVIEW, params.file, params.workspace)
    await _write(folder, lambda: folder.store.set_review(params.on))
    return {"on": params.on}


async def review_accept(ls: ServerContext, args: tuple[Any, ...]) -> dict[str, object]:
    """`metis.reviewAccept {id}`: apply the waiting change to the file as it is now."""
    from ...store.events import EventSink
    from ...tools import review as inbox
    from ...tools.history import actor_name
    from ...tools.people import EDITOR

    params = parse(REVIEW_ACCEPT, args)
    folder = take_log(ls, REVIEW_ACCEPT, params.file, params.workspace)
    change = await _read(folder, lambda: inbox.waiting(folder.store, params.id))
    await refuse_unsaved(ls, folder, MemoryFile(change.file), "accepted change")
    sink = EventSink()  # its memory.updated reaches the client as every write's does
    sink.subscribe(lambda event: ls.fan_out.store_event(folder, event))
    result = await _write(folder, lambda: inbox.accept(folder.store, params.id, sink))
    written = result.write
    assert written is not None
    write_landed(ls, folder, written)
    await review_changed(ls, folder, arrived=None)
    answer = result.to_json(EDITOR)
    answer["person_text"] = (
        f"Accepted change #{params.id} by {actor_name(change.actor)}. {result.for_people(EDITOR)}"
    )
    return answer


async def review_reject(ls: ServerContext, args: tuple[Any, ...]) -> dict[str, object]:
    """`metis.reviewReject {id}`: drop the waiting change; the file is never touched."""
    from ...tools import review as inbox
    from ...tools.history import actor_name

    params = parse(REVIEW_REJECT, args)
    folder = take_log(ls, REVIEW_REJECT, params.file, params.workspace)
    change = await _write(folder, lambda: inbox.reject(folder.store, params.id))
    await review_changed(ls, folder, arrived=None)
    name = named(folder, MemoryFile(change.file))
    return {
        "rejected": change.id,
        "message": (
            f"Rejected change #{change.id} by {actor_name(change.actor)}: {name} is unchanged."
        ),
    }


# ---- outside changes ---------------------------------------------------------------------
class OutsideChecks:
    """One look at the log per folder at a time; a change seen meanwhile asks for one more."""

    def __init__(self) -> None:
        self.running: set[str] = set()
        self.again: set[str] = set()
        self.begun: set[str] = set()
        """Folders looked at once: at the first look (when the watch begins), a log that is
        there is no news; after it, a log that appears is (another program began it)."""


def disk_changed(ls: ServerContext, folder: Folder) -> None:
    """The watcher saw the folder's memory files change (on the loop): a change no door made
    is recorded as `outside`, and any record the client was not told of (another program's
    write, an outside edit) is announced."""
    checks = ls.state(OutsideChecks)
    if folder.key in checks.running:
        checks.again.add(folder.key)
        return
    checks.running.add(folder.key)
    ls.spawn(_check_outside(ls, folder))


async def _check_outside(ls: ServerContext, folder: Folder) -> None:
    checks = ls.state(OutsideChecks)
    seen = ls.state(HistorySeen)
    try:
        while True:
            checks.again.discard(folder.key)
            buffers = {file: latest_texts(ls, folder, file) for file in folder.store.files}
            found = await asyncio.to_thread(newest_records, folder.store, buffers)
            first = folder.key not in checks.begun
            checks.begun.add(folder.key)
            for file, (record_id, noticed) in found.items():
                key = folder.file_key(file)
                if first and not noticed and key not in seen.last:
                    seen.last[key] = record_id  # there before the watch: no news
                else:
                    history_changed(ls, folder, file, record_id)
            if folder.key not in checks.again or ls.stopping:
                return
    finally:
        checks.running.discard(folder.key)


class OpenTexts:
    """The text of the open buffers of each memory file, as an immutable tuple the loop
    replaces on each open, change and close (`buffers_moved`): a worker thread reads the
    latest without racing the loop."""

    def __init__(self) -> None:
        self.texts: dict[FileKey, tuple[str, ...]] = {}


class LatestTexts(Collection[str]):
    """A file's buffers as they are when iterated, and `also` as they were when asked for
    (when the person saved, or the look at the log began): the store iterates them under its
    lock after reading the disk, so a buffer typed and saved while the look waited for a
    worker thread counts."""

    def __init__(
        self, texts: dict[FileKey, tuple[str, ...]], key: FileKey, also: tuple[str, ...]
    ) -> None:
        self._texts, self._key, self._also = texts, key, also

    def _now(self) -> tuple[str, ...]:
        return self._also + self._texts.get(self._key, ())

    def __iter__(self) -> Iterator[str]:
        return iter(self._now())

    def __len__(self) -> int:
        return len(self._now())

    def __contains__(self, text: object) -> bool:
        return text in self._now()


def buffers_moved(ls: ServerContext, folder: Folder, file: MemoryFile) -> None:
    """A buffer of the file was opened, changed or closed (on the loop)."""
    key = folder.file_key(file)
    texts = tuple(doc.source for doc in ls.open_documents(key))
    state = ls.state(OpenTexts)
    if texts:
        state.texts[key] = texts
    else:
        state.texts.pop(key, None)


def latest_texts(ls: ServerContext, folder: Folder, file: MemoryFile) -> LatestTexts:
    """The file's buffers now (on the loop), and as they will be when the store looks."""
    key = folder.file_key(file)
    now = tuple(doc.source for doc in ls.open_documents(key))
    return LatestTexts(ls.state(OpenTexts).texts, key, now)


def newest_records(
    store: MemoryStore, buffers: Mapping[MemoryFile, Collection[str]] | None = None
) -> dict[MemoryFile, tuple[int, bool]]:
    """Each file's newest record, once a change no door made is recorded (True when this
    call recorded it). A file with no log is left alone: nothing to chain to, no lock taken.
    A disk that reads as one of the file's open `buffers` is left to the editor's save
    notification (`saved`), which records it as the person's edit."""
    newest: dict[MemoryFile, tuple[int, bool]] = {}
    for file in store.files:
        try:
            if not store.history(file, limit=1):
                continue
            noticed = store.notice_outside(file, saved_texts=(buffers or {}).get(file, ()))
            if noticed is not None:
                newest[file] = (noticed.id, True)
                continue
            last = store.history(file, limit=1)
        except MemoryStoreError as exc:  # unreadable, or `.metis/` swapped away: no record
            log.info("the write log of %s cannot be checked: %s", file.value, exc)
            continue
        if last:
            newest[file] = (last[0].id, False)
    return newest


def saved(ls: ServerContext, folder: Folder, file: MemoryFile) -> None:
    """The editor saved a buffer of the file (on the loop): a disk that reads as one of its
    buffers is the person's edit, recorded as theirs (the watcher leaves it to this), and
    announced; any other change is an outside edit, as the watcher would record it."""
    buffers = latest_texts(ls, folder, file)
    if not buffers:
        return

    async def record() -> None:
        try:
            noticed = await asyncio.to_thread(
                folder.store.notice_outside, file, saved_texts=buffers, saved_by=BY_USER
            )
        except MemoryStoreError as exc:  # unreadable now: the diagnostics say why
            log.info("the save of %s cannot be logged: %s", file.value, exc)
            return
        if noticed is not None:
            history_changed(ls, folder, file, noticed.id)

    ls.spawn(record())


# ---- the review inbox, changed in another process ----------------------------------------
def inbox_changed(ls: ServerContext, folder: Folder) -> None:
    """The watcher saw the folder's review inbox change (an agent in another process staged a
    change, or one was accepted or rejected in a terminal), or began watching it: tell the
    client what it was not told (on the loop)."""
    ls.spawn(review_changed(ls, folder, watched=True))


# ---- the hover's line --------------------------------------------------------------------
@dataclass(frozen=True)
class DiskBlame:
    """Who added each entry of a file as it is on disk, for as long as the disk (its hash)
    and the log (its newest record of the file) stay as they were."""

    stamp: tuple[str, int]
    keys: list[str]
    blamed: list[Blamed]


class BlameCache:
    def __init__(self) -> None:
        self.files: dict[FileKey, DiskBlame] = {}
        self.locks: dict[FileKey, asyncio.Lock] = {}
        """One replay of a file's log at a time: a second hover waits for the first's."""


def disk_blame(store: MemoryStore, file: MemoryFile, cached: DiskBlame | None) -> DiskBlame | None:
    """The file's blame (`cached` while still current); None when the log has no record of
    the file (every entry would say only that it predates the log)."""
    from ...tools.history import blame_text, entries

    newest = store.history(file, limit=1)
    if not newest:
        return None
    snap = store.snapshot(file)
    stamp = (snap.sha256, newest[0].id)
    if cached is not None and cached.stamp == stamp:
        return cached
    blamed = blame_text(snap.text, snap.sha256, store.history_oldest_first(file))
    return DiskBlame(stamp, [e.key for e in entries(snap.text)], blamed)


async def blame_hover(ls: ServerContext, uri: str, outline: Outline, line: int) -> str | None:
    """Who added the entry on `line` of the memory file open at `uri` (its buffer's
    `outline`): "Added by Claude Code 2.1.4 through memory_add over MCP, 2 days ago". The
    disk's entries are blamed; the buffer's are matched to them by text (the n-th copy of an
    entry to the n-th), so unsaved edits elsewhere do not move it, and an entry only the
    buffer has is "Not saved yet". None off an entry, or with no log of the file."""
    located = ls.folders.locate(uri)
    if located is None or uri in ls.analysed_as or not 0 <= line < len(outline.line_entry):
        return None
    index = outline.line_entry[line]
    if index < 0 or outline.entries[index].is_empty:
        return None
    folder, file = located
    key = folder.file_key(file)
    cache = ls.state(BlameCache)
    async with cache.locks.setdefault(key, asyncio.Lock()):
        try:
            found = await asyncio.to_thread(disk_blame, folder.store, file, cache.files.get(key))
        except MemoryStoreError:
            return None  # unreadable now: the diagnostics say why
        if found is None:
            cache.files.pop(key, None)
            return None
        cache.files[key] = found
    entry = outline.entries[index]
    copy = sum(1 for e in outline.entries[:index] if e.key == entry.key)
    same = [b for k, b in zip(found.keys, found.blamed, strict=True) if k == entry.key]
    return same[copy].hover() if copy < len(same) else NOT_SAVED


def register(server: ServerContext) -> None:
    server.fan_out.disk_changes.append(lambda folder: disk_changed(server, folder))
    inbox = server.state(MemoryWatching).inbox_changes
    inbox.append(lambda folder: inbox_changed(server, folder))
    # The user memory's inbox is followed from the first folder on, as each workspace's.
    server.fan_out.folders_added.append(
        lambda added: review_began(server, [*added, server.folders.user])
    )

    @server.command(HISTORY)
    async def history_command(ls: ServerContext, *args: Any) -> dict[str, object]:
        return await history(ls, args)

    @server.command(HISTORY_DIFF)
    async def history_diff_command(ls: ServerContext, *args: Any) -> dict[str, object]:
        return await history_diff(ls, args)

    @server.command(BLAME)
    async def blame_cmd(ls: ServerContext, *args: Any) -> dict[str, object]:
        return await blame_command(ls, args)

    @server.command(UNDO)
    async def undo_command(ls: ServerContext, *args: Any) -> dict[str, object]:
        return await undo(ls, args)

    @server.command(RESTORE)
    async def restore_command(ls: ServerContext, *args: Any) -> dict[str, object]:
        return await restore(ls, args)

    @server.command(UNARCHIVE)
    async def unarchive_command(ls: ServerContext, *args: Any) -> dict[str, object]:
        return await unarchive(ls, args)

    @server.command(REVIEW)
    async def review_command(ls: ServerContext, *args: Any) -> dict[str, object]:
        return await review(ls, args)

    @server.command(SET_REVIEW)
    async def set_review_command(ls: ServerContext, *args: Any) -> dict[str, object]:
        return await set_review(ls, args)

    @server.command(REVIEW_ACCEPT)
    async def review_accept_command(ls: ServerContext, *args: Any) -> dict[str, object]:
        return await review_accept(ls, args)

    @server.command(REVIEW_REJECT)
    async def review_reject_command(ls: ServerContext, *args: Any) -> dict[str, object]:
        return await review_reject(ls, args)
