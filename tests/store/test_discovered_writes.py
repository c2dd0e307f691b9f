"""A workspace found by looking upward (`MemoryStore(discovered=True)`: the hook, and the
MCP server started with no folder) is written, like it is read, only when its `.metis/` is
the user's own and no one else may write it: a folder others may write could have been
planted, and a write there would hand the agent's memory to whoever made it."""

from __future__ import annotations

from pathlib import Path

import pytest

from metis_memory import MemoryStore
from metis_memory.store.errors import MemoryStoreError


@pytest.mark.parametrize("mode", [0o1777, 0o777], ids=["sticky, world-writable", "world-writable"])
def test_a_write_to_a_folder_others_may_write_is_refused_and_changes_nothing(
    tmp_path: Path, mode: int
) -> None:
    MemoryStore(tmp_path).add_entry("MEMORY.md", "- the project's fact")
    folder = tmp_path / ".metis"
    before = (folder / "MEMORY.md").read_bytes()
    folder.chmod(mode)
    found = MemoryStore(tmp_path, discovered=True)
    with pytest.raises(MemoryStoreError) as refused:
        found.add_entry("MEMORY.md", "- an agent's fact")
    message = str(refused.value)
    assert f"chmod go-w {folder}" in message and "metis-memory mcp DIR" in message
    assert (folder / "MEMORY.md").read_bytes() == before
    folder.chmod(0o700)  # the fix the message names: the same write then lands
    found.add_entry("MEMORY.md", "- an agent's fact")
    assert "- an agent's fact" in (folder / "MEMORY.md").read_text(encoding="utf-8")


def test_named_workspaces_are_written_whatever_the_folders_mode(tmp_path: Path) -> None:
    """The check is for folders found, not for one the user named (`mcp DIR`, a project
    variable): a team folder shared on purpose stays usable."""
    MemoryStore(tmp_path).add_entry("MEMORY.md", "- one")
    (tmp_path / ".metis").chmod(0o1777)
    MemoryStore(tmp_path).add_entry("MEMORY.md", "- two")
    assert "- two" in (tmp_path / ".metis" / "MEMORY.md").read_text(encoding="utf-8")
