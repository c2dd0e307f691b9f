"""The two memory files and their byte budgets: the one place the caps live."""

from __future__ import annotations

import sys

from .values import Value, init_field

if sys.version_info >= (3, 11):
    from enum import StrEnum
else:  # pragma: no cover - exercised only on 3.10
    from enum import Enum

    class StrEnum(str, Enum):
        """Backport of 3.11's StrEnum: members are their string values."""

        def __str__(self) -> str:
            return str(self.value)


class MemoryFile(StrEnum):
    """Closed enum matching event-bus memory.updated.file."""

    MEMORY = "MEMORY.md"
    USER = "USER.md"


class Caps(Value):
    """A file's budget in UTF-8 bytes: soft signals 'consolidate', hard rejects."""

    __slots__ = ("hard", "soft")
    soft: int
    hard: int

    def __init__(self, soft: int, hard: int) -> None:
        init_field(self, "soft", soft)
        init_field(self, "hard", hard)


CAPS: dict[MemoryFile, Caps] = {
    MemoryFile.MEMORY: Caps(soft=2048, hard=4096),
    MemoryFile.USER: Caps(soft=1536, hard=3072),
}

METIS_DIR = ".metis"
BUDGETS_CONFIG = "budgets.toml"
"""The workspace's budgets file, in METIS_DIR (read by `budgets/config.py`)."""


def parse_memory_file(file: object) -> MemoryFile:
    """Accept the enum or its exact value; anything else is a ValueError, never a path."""
    from .errors import InvalidMemoryFile

    if isinstance(file, MemoryFile):
        return file
    if isinstance(file, str):
        for member in MemoryFile:
            if file == member.value:
                return member
    raise InvalidMemoryFile(file)
