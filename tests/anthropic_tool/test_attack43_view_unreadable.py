"""Attack on Claude's memory tool (issue 43): a user memory that cannot be read (its folder
writable by others, as a shared config folder may make it) failed `view /memories` as a whole,
the command a model is told to run first, so the workspace's own two files were hidden behind
the user memory's refusal. The listing now shows them, and the user memory's row says why it
is not read (as the hooks' and MCP's notes do)."""

from __future__ import annotations

import os
from pathlib import Path

from metis_memory import MemoryStore
from metis_memory.anthropic import MetisMemoryTool
from metis_memory.store.files import MemoryFile

USER_MEMORY = "/memories/user-memory/USER.md"


def test_the_listing_survives_a_user_memory_it_cannot_read(
    tmp_path: Path, user_config_home: Path
) -> None:
    MemoryStore(tmp_path).add_entry(MemoryFile.MEMORY, "- Build with make")
    folder = user_config_home / "metis-memory"
    folder.mkdir()
    os.chmod(folder, 0o777)
    tool = MetisMemoryTool(tmp_path)
    try:
        listing = str(tool.call({"command": "view", "path": "/memories"}))
    finally:
        os.chmod(folder, 0o700)

    assert "18B\t/memories/MEMORY.md" in listing
    assert "0B\t/memories/USER.md" in listing
    row = next(line for line in listing.splitlines() if USER_MEMORY in line)
    assert row.startswith(f"-\t{USER_MEMORY} (not read: ")
    assert "writable by other users (mode 0777)" in row
    assert str(tool.call({"command": "view", "path": "/memories/MEMORY.md"})).endswith(
        "- Build with make\n     2\t"
    )
