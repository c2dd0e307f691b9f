"""Claude's API memory tool (`memory_20250818`) backed by a workspace's Metis memory.

For applications that call the Anthropic API (or Agent SDK) directly: pass
`MetisMemoryTool(workspace)` in `tools=` of `client.beta.messages.tool_runner(...)`.
The tool's `/memories` directory holds exactly two files, `/memories/MEMORY.md` and
`/memories/USER.md`, which are `.metis/MEMORY.md` and `.metis/USER.md`; every write goes
through the store, so the caps, the lock and atomic writes apply as for any other
writer. Any other path is a tool error that says which two exist.

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
user instead of being written, and the model is told so with the change's id: `str_replace`
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

T = TypeVar("T")

ROOT = "/memories"
REWRITE_ATTEMPTS = 8
"""Read-modify-write rounds before giving up when other writers keep landing in between."""
LINE_NUMBER_WIDTH = 6
"""As the SDK's filesystem tool numbers lines (`len(str(999999))`)."""
ACTOR = "Anthropic memory tool"
"""Who the write log says wrote, when the application does not say (`actor=`)."""


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
    ) -> None:
        super().__init__(cache_control=cache_control)
        self.store = MemoryStore(workspace)
        self.by = Provenance("anthropic-memory-tool", actor or ACTOR, session)

    # ---- reads ---------------------------------------------------------------------------
    def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        if command.path.rstrip("/") == ROOT:
            rows = [f"{self._size(f)}\t{ROOT}/{f.value}" for f in MemoryFile]
            caps = "; ".join(
                f"{f.value}: soft cap {fmt_bytes(CAPS[f].soft)}, hard cap {fmt_bytes(CAPS[f].hard)}"
                for f in MemoryFile
            )
            return (
                f"Here're the files and directories up to 2 levels deep in {command.path}, "
                f"excluding hidden items:\n" + "\n".join(rows) + f"\n(Metis Memory caps: {caps}.)"
            )
        f = _file(command.path)
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
        f = _file(command.path)

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
        f = _file(command.path)
        stage = self._staging()
        try:
            result = self._guard(
                lambda: guarded_replace(
                    self.store,
                    f,
                    command.old_str,
                    command.new_str,
                    "str_replace",
                    "new_str",
                    call=Call(by=self.by),
                    stage=stage,
                )
            )
        except ToolExecutionError as exc:
            raise ToolError(exc.message) from exc
        return self._written(command.path, result)

    def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        f = _file(command.path)

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
            raise ToolError(f"{ROOT} itself cannot be deleted; delete one of its two files.")
        f = _file(command.path)
        result = self._rewrite(f, lambda _text: "", "delete", "file", f"delete {command.path}")
        if result.staged is not None:
            return _staged(command.path, result)
        return f"File deleted: {command.path} (Metis keeps the file, now empty)"

    def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        raise ToolError(
            f"Cannot rename {command.old_path}: Metis Memory keeps exactly two files, "
            f"{ROOT}/MEMORY.md and {ROOT}/USER.md, under those names."
        )

    # ---- helpers -------------------------------------------------------------------------
    def _text(self, f: MemoryFile) -> str:
        return self._guard(lambda: self.store.snapshot(f)).text

    def _size(self, f: MemoryFile) -> str:
        size = self._guard(lambda: self.store.size_bytes(f))
        return f"{size}B" if size < 1024 else f"{size / 1024:.1f}K"

    def _staging(self) -> bool:
        """Whether this write waits for the user: review is on (the tool's writes are always
        an agent's)."""
        return self._guard(self.store.review_enabled)

    def _rewrite(
        self, f: MemoryFile, change: Callable[[str], str], command: str, part: str, detail: str
    ) -> WriteResult:
        """Read, change, and write back only if nothing was written in between (the store's
        compare-and-swap); a write that lands in between is re-read and the change made
        again, so a concurrent `add` from the CLI or an editor is never overwritten. The
        write log shows it as a consolidation (the whole file rewritten, what it removes
        archived) by the memory tool, its `detail` naming the command."""
        stage = self._staging()
        for _attempt in range(REWRITE_ATTEMPTS):
            snap = self._guard(lambda: self.store.snapshot(f))
            updated = change(snap.text)
            _refuse_secrets(command, part, updated, snap.text, f)
            try:
                return self.store.consolidate(
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
                raise ToolError(to_tool_error(exc).message) from exc
        raise ToolError(
            f"{ROOT}/{f.value} kept changing while this edit was being made ({REWRITE_ATTEMPTS} "
            "attempts, each overtaken by another writer): nothing was written. View the file "
            "again and retry."
        )

    @staticmethod
    def _guard(call: Callable[[], T]) -> T:
        try:
            return call()
        except MemoryStoreError as exc:
            raise ToolError(to_tool_error(exc).message) from exc

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


def _refuse_secrets(command: str, part: str, text: str, before: str, f: MemoryFile) -> None:
    try:
        refuse_new_secrets(command, part, text, before, f)
    except ToolExecutionError as exc:
        raise ToolError(exc.message) from exc


def _file(path: str) -> MemoryFile:
    for f in MemoryFile:
        if path == f"{ROOT}/{f.value}":
            return f
    raise ToolError(
        f"The path {path} does not exist. Metis Memory keeps exactly two files: "
        f"{ROOT}/MEMORY.md (facts about the workspace) and {ROOT}/USER.md (facts about the user)."
    )
