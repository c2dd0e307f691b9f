"""Usage of a memory file's budget: the numbers the status bar, hover and code lens
show, and the JSON shape ``metis.usage`` returns."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..store.errors import fmt_bytes
from ..store.files import CAPS, MemoryFile

Source = Literal["buffer", "disk"]


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
            **({"error": self.error} if self.error is not None else {}),
        }


def usage_json(usages: dict[MemoryFile, Usage]) -> dict[str, dict[str, object]]:
    """``{"MEMORY.md": {...}, "USER.md": {...}}`` in file order."""
    return {f.value: usages[f].to_json() for f in MemoryFile if f in usages}


def lens_title(usage: Usage) -> str:
    """One line for the code lens on the file's first line."""
    return (
        f"{usage.file.value}: {fmt_bytes(usage.size_bytes)} · "
        f"{usage.percent_of_soft}% of {fmt_bytes(usage.soft_cap)} soft cap · "
        f"{usage.percent_of_hard}% of {fmt_bytes(usage.hard_cap)} hard cap · {usage.status}"
    )


def hover_markdown(usage: Usage) -> str:
    """The hover on the file's title: a small table of size against caps."""
    what = "editor buffer" if usage.source == "buffer" else "file on disk"
    return "\n".join(
        [
            f"**{usage.file.value}** — {usage.status} ({what}, UTF-8 bytes)",
            "",
            "| | bytes | used |",
            "|---|---:|---:|",
            f"| size | {usage.size_bytes:,} | |",
            f"| soft cap | {usage.soft_cap:,} | {usage.percent_of_soft}% |",
            f"| hard cap | {usage.hard_cap:,} | {usage.percent_of_hard}% |",
        ]
    )


def hover_plaintext(usage: Usage) -> str:
    """The same hover for clients that show plain text only (a Markdown table there is
    raw pipes and dashes)."""
    what = "editor buffer" if usage.source == "buffer" else "file on disk"
    return "\n".join(
        [
            f"{usage.file.value} — {usage.status} ({what}, UTF-8 bytes)",
            f"size      {usage.size_bytes:>7,} B",
            f"soft cap  {usage.soft_cap:>7,} B  {usage.percent_of_soft}% used",
            f"hard cap  {usage.hard_cap:>7,} B  {usage.percent_of_hard}% used",
        ]
    )
