"""`MemoryStore.create` and the template ("Create Workspace Memory"): a file is written only
where there is none, decided under the lock (a compare-and-swap on absence), with the store's
every rule for a write (a private `.metis/` and file, `.metis/.gitignore`, nothing through a
symlink that leaves the workspace); the template shows the format and is far under the caps."""

from __future__ import annotations

import hashlib
import os
import stat
import threading
from pathlib import Path

import pytest

from metis_memory import MemoryStore
from metis_memory.analysis.checks import check
from metis_memory.analysis.entries import parse
from metis_memory.analysis.references import find_references
from metis_memory.store.atomic import GITIGNORE
from metis_memory.store.errors import InvalidText, StorageError, UnsafePath
from metis_memory.store.files import CAPS, MemoryFile
from metis_memory.store.template import template
from support.memory_files import write_memory


def test_it_writes_a_missing_file_as_a_write_does(workspace: Path, store: MemoryStore) -> None:
    result = store.create(MemoryFile.MEMORY, "# Memory\n\n- uses make\n")
    metis = workspace / ".metis"
    assert result is not None
    assert (metis / "MEMORY.md").read_bytes() == b"# Memory\n\n- uses make\n"
    assert (result.before_size_bytes, result.after_size_bytes) == (0, 22)
    assert result.before_hash == hashlib.sha256(b"").hexdigest()  # no bytes before
    assert stat.S_IMODE(metis.stat().st_mode) == 0o700
    assert stat.S_IMODE((metis / "MEMORY.md").stat().st_mode) == 0o600
    assert (metis / ".gitignore").read_text() == GITIGNORE
    assert not (metis / "USER.md").exists()


@pytest.mark.parametrize(
    "there",
    [b"- mine\n", b"", b"\xff\xfe not utf-8", b"x" * 5000],
    ids=["an-entry", "empty", "not-utf-8", "over-the-hard-cap"],
)
def test_it_never_replaces_a_file_that_exists(
    workspace: Path, store: MemoryStore, there: bytes
) -> None:
    """Whatever the file holds, empty, not UTF-8 or over the hard cap: it is the user's."""
    path = write_memory(workspace, "USER.md", there)
    before = path.stat()
    assert store.create("USER.md", "- a template\n") is None
    after = path.stat()
    assert path.read_bytes() == there
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


def test_the_check_for_absence_is_made_under_the_lock(workspace: Path, store: MemoryStore) -> None:
    """Many creators at once (threads, each its own store): exactly one writes, the others
    find its file and leave it."""
    barrier = threading.Barrier(8)
    results: list[object] = []

    def create(n: int) -> None:
        barrier.wait()
        results.append(MemoryStore(workspace).create("MEMORY.md", f"- writer {n}\n"))

    threads = [threading.Thread(target=create, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    written = [r for r in results if r is not None]
    assert len(written) == 1
    assert (workspace / ".metis" / "MEMORY.md").read_text() == written[0].content  # type: ignore[attr-defined]


def test_a_metis_symlinked_out_of_the_workspace_is_refused(
    tmp_path: Path, workspace: Path, store: MemoryStore
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (workspace / ".metis").symlink_to(outside, target_is_directory=True)
    with pytest.raises(UnsafePath):
        store.create("MEMORY.md", "- a template\n")
    assert list(outside.iterdir()) == []


def test_a_dangling_symlink_out_creates_nothing_there(
    tmp_path: Path, workspace: Path, store: MemoryStore
) -> None:
    (workspace / ".metis").mkdir()
    (workspace / ".metis" / "USER.md").symlink_to(tmp_path / "new-file.md")
    with pytest.raises(UnsafePath):
        store.create("USER.md", "- a template\n")
    assert not (tmp_path / "new-file.md").exists()


def test_a_directory_in_the_files_place_is_an_error_not_absence(
    workspace: Path, store: MemoryStore
) -> None:
    (workspace / ".metis" / "MEMORY.md").mkdir(parents=True)
    with pytest.raises(StorageError, match="directory"):
        store.create("MEMORY.md", "- a template\n")


def test_text_that_is_not_plain_is_refused_and_leaves_no_metis(
    workspace: Path, store: MemoryStore
) -> None:
    with pytest.raises(InvalidText):
        store.create("MEMORY.md", "- a\x00b\n")
    assert not (workspace / ".metis").exists()


@pytest.mark.parametrize("file", list(MemoryFile))
def test_the_template_shows_the_format_and_leaves_room(file: MemoryFile) -> None:
    text = template(file)
    outline = parse(text)
    assert text.startswith("# ") and text.endswith("\n")
    assert 1 <= sum(e.kind == "item" for e in outline.entries) <= 2
    assert all(e.kind == "item" for e in outline.entries)
    size = len(text.encode("utf-8"))
    assert size <= CAPS[file].soft // 3, f"{file} template is {size} B"
    assert check(file, text) == []  # no cap, duplicate, empty-entry or secret finding
    assert find_references(outline) == []  # names nothing that could go stale
    # The caps it states are the store's.
    assert f"{CAPS[file].soft:,} B" in text and f"{CAPS[file].hard:,} B" in text


def test_the_template_is_what_a_first_create_writes(workspace: Path, store: MemoryStore) -> None:
    for file in MemoryFile:
        assert store.create(file, template(file)) is not None
        assert (workspace / ".metis" / file.value).read_text(encoding="utf-8") == template(file)
    listed = sorted(os.listdir(workspace / ".metis"))
    assert listed == [".gitignore", ".lock", "MEMORY.md", "USER.md", "history"]
