"""Reading what another agent host keeps, for `metis-memory import`: its files are only ever
read, never written, and read as a hostile repository's are (`store/reading.py`): regular files
only, at most `MAX_FILE_BYTES` each, at most `MAX_FOLDER_FILES` looked at in a folder, not
deeper than `MAX_DEPTH`, the whole run within `MAX_SECONDS`, and never through a symlink that
leads out of the host's own folder (`~/.claude`, `~/.codex`...). A dotfiles manager's link
from `~/.claude/CLAUDE.md` into `~/dotfiles` is such a link: it is reported, not followed.
What is not read is said (`Skipped`), never silently passed over."""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ...store.errors import fmt_bytes
from ...store.reading import read_bounded
from ...store.within import is_within

MAX_FILE_BYTES = 256 * 2**10
"""A memory file larger than this is no memory anyone loads whole (Claude Code stops reading
its index at 25,000 B, Codex truncates its summary to a few thousand tokens)."""
MAX_FOLDER_FILES = 200
"""Files looked at in one folder (Qwen Code's own scan stops at 200 memory files)."""
MAX_DEPTH = 3
"""Folders below a memory folder that are looked into (Qwen Code's `pinned/`)."""
MAX_SECONDS = 10.0
"""One import's reading, all hosts together: past it, what is left is reported unread."""
MAX_LISTED = 2_000
"""Entries of a folder listed while searching it (VS Code's `workspaceStorage/`, Gemini
CLI's `tmp/`): a folder of more is searched no further."""


@dataclass(frozen=True)
class Skipped:
    """A host file that was not read, and why (shown to the user: never its content)."""

    path: str
    reason: str


@dataclass(frozen=True)
class Context:
    """Where one import looks: the workspace (its real path), the home folder and the
    environment the hosts' variables come from (`CLAUDE_CONFIG_DIR`, `CODEX_HOME`...)."""

    workspace: Path
    home: Path
    env: Mapping[str, str]

    def variable(self, name: str) -> str | None:
        """A variable's value, None when unset or empty."""
        value = self.env.get(name, "")
        return value or None

    def folder(self, name: str, default: Path) -> Path:
        """An absolute folder named by variable `name` (a leading `~/` is the home), else
        `default`: a relative value is not taken (the hosts resolve it against their own
        working folder, which is not ours)."""
        value = self.variable(name)
        if value is None:
            return default
        if value == "~" or value.startswith("~/"):
            return self.home / value[2:]
        path = Path(value)
        return path if path.is_absolute() else default


@dataclass
class Reader:
    """One import's reading: its deadline, and what it looked at, read and skipped."""

    seconds: float = MAX_SECONDS
    looked_in: list[str] = field(default_factory=list)
    read: list[str] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    _deadline: float = 0.0

    def __post_init__(self) -> None:
        self._deadline = time.monotonic() + self.seconds

    def out_of_time(self, path: Path | str) -> bool:
        """Whether the run's time is spent (then `path` is reported unread)."""
        if time.monotonic() <= self._deadline:
            return False
        self.skip(path, f"not read: the import's {self.seconds:g} s for reading were spent")
        return True

    def look(self, path: Path) -> None:
        """Record a place looked at (for "nothing found (looked in: ...)")."""
        shown = str(path)
        if shown not in self.looked_in:
            self.looked_in.append(shown)

    def skip(self, path: Path | str, reason: str) -> None:
        self.skipped.append(Skipped(str(path), reason))

    def text(self, path: Path, root: Path) -> str | None:
        """The text of the file at `path` in the host's folder `root`; None when there is
        none. A file that is there but cannot be taken (a link leading out of `root`, not a
        regular file, too large, not UTF-8) is reported in `skipped` and None."""
        if self.out_of_time(path):
            return None
        try:
            st = os.lstat(path)
        except OSError:
            return None
        if not is_within(path, root):
            self.skip(path, f"it is reached through a symlink leading out of {root}: not read")
            return None
        # A link within the host's folder is read where it leads (the last component of that
        # path is opened without following a link: `read_bounded`).
        real = Path(os.path.realpath(path)) if stat.S_ISLNK(st.st_mode) else path
        found = read_bounded(real, MAX_FILE_BYTES)
        if found.text is None:
            if found.problem and "too large" in found.problem:
                why = f"it is {fmt_bytes(found.size)}, over the {fmt_bytes(MAX_FILE_BYTES)} read"
                self.skip(path, f"{why} for one host file: not read")
            else:
                self.skip(path, f"{found.problem}" if found.problem else "it cannot be read")
            return None
        if "\x00" in found.text:
            self.skip(path, "it holds a NUL character: not text, not read")
            return None
        self.read.append(str(path))
        return found.text

    def files(
        self,
        folder: Path,
        root: Path,
        *,
        suffix: str = ".md",
        recursive: bool = False,
        exclude: tuple[str, ...] = (),
    ) -> list[Path]:
        """The files of `folder` (in the host's folder `root`) named `*suffix` (any name
        with "" ), sorted, hidden ones (`.name`) and `exclude`d names left out; with
        `recursive`, those of its folders too, `MAX_DEPTH` deep. Bounded by
        `MAX_FOLDER_FILES`: the rest is reported."""
        if not folder_within(folder, root):
            if os.path.lexists(folder):
                self.skip(folder, f"it leads out of {root} through a symlink: not read")
            return []
        found: list[Path] = []
        queue: list[tuple[Path, int]] = [(folder, 0)]
        listed_in_part = False
        while queue:
            current, depth = queue.pop(0)
            if self.out_of_time(current):  # (the folders left are not listed either)
                return found
            try:
                with os.scandir(current) as it:
                    listed = [e for _, e in zip(range(MAX_LISTED + 1), it, strict=False)]
            except OSError:
                continue
            if len(listed) > MAX_LISTED:  # which were listed is the file system's order
                listed_in_part = True
                self.skip(
                    current,
                    f"it holds more than {MAX_LISTED:,} entries: {MAX_LISTED:,} of them, in "
                    "the order the file system lists them, were looked at",
                )
            entries = sorted(listed[:MAX_LISTED], key=lambda e: e.name)
            for entry in entries:
                if entry.name.startswith("."):
                    continue
                path = Path(entry.path)
                try:
                    is_dir = entry.is_dir(follow_symlinks=False)
                except OSError:
                    continue
                if is_dir:
                    if recursive and depth + 1 <= MAX_DEPTH:
                        queue.append((path, depth + 1))
                    continue
                if not entry.name.endswith(suffix) or entry.name in exclude:
                    continue
                if len(found) == MAX_FOLDER_FILES:
                    looked_at = " of those looked at" if listed_in_part else ""
                    self.skip(
                        folder,
                        f"it holds more than {MAX_FOLDER_FILES} files: the first "
                        f"{MAX_FOLDER_FILES} (by name){looked_at} were read",
                    )
                    return found
                found.append(path)
        return found


def folder_within(folder: Path, root: Path) -> bool:
    """Whether `folder` is a folder in `root`, symlinks resolved (a missing one is not)."""
    return os.path.isdir(folder) and is_within(folder, root)


def exists(path: Path) -> bool:
    """Whether something is at `path` worth offering an import for: a non-empty file, or a
    folder holding at least one entry (one `lstat`, one directory entry: cheap)."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    if stat.S_ISDIR(st.st_mode):
        try:
            with os.scandir(path) as it:
                return any(not e.name.startswith(".") for _, e in zip(range(64), it, strict=False))
        except OSError:
            return False
    return st.st_size > 0 or stat.S_ISLNK(st.st_mode)
