"""The store's create (and every first write) against a `.metis` that is a symlink to a
folder that does not exist yet, inside the workspace: the message names the link."""

from __future__ import annotations

from pathlib import Path

import pytest

from metis_memory.store.errors import StorageError
from metis_memory.store.memory_store import MemoryStore
from metis_memory.store.template import template


@pytest.mark.parametrize("target", ["gone", "sub/gone", "{ws}/gone"])
@pytest.mark.parametrize("write", ["create", "add_entry"])
def test_a_metis_link_to_a_missing_folder_is_named_with_what_to_do(
    workspace: Path, target: str, write: str
) -> None:
    pointed = target.format(ws=workspace)
    (workspace / ".metis").symlink_to(pointed)
    store = MemoryStore(workspace)
    with pytest.raises(StorageError) as refused:
        if write == "create":
            store.create("MEMORY.md", template("MEMORY.md"))
        else:
            store.add_entry("MEMORY.md", "- a fact")
    message = str(refused.value)
    assert message.startswith(
        f"could not create directory {workspace / '.metis'}: No such file or directory. "
        "Nothing was changed. "
    ), message
    assert (
        f".metis is a symbolic link to {pointed}, which does not exist: make that folder, or "
        "remove the link (the next write then makes .metis a folder of its own)."
    ) in message
    assert sorted(p.name for p in workspace.iterdir()) == [".metis"]
