"""Store errors. Each message says what happened, the numbers, and what to do next."""

from __future__ import annotations

import errno
import os

TYPE_CHECKING = False
if TYPE_CHECKING:  # (`typing` is not imported at run time: the hook imports this)
    from typing import TypeAlias

    StrPath: TypeAlias = "str | os.PathLike[str]"
    """A path as the store's callers give it; the store itself keeps `str`s (`pathlib`
    costs a hook process a quarter of its imports)."""


def fmt_bytes(n: int) -> str:
    """Thousands-separated byte count, e.g. '2,311 B'."""
    return f"{n:,} B"


def short_repr(value: object, limit: int = 80) -> str:
    """`repr(value)`, cut to `limit` characters: messages never echo a huge input back."""
    text = repr(value) if not isinstance(value, str) or len(value) <= limit else repr(value[:limit])
    return text if len(text) <= limit else text[: limit - 3] + "..."


class MemoryStoreError(Exception):
    """Base of every error the store raises on purpose."""


class InvalidMemoryFile(MemoryStoreError, ValueError):
    """`file` was neither MemoryFile nor the exact name of one."""

    def __init__(self, file: object) -> None:
        self.file = file
        super().__init__(
            f"unknown memory file {short_repr(file)}: use exactly 'MEMORY.md' or 'USER.md' "
            "(memory files are named, never given as paths)"
        )


class NotInUserMemory(InvalidMemoryFile):
    """MEMORY.md asked of the user memory, which holds only USER.md."""

    def __init__(self, file: str) -> None:
        super().__init__(file)
        self.args = (
            "the user memory holds only USER.md (facts about you, read in every workspace); "
            f"{file} is a workspace's file: write it in that workspace",
        )


class EmptyEntry(MemoryStoreError, ValueError):
    """An add whose entry is empty or only whitespace."""

    def __init__(self, file: str) -> None:
        self.file = file
        super().__init__(
            f"entry for {file} is empty or only whitespace: nothing was written; "
            "pass the fact to remember as non-blank text"
        )


class EmptyOldText(MemoryStoreError, ValueError):
    """A replace whose `old` is empty: it would match everywhere."""

    def __init__(self, file: str) -> None:
        self.file = file
        super().__init__(
            f"'old' is empty: it would match everywhere in {file}; "
            "pass the exact text of the entry to change"
        )


class OldTextNotFound(MemoryStoreError, ValueError):
    """A replace whose `old` does not occur in the file."""

    def __init__(self, file: str, old: str) -> None:
        self.file = file
        self.old = old
        super().__init__(
            f"text to replace was not found in {file}: nothing was written; "
            f"copy 'old' exactly (whitespace and case matter) from the current {file}"
        )


class OldTextNotUnique(MemoryStoreError, ValueError):
    """A replace whose `old` occurs more than once."""

    def __init__(self, file: str, old: str, count: int) -> None:
        self.file = file
        self.old = old
        self.count = count
        super().__init__(
            f"text to replace occurs {count} times in {file}, it must occur exactly once: "
            "nothing was written; include more surrounding text in 'old' so it matches one place"
        )


class MemoryHardCapExceeded(MemoryStoreError):
    """A write whose result would be larger than the file's hard cap; the file is unchanged."""

    def __init__(
        self,
        file: str,
        operation: str,
        current_size: int,
        attempted_size: int,
        soft_cap: int,
        hard_cap: int,
    ) -> None:
        self.file = file
        self.operation = operation
        self.current_size = current_size
        self.attempted_size = attempted_size
        self.soft_cap = soft_cap
        self.hard_cap = hard_cap
        over = attempted_size - hard_cap
        super().__init__(
            f"{operation} rejected: {file} would be {fmt_bytes(attempted_size)}, "
            f"{fmt_bytes(over)} over its hard cap of {fmt_bytes(hard_cap)} "
            f"(now {fmt_bytes(current_size)}; soft cap {fmt_bytes(soft_cap)}). "
            "Nothing was written. " + self._next_step()
        )

    def _next_step(self) -> str:
        if self.operation == "consolidate":  # what just failed: say how large it may be
            return (
                f"The new content may be at most {fmt_bytes(self.hard_cap)}: shorten it by at "
                f"least {fmt_bytes(self.attempted_size - self.hard_cap)} (aim for under the "
                f"{fmt_bytes(self.soft_cap)} soft cap: merge, shorten or drop entries), then "
                "call memory_consolidate again."
            )
        return (
            f"Consolidate {self.file} with memory_consolidate to under "
            f"{fmt_bytes(self.soft_cap)} (merge, shorten or drop entries), then retry."
        )


class NotUtf8(MemoryStoreError):
    """The file on disk is not valid UTF-8: an edit would destroy bytes it cannot represent."""

    def __init__(self, file: str, offset: int) -> None:
        self.file = file
        self.offset = offset
        super().__init__(
            f"{file} is not valid UTF-8 (first bad byte at offset {offset:,}): refusing to edit it "
            "so the original bytes are not lost. Fix the file by hand, or replace all of it "
            "with memory_consolidate."
        )


class UnsafePath(MemoryStoreError):
    """A symlinked `.metis/` or memory file that resolves outside the workspace."""

    def __init__(
        self, path: StrPath, resolved: StrPath, workspace: StrPath, *, user_memory: bool = False
    ) -> None:
        self.path = path
        self.resolved = resolved
        self.workspace = workspace
        if user_memory:
            text = (
                f"{path} resolves to {resolved}, outside its folder {workspace}: your user "
                "memory is read in every workspace, so it follows no link out of its folder. "
                "Replace the symlink with a real file or folder there."
            )
        else:
            text = (
                f"{path} resolves to {resolved}, outside the workspace {workspace}: refusing to "
                "read or write memory there. Replace the symlink with a real file or directory "
                "inside the workspace."
            )
        super().__init__(text)

    def for_user_memory(self) -> UnsafePath:
        """The same refusal, said of the user memory."""
        return UnsafePath(self.path, self.resolved, self.workspace, user_memory=True)


class StorageError(MemoryStoreError):
    """The filesystem refused (disk full, read-only, permission, `.metis` is a file...)."""

    def __init__(self, action: str, path: StrPath, cause: OSError, hint: str | None = None) -> None:
        self.action = action
        self.path = path
        self.cause = cause
        reason = cause.strerror or str(cause)
        super().__init__(
            f"could not {action} {path}: {reason}. Nothing was changed. "
            f"{hint or _hint(cause, action)}"
        )

    @classmethod
    def wrong_kind(cls, action: str, path: StrPath, kind: str) -> StorageError:
        """`path` is `kind` (a symlink, a directory...) where the store needs a regular file
        it owns: say so, rather than the errno's generic meaning."""
        cause = OSError(errno.EINVAL, f"it is {kind}, not a regular file")
        name = os.path.basename(path)
        what = "the store's lock file" if name == ".lock" else "a memory file"
        return cls(
            action,
            path,
            cause,
            f"{name} must be {what}: remove or move it away, and the next write recreates it.",
        )


class MemoryFileTooLarge(MemoryStoreError):
    """A memory file far past its hard cap (written behind the store's back): reading it
    whole could exhaust memory, so it is refused before any byte is read."""

    def __init__(self, file: str, size: int, limit: int, hard_cap: int) -> None:
        self.file = file
        self.size = size
        self.limit = limit
        self.hard_cap = hard_cap
        super().__init__(
            f"{file} is {fmt_bytes(size)}, far past its hard cap of {fmt_bytes(hard_cap)}; "
            f"the store reads at most {fmt_bytes(limit)}, so nothing was read or written. "
            f"Replace the whole file with memory_consolidate (it does not need to read the "
            f"old content), or trim {file} by hand."
        )


class MemoryConflict(MemoryStoreError):
    """A compare-and-swap write whose file changed since the caller read it: writing would
    drop whatever landed in between, so nothing is written."""

    def __init__(self, file: str, expected_hash: str, actual_hash: str | None, size: int) -> None:
        self.file = file
        self.expected_hash = expected_hash
        self.actual_hash = actual_hash
        self.size = size
        now = f"sha256 {actual_hash[:12]}…" if actual_hash else "too large to hash"
        super().__init__(
            f"{file} changed since it was read: it was expected to be sha256 "
            f"{expected_hash[:12]}…, and is now {now} ({fmt_bytes(size)}). "
            f"Nothing was written, so the other write is kept. Re-read {file} and retry with "
            "the new content."
        )


class LockTimeout(MemoryStoreError):
    """Another writer held the workspace lock for too long."""

    def __init__(self, path: StrPath, seconds: float) -> None:
        self.path = path
        self.seconds = seconds
        super().__init__(
            f"another process held the memory lock {path} for over {seconds:g} s: nothing was "
            "written. Retry; if it persists, find the process writing memory in this workspace."
        )


class StagedChangeGone(MemoryStoreError):
    """A staged change that is no longer waiting (accepted or rejected meanwhile, or never
    staged): nothing is written."""

    def __init__(self, staged_id: int) -> None:
        self.staged_id = staged_id
        super().__init__(
            f"no change #{staged_id} waits for review (it was accepted or rejected already, or "
            "never staged): nothing was written. List what waits with `metis-memory review`."
        )


class ReviewInboxFull(MemoryStoreError):
    """Review is on and the inbox holds its limit of waiting changes."""

    def __init__(self, file: str, waiting: int) -> None:
        self.file = file
        self.waiting = waiting
        super().__init__(
            f"{waiting} changes already wait for the user's review, the most the inbox holds: "
            f"this change to {file} was not staged and nothing was written. Ask the user to "
            "review the waiting changes (accept or reject them), then retry."
        )


class TooLargeToReview(MemoryStoreError):
    """Review is on and an agent's write would stage a file far past its hard cap (an outside
    edit made it so): the inbox keeps the file as it was for the diff, and is bounded."""

    def __init__(self, file: str, operation: str, size: int, hard_cap: int, limit: int) -> None:
        self.file = file
        self.operation = operation
        self.size = size
        self.hard_cap = hard_cap
        self.limit = limit
        what = {"add": "addition", "replace": "replacement", "consolidate": "consolidation"}
        super().__init__(
            f"{file} is {fmt_bytes(size)}, far past its hard cap of {fmt_bytes(hard_cap)}: a "
            "change to it can wait for the user's review only while the file is at most "
            f"{fmt_bytes(limit)} (the review keeps the file as it was, for its diff), so this "
            f"{what.get(operation, 'change')} was not staged and nothing was written. Ask the "
            f"user to shorten .metis/{file} themselves."
        )


def _hint(cause: OSError, action: str) -> str:
    access = "read" if action in ("read", "inspect", "open the workspace") else "write"
    hints = {
        errno.ENOSPC: "The disk is full: free some space and retry.",
        errno.EDQUOT: "The disk quota is exhausted: free some space and retry.",
        errno.EROFS: "The filesystem is read-only: make it writable and retry.",
        errno.EACCES: f"Permission denied: give your user {access} access to it and retry.",
        errno.EPERM: "Operation not permitted: check the permissions of the path and retry.",
        errno.ENOTDIR: "A file stands where a directory is needed: move it away so .metis "
        "can be a directory.",
        errno.EEXIST: "A file stands where the .metis directory is needed: move it away.",
        errno.EISDIR: "A directory stands where the memory file is needed: move it away.",
        errno.EFBIG: "A file-size limit (ulimit -f) stopped the write: raise it and retry.",
        errno.ELOOP: "A symlink loop, or a symlink swapped in while the store was using the "
        "path: point the symlink at a real file or directory (or remove it) and retry.",
    }
    return hints.get(cause.errno or 0, "Check the path and its permissions, then retry.")


class InvalidText(MemoryStoreError, ValueError):
    """Text that cannot be stored as a UTF-8 markdown file (lone surrogates, NUL bytes)."""

    def __init__(
        self, file: str, field: str, reason: str, consequence: str = "nothing was written"
    ) -> None:
        self.file = file
        self.field = field
        self.reason = reason
        super().__init__(f"{field} for {file} {reason}: {consequence}; send plain UTF-8 text")


class ConfigRefused(Exception):
    """A configuration file outside `.metis/` that `init` will not touch; the text says why
    and what to do."""
