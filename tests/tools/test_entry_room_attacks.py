"""The largest entry the advice names (`entry_room.largest_entry`) held against the store
itself: with the file consolidated to the heading the advice keeps, an entry of that many
bytes is added and one character more is refused, for CRLF, a heading of only whitespace,
a file without a final line break, a BOM, a bare CR, multi-byte characters at the boundary,
and both files' caps. (Held when written: a guard.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from metis_memory.store.errors import MemoryHardCapExceeded
from metis_memory.store.files import MemoryFile
from metis_memory.store.memory_store import MemoryStore
from metis_memory.tools.entry_room import entry_room, heading
from support.memory_files import write_memory

FILES = {
    "lf": "# Mem\n\nintro line\n\n- a\n- b\n",
    "crlf": "# Mem\r\n\r\nintro\r\n\r\n- a\r\n- b\r\n",
    "whitespace heading": "   \n\t\n- a\n",
    "a heading of spaces": "#   \n   \n- a\n",
    "no final line break": "# H\n- a",
    "multi-byte heading": "# Mémoire €\n\n- a\n",
    "empty": "",
    "bom": "\ufeff# H\n- a\n",
    "bare cr": "# H\r- a\r",
}


@pytest.mark.parametrize("file", list(MemoryFile))
@pytest.mark.parametrize("text", list(FILES.values()), ids=list(FILES))
@pytest.mark.parametrize("char", ["x", "é", "€", "😀"])
def test_the_named_largest_entry_fits_and_one_character_more_does_not(
    workspace: Path, file: MemoryFile, text: str, char: str
) -> None:
    room = entry_room(file, text, "- " + char * 5000)
    largest = room.largest_entry
    entry = "- " + char * ((largest - 2) // len(char.encode()))
    write_memory(workspace, file.value, text.encode())
    store = MemoryStore(workspace)
    kept = heading(text, "\r\n" if "\r\n" in text else "\n")
    store.consolidate(file.value, kept)
    store.add_entry(file.value, entry)  # fits
    store.consolidate(file.value, kept)
    longer = entry + char
    if len(longer.encode()) > largest:
        with pytest.raises(MemoryHardCapExceeded):
            store.add_entry(file.value, longer)
