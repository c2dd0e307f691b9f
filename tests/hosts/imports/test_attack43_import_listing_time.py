"""Attack on the import's time bound (issue 43): `MAX_SECONDS` bounded the files read, not the
folders listed. A memory folder of many folders holding no memory (Qwen Code's auto memory is
searched three levels deep; with `QWEN_CODE_MEMORY_LOCAL=1` it is the cloned repository's own
`.qwen/memory/`) was listed to its end after the time was spent: up to 2,000 folders a level.
Once the time is spent, no further folder is listed, and the folder left is named."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from metis_memory.hosts.imports.reading import Reader


def test_no_folder_is_listed_once_the_time_is_spent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "memory"
    for i in range(40):
        folder = root / f"f{i:02}" / "deeper"
        folder.mkdir(parents=True)
        (folder / "notes.txt").write_text("not memory\n")
    listed: list[str] = []
    real = os.scandir

    def counted(path: str | os.PathLike[str]) -> Iterator[os.DirEntry[str]]:
        listed.append(os.fspath(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", counted)  # (the reader lists through os.scandir)
    reader = Reader(seconds=0.0)

    assert reader.files(root, tmp_path, recursive=True) == []
    assert listed == []
    assert [(s.path, s.reason) for s in reader.skipped] == [
        (str(root), "not read: the import's 0 s for reading were spent")
    ]

    ample = Reader(seconds=60.0)  # (with time, every folder is listed: 1 + 40 + 40)
    assert ample.files(root, tmp_path, recursive=True) == []
    assert len(listed) == 81
