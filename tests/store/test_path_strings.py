"""The store's paths are strings (a hook process does not import `pathlib`, issue 42): each
helper that stands in for a `pathlib` call gives exactly what that call gave, for any
spelling of a path (doubled and trailing separators, `.`, `..`, POSIX's `//` root)."""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

import pytest
from hypothesis import given
from hypothesis import strategies as st

from metis_memory.store.confined import anchored, as_pathlib_writes, names
from metis_memory.store.memory_store import MemoryStore, absolute

posix_only = pytest.mark.skipif(os.sep != "/", reason="the POSIX spelling of paths")
PIECES = ["/", "//", "///", ".", "..", "a", "b.", " c", "é"]
SPELLED = st.lists(st.sampled_from(PIECES)).map("".join)


@posix_only
@given(SPELLED)
def test_the_helpers_give_what_pathlib_gives(path: str) -> None:
    pure = PurePosixPath(path)
    assert as_pathlib_writes(path) == str(pure)
    assert absolute(path) == str(Path(path).absolute())
    if path.startswith("/"):
        assert anchored(path) == list(pure.parts)
    else:
        assert names(path) == list(pure.parts)


@posix_only
def test_a_store_names_its_workspace_and_files_as_pathlib_did(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for given_as in (f"{tmp_path}//ws/./", "ws/", "./ws", tmp_path / "ws"):
        store = MemoryStore(given_as)
        assert store.workspace_path == str(tmp_path / "ws")
        assert store.path("MEMORY.md") == tmp_path / "ws" / ".metis" / "MEMORY.md"
