"""Validate tool input, call the store, and turn store errors into tool errors.

This is the one translation from store outcomes to text an agent reads; the
language server, CLI and MCP server all call through it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from ..store.errors import (
    EmptyEntry,
    EmptyOldText,
    InvalidMemoryFile,
    InvalidText,
    LockTimeout,
    MemoryConflict,
    MemoryFileTooLarge,
    MemoryHardCapExceeded,
    MemoryStoreError,
    NotUtf8,
    OldTextNotFound,
    OldTextNotUnique,
    ReviewInboxFull,
    StagedChangeGone,
    StorageError,
    TooLargeToReview,
    UnsafePath,
    fmt_bytes,
    short_repr,
)
from ..store.events import EventSink, Operation, Scope, events_for_write
from ..store.files import CAPS, MemoryFile
from ..store.memory_store import MemoryStore, WriteResult
from ..store.provenance import Provenance
from .definitions import (
    MEMORY_ADD,
    MEMORY_CONSOLIDATE,
    MEMORY_REPLACE,
    USER_MEMORY_ADD,
    USER_MEMORY_CONSOLIDATE,
    USER_MEMORY_REPLACE,
    ToolDefinition,
)
from .entry_room import EntryRoom, entry_room
from .errors import ErrorCode, ToolExecutionError
from .inputs import (
    MemoryAddInput,
    MemoryConsolidateInput,
    MemoryReplaceInput,
    UserMemoryAddInput,
    UserMemoryConsolidateInput,
    UserMemoryReplaceInput,
    describe_problems,
)
from .people import Surface, invalid_input, store_error
from .people import success as success_for_people
from .redaction import redact
from .secret_guard import refuse_new_secrets, refuse_replace
from .user_words import for_agent, for_person

SOFT_CAP_HINT = "— over soft cap; consider memory_consolidate"


@dataclass(frozen=True)
class ToolResult:
    text: str
    write: WriteResult | None = None
    operation: Operation | None = None
    user_memory: str | None = None
    """The user memory's path, when the write was to it (`text` names it already)."""

    @property
    def staged(self) -> bool:
        return self.write is not None and self.write.staged is not None

    @property
    def agent_text(self) -> str:
        """The spec's result line, then the whole file as it now is (secrets redacted, as
        everywhere memory reaches a model): an agent that wrote sees the current memory
        within its session, with no hook and no second call. A staged write says so, and
        what the file still reads."""
        write = self.write
        if write is None or write.staged is not None:
            return self.text
        name = "Your user memory" if self.user_memory is not None else write.file.value
        if not write.content.strip():
            return f"{self.text}\n\n{name} is now empty."
        content = redact(write.content).rstrip()
        return f"{self.text}\n\n{name} now reads (the whole file):\n\n{content}"

    def for_people(self, surface: Surface) -> str:
        """The result line for a person at `surface` (the soft cap's hint names their
        commands, not memory_consolidate)."""
        if self.write is None or self.operation is None:
            return self.text
        if self.write.staged is not None:
            text = staged_for_people(self.write)
        else:
            text = success_for_people(self.operation, self.write, surface)
        return text if self.user_memory is None else for_person(text, self.user_memory)

    def to_json(self, people: Surface | None = None) -> dict[str, object]:
        """A write as the LSP command and `metis-memory ... --json` return it: the
        `memory.updated` fields (so callers can chain hashes), the cap flags, the text;
        with `people`, also `person_text`, the line a person there reads."""
        write = self.write
        assert write is not None, "only writes have a JSON result"
        person = {"person_text": self.for_people(people)} if people is not None else {}
        if self.user_memory is not None:  # (a workspace's write: the fields as before)
            person = {"scope": "user", "path": self.user_memory, **person}
        if write.staged is not None:
            from .history import staged_json

            return {
                "staged": staged_json(write.staged, user_memory=self.user_memory is not None),
                "file": write.file.value,
                "operation": self.operation,
                "message": self.text,
                "agent_text": self.agent_text,
                **person,
            }
        return {
            "file": write.file.value,
            "operation": self.operation,
            "before_hash": write.before_hash,
            "after_hash": write.after_hash,
            "before_size_bytes": write.before_size_bytes,
            "after_size_bytes": write.after_size_bytes,
            "over_soft_cap": write.over_soft_cap,
            "over_hard_cap": write.over_hard_cap,
            "message": self.text,
            "agent_text": self.agent_text,
            **person,
        }


@dataclass(frozen=True)
class Call:
    """Beside a tool's input: the caller's expected hash (compare-and-swap), who is calling
    (`by`, for the write log and review), and the waiting change an accept applies."""

    expected_hash: str | None = None
    by: Provenance | None = None
    staged: int | None = None


Handler = Callable[[BaseModel, Call], ToolResult]
"""A tool's handler: its validated input and the call's context."""


class ToolDispatcher:
    """Registry of tools and the single entry point that runs them."""

    def __init__(self) -> None:
        self._tools: dict[str, tuple[ToolDefinition, Handler]] = {}

    def register(self, definition: ToolDefinition, handler: Handler) -> None:
        if definition.name in self._tools:
            raise ValueError(f"tool {definition.name!r} is already registered")
        self._tools[definition.name] = (definition, handler)

    def definitions(self) -> list[ToolDefinition]:
        return [definition for definition, _ in self._tools.values()]

    def dispatch(
        self,
        name: str,
        tool_input: object,
        *,
        expected_hash: str | None = None,
        by: Provenance | None = None,
        staged: int | None = None,
    ) -> ToolResult:
        """Run tool `name`. `expected_hash` (memory_consolidate only) makes the write a
        compare-and-swap against the SHA-256 the caller last read; it travels beside the
        input, never in it, so the agent's tool schemas stay exactly the spec's. `by` says
        who calls (an agent's write waits for review when review is on); `staged` is the
        waiting change an accept applies."""
        entry = self._tools.get(name)
        if entry is None:
            known = ", ".join(sorted(self._tools))
            raise ToolExecutionError(
                "unknown_tool", f"unknown tool {short_repr(name)}; known tools: {known}"
            )
        definition, handler = entry
        params = validate_input(definition, tool_input)
        if expected_hash is not None:
            check_expected_hash(definition.name, expected_hash)
        try:
            return handler(params, Call(expected_hash, by, staged))
        except MemoryStoreError as exc:
            raise to_tool_error(exc) from exc


def check_expected_hash(tool: str, expected_hash: str) -> None:
    """Only a whole-file write can be compared and swapped; the hash is SHA-256 hex."""
    if tool not in (MEMORY_CONSOLIDATE.name, USER_MEMORY_CONSOLIDATE.name):
        raise ToolExecutionError(
            "invalid_input",
            f"invalid input for {tool}: an expected hash applies to memory_consolidate and "
            "user_memory_consolidate only (add and replace already re-read the file under "
            "the lock); leave it out.",
        )
    if not _SHA256.fullmatch(expected_hash):
        raise ToolExecutionError(
            "invalid_input",
            f"invalid input for {tool}: the expected hash {short_repr(expected_hash)} is not "
            "a SHA-256 (64 hex digits); pass the sha256 of the file as you last read it.",
        )


_SHA256 = re.compile(r"[0-9a-fA-F]{64}")


def validate_input(definition: ToolDefinition, tool_input: object) -> BaseModel:
    if not isinstance(tool_input, Mapping):
        got = f"expected a JSON object, got {type(tool_input).__name__}"
        raise ToolExecutionError(
            "invalid_input",
            f"invalid input for {definition.name}: {got}. {usage_hint(definition)}",
            people=invalid_input(got),
        )
    try:
        return definition.input_model.model_validate(dict(tool_input))
    except ValidationError as exc:
        problems = describe_problems(exc)
        raise ToolExecutionError(
            "invalid_input",
            f"invalid input for {definition.name}: {problems}. {usage_hint(definition)}",
            people=invalid_input(problems),
        ) from exc


def usage_hint(definition: ToolDefinition) -> str:
    props: dict[str, Any] = definition.input_schema.get("properties", {})
    shown = ", ".join(
        f'"{name}": ' + (" | ".join(f'"{v}"' for v in spec["enum"]) if "enum" in spec else "<text>")
        for name, spec in props.items()
    )
    return f"Expected {{{shown}}} and nothing else."


def to_tool_error(exc: MemoryStoreError) -> ToolExecutionError:
    code: ErrorCode
    if isinstance(exc, (MemoryHardCapExceeded, MemoryFileTooLarge, TooLargeToReview)):
        code = "hard_cap_exceeded"
    elif isinstance(exc, OldTextNotFound):
        code = "not_found"
    elif isinstance(exc, OldTextNotUnique):
        code = "not_unique"
    elif isinstance(exc, (EmptyEntry, EmptyOldText, InvalidText, InvalidMemoryFile)):
        code = "invalid_input"
    elif isinstance(exc, NotUtf8):
        code = "not_utf8"
    elif isinstance(exc, UnsafePath):
        code = "unsafe_path"
    elif isinstance(exc, (LockTimeout, ReviewInboxFull)):
        code = "busy"
    elif isinstance(exc, StagedChangeGone):
        code = "not_found"
    elif isinstance(exc, MemoryConflict):
        code = "conflict"
    elif isinstance(exc, StorageError):
        code = "storage_error"
    else:  # pragma: no cover - every store error is mapped above
        code = "storage_error"
    return ToolExecutionError(code, str(exc), people=store_error(exc))


def add_refused(
    exc: MemoryHardCapExceeded, store: MemoryStore, file: MemoryFile, entry: str
) -> ToolExecutionError:
    """An add over the hard cap, with advice that can work: the store's "consolidate to
    under the soft cap, then retry" unless the entry needs more room than that frees, or
    more than the file can ever give it (`entry_room`)."""
    try:
        text = store.snapshot(file).text
    except MemoryStoreError:  # unreadable now: no heading to keep
        text = ""
    room = entry_room(file, text, entry)
    return ToolExecutionError(
        "hard_cap_exceeded", add_advice(exc, room), people=store_error(exc, room)
    )


def add_advice(exc: MemoryHardCapExceeded, room: EntryRoom) -> str:
    """The agent's text for an add over the hard cap (the spec: consolidate first, when
    consolidating can make room)."""
    if room.fits_after_consolidating and room.consolidate_to >= exc.soft_cap - 1:
        return str(exc)  # "consolidate to under the soft cap, then retry" makes room
    head, done, _ = str(exc).partition("Nothing was written. ")
    file = exc.file
    if room.fits_after_consolidating:
        return (
            f"{head}{done}Consolidate {file} with memory_consolidate to at most "
            f"{fmt_bytes(room.consolidate_to)} (merge, shorten or drop entries) so this "
            f"{fmt_bytes(room.cost)} entry fits, then retry."
        )
    largest = max(room.largest_entry, 0)
    kept = f", keeping its {fmt_bytes(room.heading_bytes)} heading" if room.heading_bytes else ""
    return (
        f"{head}{done}This entry takes {fmt_bytes(room.cost)} with the line break after it, "
        f"more than {file} can ever hold: even if memory_consolidate removed every other "
        f"entry{kept}, an entry could be at most {fmt_bytes(largest)}. Shorten the entry by "
        f"at least {fmt_bytes(room.entry_bytes - largest)} (keep long detail in a file of the "
        "repository and remember its path), then retry."
    )


def staged_text(result: WriteResult) -> str:
    """What an agent reads when its write waits for the user's review."""
    staged = result.staged
    assert staged is not None
    return (
        f"Staged for the user's review as change #{staged.id}: {result.file.value} is "
        "unchanged until the user accepts it (they may reject it). Do not retry this write; "
        "carry on with your task."
    )


def staged_for_people(result: WriteResult) -> str:
    staged = result.staged
    assert staged is not None
    return (
        f"Change #{staged.id} to {result.file.value} waits for your review: accept or reject "
        f"it in Memory History, or run `metis-memory review accept {staged.id}`."
    )


def success_text(verb: str, result: WriteResult) -> str:
    caps = CAPS[result.file]
    text = (
        f"{verb} {result.file.value}: {fmt_bytes(result.before_size_bytes)} → "
        f"{fmt_bytes(result.after_size_bytes)} (soft cap {fmt_bytes(caps.soft)}, "
        f"hard cap {fmt_bytes(caps.hard)})"
    )
    return f"{text} {SOFT_CAP_HINT}" if result.over_soft_cap else f"{text}."


def register_memory_tools(
    dispatcher: ToolDispatcher, store: MemoryStore, sink: EventSink | None = None
) -> None:
    """Register memory_add/replace/consolidate bound to `store`, publishing to `sink`."""
    _register(dispatcher, store, sink, MEMORY_TOOLS)


def register_user_memory_tools(
    dispatcher: ToolDispatcher,
    user_store: MemoryStore,
    sink: EventSink | None = None,
    *,
    review_of: MemoryStore | None = None,
) -> None:
    """Register user_memory_add/replace/consolidate bound to `user_store` (the user memory,
    `MemoryStore.for_user()`), publishing to `sink` with `scope` "user". An agent's write
    waits for the user's review when review is on for the user memory, or for `review_of`
    (the workspace the agent writes from): a user who asked to review what agents write
    there would not expect a write that reaches every workspace to go unreviewed. It waits
    in the user memory's own inbox (`metis-memory review --user`)."""
    if not user_store.is_user_memory:
        raise ValueError(f"{user_store.workspace_path} is a workspace's memory, not the user's")
    _register(dispatcher, user_store, sink, USER_MEMORY_TOOLS, review_of=review_of)


@dataclass(frozen=True)
class _Tools:
    """Three write tools over one store's files."""

    add: ToolDefinition
    replace: ToolDefinition
    consolidate: ToolDefinition
    user: bool
    """The user memory's (no `file`: it is USER.md; messages name the user memory)."""


MEMORY_TOOLS = _Tools(MEMORY_ADD, MEMORY_REPLACE, MEMORY_CONSOLIDATE, user=False)
USER_MEMORY_TOOLS = _Tools(USER_MEMORY_ADD, USER_MEMORY_REPLACE, USER_MEMORY_CONSOLIDATE, user=True)


def _register(
    dispatcher: ToolDispatcher,
    store: MemoryStore,
    sink: EventSink | None,
    tools: _Tools,
    *,
    review_of: MemoryStore | None = None,
) -> None:
    shown = str(store.path(MemoryFile.USER)) if tools.user else None
    scope: Scope = "user" if tools.user else "workspace"

    def file_of(params: BaseModel) -> MemoryFile:
        return MemoryFile.USER if tools.user else MemoryFile(getattr(params, "file"))  # noqa: B009

    def finish(operation: Operation, verb: str, result: WriteResult) -> ToolResult:
        if result.staged is not None:
            text = staged_text(result)
        else:
            if sink is not None:
                for event in events_for_write(operation, result, scope=scope):
                    sink.emit(event)
            text = success_text(verb, result)
        return ToolResult(
            text=for_agent(text) if tools.user else text,
            write=result,
            operation=operation,
            user_memory=shown,
        )

    def staging(call: Call) -> bool:
        """An agent's write while review is on waits for the user (an accept never does)."""
        if call.staged is not None or call.by is None or not call.by.agent:
            return False
        return store.review_enabled() or (review_of is not None and review_of.review_enabled())

    def add(params: BaseModel, call: Call) -> ToolResult:
        assert isinstance(params, (MemoryAddInput, UserMemoryAddInput))
        file = file_of(params)
        refuse_new_secrets(tools.add.name, "entry", params.entry, "", file)
        try:
            written = store.add_entry(
                file, params.entry, by=call.by, stage=staging(call), staged=call.staged
            )
        except MemoryHardCapExceeded as exc:
            raise add_refused(exc, store, file, params.entry) from exc
        return finish("add", "Added entry to", written)

    def replace(params: BaseModel, call: Call) -> ToolResult:
        assert isinstance(params, (MemoryReplaceInput, UserMemoryReplaceInput))
        file = file_of(params)
        result = guarded_replace(
            store, file, params.old, params.new, tools.replace.name, call=call, stage=staging(call)
        )
        return finish("replace", "Replaced text in", result)

    def consolidate(params: BaseModel, call: Call) -> ToolResult:
        expected_hash = call.expected_hash
        assert isinstance(params, (MemoryConsolidateInput, UserMemoryConsolidateInput))
        file = file_of(params)
        read: list[str] = []

        def before() -> str:
            try:
                snap = store.snapshot(file)
            except MemoryStoreError:  # unreadable (16 MiB+): nothing in it counts as known
                return ""
            read.append(snap.sha256)
            return snap.text

        refuse_new_secrets(tools.consolidate.name, "content", params.content, before, file)
        # Secrets let through as already in the file must still be there when it is written.
        expected = expected_hash or (read[0] if read else None)
        result = store.consolidate(
            file,
            params.content,
            expected_hash=expected,
            by=call.by,
            stage=staging(call),
            staged=call.staged,
        )
        return finish("consolidate", "Consolidated", result)

    handlers: tuple[tuple[ToolDefinition, Handler], ...] = (
        (tools.add, add),
        (tools.replace, replace),
        (tools.consolidate, consolidate),
    )
    for definition, handler in handlers:
        dispatcher.register(
            definition, handler if shown is None else _in_user_memory_words(handler, shown)
        )


def _in_user_memory_words(handler: Handler, path: str) -> Handler:
    """`handler`, its failures said of the user memory (`user_words`): to the agent, "your
    user memory (USER.md read in every workspace)" and its tools; to a person, its path and
    `--user` commands."""

    def run(params: BaseModel, call: Call) -> ToolResult:
        try:
            return handler(params, call)
        except MemoryStoreError as exc:
            raise user_memory_error(to_tool_error(exc), path) from exc
        except ToolExecutionError as exc:
            raise user_memory_error(exc, path) from exc.__cause__

    return run


def user_memory_error(error: ToolExecutionError, path: str) -> ToolExecutionError:
    """`error`, a failure of a write to the user memory at `path`, in its words."""
    return ToolExecutionError(
        error.code,
        for_agent(error.message),
        is_user_visible=error.is_user_visible,
        people=lambda surface: for_person(error.for_people(surface), path),
    )


REPLACE_ROUNDS = 8
"""Times a replace is judged again when another write lands between its read and its lock."""


def guarded_replace(
    store: MemoryStore,
    file: MemoryFile,
    old: str,
    new: str,
    tool: str,
    part: str = "new text",
    *,
    call: Call | None = None,
    stage: bool = False,
) -> WriteResult:
    """`store.replace`, written only onto the file the secret guard judged (a compare-and-swap
    on its hash): two replaces at once that each pass alone (`PART1PART2`, one making
    `ghp_…`, the other the rest) must not splice a token between the guard's read and the
    store's lock. A write that lands in between is read and judged again."""
    for _round in range(REPLACE_ROUNDS):
        snap = store.snapshot(file)  # one that cannot be read: the store's error, as the write's
        refuse_replace(
            tool, file.value, snap.text, old, new, part, user_memory=store.is_user_memory
        )
        try:
            return store.replace(
                file,
                old,
                new,
                expected_hash=snap.sha256,
                by=call.by if call else None,
                stage=stage,
                staged=call.staged if call else None,
            )
        except MemoryConflict:
            continue
    what = (
        f"{file.value} kept changing while this replace was being made ({REPLACE_ROUNDS} "
        "attempts, each overtaken by another write): nothing was written."
    )
    raise ToolExecutionError(
        "conflict",
        f"{tool}: {what} Read the file again and retry.",
        people=lambda surface: f"{surface.refused('replace')}: {what} Try again.",
    )


def memory_dispatcher(store: MemoryStore, sink: EventSink | None = None) -> ToolDispatcher:
    """A dispatcher holding the spec's three memory tools over `store`, and the user
    memory's three over `store.user_memory` (what every door offers an agent)."""
    dispatcher = ToolDispatcher()
    register_memory_tools(dispatcher, store, sink)
    register_user_memory_tools(dispatcher, store.user_memory, sink, review_of=store)
    return dispatcher
