"""What a new memory file starts with ("Create Workspace Memory" in the editor): a heading and
two entries that show the format by example and say what belongs in the file and how large it
may grow. Agents read it on every turn until the user replaces it, so it speaks to both; it is
a small part of the soft cap and names nothing the checks could flag (no path, no command)."""

from __future__ import annotations

from .errors import fmt_bytes
from .files import CAPS, MemoryFile, parse_memory_file

_HEADING = {MemoryFile.MEMORY: "Workspace memory", MemoryFile.USER: "About the user"}
_BELONGS = {
    MemoryFile.MEMORY: (
        "short, lasting facts about this workspace that agents should know on every turn, one "
        "per list item: how to build and test, conventions, decisions and their reasons, "
        "pitfalls."
    ),
    MemoryFile.USER: (
        "facts about the user that agents should know on every turn, one per list item: how "
        "they like answers, their role, their tools and habits."
    ),
}


def template(file: MemoryFile | str) -> str:
    """The starting text of `file`."""
    f = parse_memory_file(file)
    caps = CAPS[f]
    return (
        f"# {_HEADING[f]}\n"
        "\n"
        f"- What belongs here: {_BELONGS[f]} Replace this entry with the first real one.\n"
        f"- Keep it small: past {fmt_bytes(caps.soft)} (the soft cap) consolidate it: merge, "
        f"shorten, drop what is stale. A write past {fmt_bytes(caps.hard)} (the hard cap) is "
        "refused.\n"
    )
