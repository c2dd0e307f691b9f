"""Each memory file's use of its budget, the one report behind `check`, `memory_read`, the
hook and the language server's usage: a file that cannot be read says "unreadable,
because ..." everywhere rather than "0 B, within caps"."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .errors import MemoryFileTooLarge, MemoryStoreError
from .files import CAPS, MemoryFile
from .memory_store import MemorySnapshot, MemoryStore

Source = Literal["buffer", "disk"]
Level = Literal["ok", "warning", "error"]

STATES: dict[Level, str] = {
    "ok": "within budget",
    "warning": "over the soft cap: consolidate before adding more",
    "error": "over the hard cap: writes are refused until it is consolidated",
}


@dataclass(frozen=True)
class Usage:
    file: MemoryFile
    size_bytes: int
    source: Source
    """``buffer``: the editor's unsaved text; ``disk``: the file as stored."""
    error: str | None = None
    """Why the file cannot be read (a directory, a FIFO, a symlink out of the workspace,
    permissions): its size is then unknown, never "0 B, within caps"."""

    @property
    def soft_cap(self) -> int:
        return CAPS[self.file].soft

    @property
    def hard_cap(self) -> int:
        return CAPS[self.file].hard

    @property
    def over_soft_cap(self) -> bool:
        return self.size_bytes > self.soft_cap

    @property
    def over_hard_cap(self) -> bool:
        return self.size_bytes > self.hard_cap

    @property
    def percent_of_soft(self) -> int:
        return round(100 * self.size_bytes / self.soft_cap)

    @property
    def percent_of_hard(self) -> int:
        return round(100 * self.size_bytes / self.hard_cap)

    @property
    def level(self) -> Level:
        """What an editor colours: `error` when writes are refused or the size is unknown."""
        if self.error is not None or self.over_hard_cap:
            return "error"
        return "warning" if self.over_soft_cap else "ok"

    @property
    def state(self) -> str:
        """The sentence an editor shows beside the numbers: what the size means, what to do."""
        if self.error is not None:
            return f"cannot be read — {self.error}"
        return STATES[self.level]

    @property
    def status(self) -> str:
        if self.error is not None:
            return "unreadable"
        if self.over_hard_cap:
            return "over hard cap"
        if self.over_soft_cap:
            return "over soft cap"
        return "within caps"

    def to_json(self) -> dict[str, object]:
        """One file's entry in ``metis.usage`` / ``metis/usageChanged``."""
        return {
            "size_bytes": self.size_bytes,
            "soft_cap": self.soft_cap,
            "hard_cap": self.hard_cap,
            "over_soft_cap": self.over_soft_cap,
            "over_hard_cap": self.over_hard_cap,
            "source": self.source,
            "level": self.level,
            "state": self.state,
            **({"error": self.error} if self.error is not None else {}),
        }


@dataclass(frozen=True)
class DiskState:
    usage: Usage
    snapshot: MemorySnapshot | None
    """The text read; None when it could not be read."""
    problem: MemoryStoreError | None = None
    """Why not: too large to read (its size is known) or unreadable (`usage.error`)."""


def read_disk(store: MemoryStore, file: MemoryFile) -> DiskState:
    try:
        snap = store.snapshot(file)
    except MemoryFileTooLarge as exc:
        return DiskState(Usage(file, exc.size, "disk"), None, exc)
    except MemoryStoreError as exc:
        return DiskState(Usage(file, 0, "disk", error=str(exc)), None, exc)
    return DiskState(Usage(file, snap.size_bytes, "disk"), snap)


def read_both(store: MemoryStore) -> dict[MemoryFile, DiskState]:
    """Both files as the disk has them, in file order."""
    return {f: read_disk(store, f) for f in MemoryFile}
