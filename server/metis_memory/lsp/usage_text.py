"""Usage of a memory file's budget as text: the code lens, the hover, and the JSON of
both files ``metis.usage`` returns (the numbers themselves are `store.usage.Usage`)."""

from __future__ import annotations

from pathlib import Path

from pygls.uris import from_fs_path

from ..store.errors import fmt_bytes
from ..store.files import MemoryFile
from ..store.usage import Usage

USER_MEMORY_PART = "userMemory"
"""The user memory's entry beside the workspace's two files in ``metis.usage`` and
``metis/usageChanged`` (every workspace's prompt holds it)."""


def usage_json(usages: dict[MemoryFile, Usage]) -> dict[str, dict[str, object]]:
    """``{"MEMORY.md": {...}, "USER.md": {...}}`` in file order."""
    return {f.value: usages[f].to_json() for f in MemoryFile if f in usages}


def user_memory_json(usage: Usage, path: Path, exists: bool) -> dict[str, object]:
    """The user memory's usage, as a file's, with where it is and whether it is there (a
    user memory not written yet is 0 B and `exists` false; nothing creates it but a write)."""
    return {**usage.to_json(), "path": str(path), "uri": from_fs_path(str(path)), "exists": exists}


USER_MEMORY_TITLE = "Your user memory (USER.md in every workspace)"
"""How the lens and hover name the user memory, where a workspace's file is its name."""


def lens_title(usage: Usage, *, user_memory: bool = False) -> str:
    """One line for the code lens on the file's first line."""
    name = USER_MEMORY_TITLE if user_memory else usage.file.value
    return (
        f"{name}: {fmt_bytes(usage.size_bytes)} · "
        f"{usage.percent_of_soft}% of {fmt_bytes(usage.soft_cap)} soft cap · "
        f"{usage.percent_of_hard}% of {fmt_bytes(usage.hard_cap)} hard cap · {usage.status}"
    )


def hover_markdown(usage: Usage, *, user_memory: bool = False) -> str:
    """The hover on the file's title: a small table of size against caps."""
    what = "editor buffer" if usage.source == "buffer" else "file on disk"
    name = USER_MEMORY_TITLE if user_memory else usage.file.value
    return "\n".join(
        [
            f"**{name}** — {usage.status} ({what}, UTF-8 bytes)",
            "",
            "| | bytes | used |",
            "|---|---:|---:|",
            f"| size | {usage.size_bytes:,} | |",
            f"| soft cap | {usage.soft_cap:,} | {usage.percent_of_soft}% |",
            f"| hard cap | {usage.hard_cap:,} | {usage.percent_of_hard}% |",
        ]
    )


def hover_plaintext(usage: Usage, *, user_memory: bool = False) -> str:
    """The same hover for clients that show plain text only (a Markdown table there is
    raw pipes and dashes)."""
    what = "editor buffer" if usage.source == "buffer" else "file on disk"
    name = USER_MEMORY_TITLE if user_memory else usage.file.value
    return "\n".join(
        [
            f"{name} — {usage.status} ({what}, UTF-8 bytes)",
            f"size      {usage.size_bytes:>7,} B",
            f"soft cap  {usage.soft_cap:>7,} B  {usage.percent_of_soft}% used",
            f"hard cap  {usage.hard_cap:>7,} B  {usage.percent_of_hard}% used",
        ]
    )
