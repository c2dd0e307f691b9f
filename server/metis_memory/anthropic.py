"""Claude's API memory tool (`memory_20250818`) backed by a workspace's Metis memory.

For applications that call the Anthropic API (or Agent SDK) directly: pass
`MetisMemoryTool(workspace)` in `tools=` of `client.beta.messages.tool_runner(...)`.
The tool's `/memories` directory holds exactly two files, `/memories/MEMORY.md` and
`/memories/USER.md`, which are `.metis/MEMORY.md` and `.metis/USER.md`, and the user memory,
`/memories/user-memory/USER.md` (one USER.md read in every workspace,
`$XDG_CONFIG_HOME/metis-memory/USER.md`; `user_memory=False` leaves it out, for an
application whose model acts for someone other than the account it runs as); every write goes
through the store, so the caps, the lock and atomic writes apply as for any other
writer. Any other path is a tool error that says which exist.

Command semantics follow the SDK's own `BetaLocalFilesystemMemoryTool` (anthropic
`lib/tools/_beta_builtin_memory_tool.py`, 2.12), so the model sees the texts it was
trained on: line-numbered views, `create` refusing an existing file, `str_replace`
requiring one occurrence. Two differences: the two files always exist (so `delete`
empties one, and `create` fills an empty one), and nothing can be renamed. As through every
other door, a write that adds a suspected secret is refused (`tools/secret_guard.py`), and
what the model is shown has secrets redacted (`tools/redaction.py`).

Every write is logged as the memory tool's (door `anthropic-memory-tool`; the actor is what
the application passes as `actor`, say its model, else "Anthropic memory tool"). With review
on (`metis-memory review on`) each write command is checked as usual and then waits for the
user instead of being written (the user memory's: also while review is on for it), and the
model is told so with the change's id: `str_replace`
as a replace (accepted onto the file as it is then), `create`, `insert` and `delete` as the
whole file they would leave (accepted only onto the file they were made against).

Needs the `anthropic` extra: `pip install 'metis-agent-memory[anthropic]'`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from anthropic.lib.tools import BetaAbstractMemoryTool, ToolError
from anthropic.types.beta import (
    BetaCacheControlEphemeralParam,
    BetaMemoryTool20250818CreateCommand,
    BetaMemoryTool20250818DeleteCommand,
    BetaMemoryTool20250818InsertCommand,
    BetaMemoryTool20250818RenameCommand,
    BetaMemoryTool20250818StrReplaceCommand,
    BetaMemoryTool20250818ViewCommand,
)

from .store.errors import MemoryConflict, MemoryStoreError, fmt_bytes
from .store.files import CAPS, MemoryFile
from .store.memory_store import MemoryStore, WriteResult
from .store.provenance import Provenance
from .tools.dispatch import Call, guarded_replace, to_tool_error
from .tools.errors import ToolExecutionError
from .tools.redaction import redact
from .tools.secret_guard import refuse_new_secrets
from .tools.user_words import in_user_memory_words

T = TypeVar("T")
Target = tuple[MemoryStore, MemoryFile]
"""A file the tool shows: the workspace's two, or the user memory's USER.md."""

ROOT = "/memories"
USER_MEMORY_DIR = f"{ROOT}/user-memory"
USER_MEMORY_PATH = f"{USER_MEMORY_DIR}/USER.md"
"""The user memory, as the memory tool shows it."""
REWRITE_ATTEMPTS = 8
"""Read-modify-write rounds before giving up when other writers keep landing in between."""
LINE_NUMBER_WIDTH = 6
"""As the SDK's filesystem tool numbers lines (`len(str(999999))`)."""
ACTOR = "Anthropic memory tool"
"""Who the write log says wrote, when the application does not say (`actor=`)."""
USER_MEMORY_ABOUT = (
    f"{USER_MEMORY_PATH} is the user memory: facts about the user that hold in every "
    "workspace (their language, how they like answers written, their review habits), read in "
    "every workspace before its own USER.md; workspace facts (paths, commands, make targets) "
    "never go there"
)


class MetisMemoryTool(BetaAbstractMemoryTool):
    """The memory tool over one workspace's `.metis/` files. `actor` names who writes in the
    write log (the model the application runs, e.g. "claude-sonnet-4-6", or the application
    itself); `session`, the conversation, where the application has an id for it."""

    def __init__(
        self,
        workspace: str | Path,
        *,
        cache_control: BetaCacheControlEphemeralParam | None = None,
        actor: str | None = None,
        session: str | None = None,
        user_memory: bool = True,
    ) -> None:
        super().__init__(cache_control=cache_control)
        self.store = MemoryStore(workspace)
        self.by = Provenance("anthropic-memory-tool", actor or ACTOR, session)
        self.user_memory = user_memory
        """Whether the user memory is offered at `/memories/user-memory/USER.md`."""

    # ---- reads ---------------------------------------------------------------------------
    def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        folder = command.path.rstrip("/")
        if folder == ROOT or (self.user_memory and folder == USER_MEMORY_DIR):
            rows = []
            if folder == ROOT:
                rows = [f"{self._size((self.store, f))}\t{ROOT}/{f.value}" for f in MemoryFile]
            if self.user_memory:
                user = (self.store.user_memory, MemoryFile.USER)
                try:
                    rows += [f"{self._size(user)}\t{USER_MEMORY_PATH}"]
                except ToolError as exc:  # (its refusal never hides the workspace's files)
                    why = " ".join(str(exc).split())
                    rows += [f"-\t{USER_MEMORY_PATH} (not read: {why})"]
            caps = "; ".join(
                f"{f.value}: soft cap {fmt_bytes(CAPS[f].soft)}, hard cap {fmt_bytes(CAPS[f].hard)}"
                for f in MemoryFile
            )
            about = f" {USER_MEMORY_ABOUT}" if self.user_memory else ""
            return (
                f"Here're the files and directories up to 2 levels deep in {command.path}, "
                f"excluding hidden items:\n"
                + "\n".join(rows)
                + f"\n(Metis Memory caps: {caps}.{about})"
            )
        f = self._file(command.path)
        lines = redact(self._text(f)).split("\n")
        start = 1
        if command.view_range and len(command.view_range) == 2:
            first, last = command.view_range
            start = max(1, first)
            lines = lines[start - 1 : len(lines) if last == -1 else last]
        numbered = [
            f"{str(i + start).rjust(LINE_NUMBER_WIDTH)}\t{line}" for i, line in enumerate(lines)
        ]
        return f"Here's the content of {command.path} with line numbers:\n" + "\n".join(numbered)

    # ---- writes --------------------------------------------------------------------------
    def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        f = self._file(command.path)

        def filled(text: str) -> str:
            if text.strip():
                raise ToolError(
                    f"File {command.path} already exists. Edit it with str_replace or insert, "
                    "or delete it first to rewrite it whole."
                )
            return command.file_text

        result = self._rewrite(f, filled, "create", "file_text", f"create {command.path}")
        return self._written(command.path, result)

    def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        store, f = self._file(command.path)
        stage = self._staging(store)
        try:
            result = self._guard(
                store,
                lambda: guarded_replace(
                    store,
                    f,
                    command.old_str,
                    command.new_str,
                    "str_replace",
                    "new_str",
                    call=Call(by=self.by),
                    stage=stage,
                ),
            )
        except ToolExecutionError as exc:
            raise ToolError(_said(store, exc.message)) from exc
        return self._written(command.path, result)

    def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        f = self._file(command.path)

        def inserted(current: str) -> str:
            lines = current.split("\n")
            if not 0 <= command.insert_line <= len(lines):
                raise ToolError(
                    f"Invalid `insert_line` parameter: {command.insert_line}. It should be "
                    f"within the range of lines of the file: [0, {len(lines)}]"
                )
            text = command.insert_text.rstrip("\n").split("\n")
            return "\n".join(lines[: command.insert_line] + text + lines[command.insert_line :])

        at = f"insert at line {command.insert_line} of {command.path}"
        result = self._rewrite(f, inserted, "insert", "file after the insert", at)
        return self._written(command.path, result)

    def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        if command.path.rstrip("/") == ROOT:
            raise ToolError(f"{ROOT} itself cannot be deleted; delete one of its files.")
        if self.user_memory and command.path.rstrip("/") == USER_MEMORY_DIR:
            raise ToolError(
                f"{USER_MEMORY_DIR} itself cannot be deleted; delete {USER_MEMORY_PATH} to "
                "empty the user memory."
            )
        f = self._file(command.path)
        result = self._rewrite(f, lambda _text: "", "delete", "file", f"delete {command.path}")
        if result.staged is not None:
            return _staged(command.path, result)
        return f"File deleted: {command.path} (Metis keeps the file, now empty)"

    def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        also = f", and {USER_MEMORY_PATH}" if self.user_memory else ""
        raise ToolError(
            f"Cannot rename {command.old_path}: Metis Memory keeps exactly two files, "
            f"{ROOT}/MEMORY.md and {ROOT}/USER.md{also}, under those names."
        )

    # ---- helpers -------------------------------------------------------------------------
    def _file(self, path: str) -> Target:
        """The store and file `path` names (the user memory's, when offered)."""
        if self.user_memory and path == USER_MEMORY_PATH:
            return self.store.user_memory, MemoryFile.USER
        for f in MemoryFile:
            if path == f"{ROOT}/{f.value}":
                return self.store, f
        also = f", and {USER_MEMORY_PATH} ({USER_MEMORY_ABOUT})" if self.user_memory else ""
        raise ToolError(
            f"The path {path} does not exist. Metis Memory keeps exactly two files: "
            f"{ROOT}/MEMORY.md (facts about the workspace) and {ROOT}/USER.md (facts about the "
            f"user){also}."
        )

    def _text(self, target: Target) -> str:
        store, f = target
        return self._guard(store, lambda: store.snapshot(f)).text

    def _size(self, target: Target) -> str:
        store, f = target
        size = self._guard(store, lambda: store.size_bytes(f))
        return f"{size}B" if size < 1024 else f"{size / 1024:.1f}K"

    def _staging(self, store: MemoryStore) -> bool:
        """Whether this write waits for the user: review is on (the tool's writes are always
        an agent's); for the user memory, on for it or for this workspace."""
        if store is self.store:
            return self._guard(store, store.review_enabled)
        return self._guard(store, store.review_enabled) or self._guard(
            self.store, self.store.review_enabled
        )

    def _rewrite(
        self, target: Target, change: Callable[[str], str], command: str, part: str, detail: str
    ) -> WriteResult:
        """Read, change, and write back only if nothing was written in between (the store's
        compare-and-swap); a write that lands in between is re-read and the change made
        again, so a concurrent `add` from the CLI or an editor is never overwritten. The
        write log shows it as a consolidation (the whole file rewritten, what it removes
        archived) by the memory tool, its `detail` naming the command."""
        store, f = target
        stage = self._staging(store)
        for _attempt in range(REWRITE_ATTEMPTS):
            snap = self._guard(store, lambda: store.snapshot(f))
            updated = change(snap.text)
            _refuse_secrets(store, command, part, updated, snap.text, f)
            try:
                return store.consolidate(
                    f,
                    updated,
                    expected_hash=snap.sha256,
                    by=self.by,
                    detail=f"memory tool: {detail}",
                    stage=stage,
                )
            except MemoryConflict:
                continue
            except MemoryStoreError as exc:
                raise ToolError(_said(store, to_tool_error(exc).message)) from exc
        shown = USER_MEMORY_PATH if store.is_user_memory else f"{ROOT}/{f.value}"
        raise ToolError(
            f"{shown} kept changing while this edit was being made ({REWRITE_ATTEMPTS} "
            "attempts, each overtaken by another writer): nothing was written. View the file "
            "again and retry."
        )

    @staticmethod
    def _guard(store: MemoryStore, call: Callable[[], T]) -> T:
        try:
            return call()
        except MemoryStoreError as exc:
            raise ToolError(_said(store, to_tool_error(exc).message)) from exc

    def _written(self, path: str, result: WriteResult) -> str:
        if result.staged is not None:
            return _staged(path, result)
        caps = CAPS[result.file]
        note = (
            f" It is over its {fmt_bytes(caps.soft)} soft cap: consolidate it (rewrite it shorter)."
            if result.over_soft_cap
            else ""
        )
        return (
            f"The memory file {path} has been saved ({fmt_bytes(result.after_size_bytes)} of "
            f"{fmt_bytes(caps.hard)} at most).{note} It now reads:\n{redact(result.content)}"
        )


def _staged(path: str, result: WriteResult) -> str:
    """What the model reads when its write waits for the user's review (not an error: the
    write was fine; retrying it would only stage it again)."""
    assert result.staged is not None
    return (
        f"Staged for the user's review as change #{result.staged.id}: {path} is unchanged "
        "until the user accepts it (they may reject it). Do not retry this edit; carry on "
        "with your task."
    )


def _refuse_secrets(
    store: MemoryStore, command: str, part: str, text: str, before: str, f: MemoryFile
) -> None:
    try:
        refuse_new_secrets(command, part, text, before, f, user_memory=store.is_user_memory)
    except ToolExecutionError as exc:
        raise ToolError(exc.message) from exc


def _said(store: MemoryStore, message: str) -> str:
    """A store's message about USER.md, said of the user memory when it is the user memory's
    (this door has no user_memory_* tools: the tools it names stay as they are)."""
    if not store.is_user_memory:
        return message
    named = f"your user memory ({USER_MEMORY_PATH}, read in every workspace)"
    return in_user_memory_words(message, named=named, path=USER_MEMORY_PATH, tools=False)
