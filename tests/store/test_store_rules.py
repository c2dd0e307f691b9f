"""The spec's behaviour list and issue 2's rules, one test per rule, on a real filesystem."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from itertools import pairwise
from pathlib import Path

import pytest

import metis_memory
from metis_memory import (
    EmptyEntry,
    InvalidMemoryFile,
    MemoryFile,
    MemoryHardCapExceeded,
    MemoryStore,
    OldTextNotFound,
    OldTextNotUnique,
    WriteResult,
)
from metis_memory.store.errors import EmptyOldText, InvalidText
from support.memory_files import memory_path, write_memory

FILES = [MemoryFile.MEMORY, MemoryFile.USER]


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# ---- missing = empty = "" -----------------------------------------------------------------


@pytest.mark.parametrize("file", FILES)
def test_missing_file_reads_as_empty(store: MemoryStore, workspace: Path, file: MemoryFile) -> None:
    assert store.read(file) == ""
    assert store.size_bytes(file) == 0
    assert store.exists(file) is False
    assert not (workspace / ".metis").exists()


@pytest.mark.parametrize("file", FILES)
def test_missing_file_in_existing_metis_dir_reads_as_empty(
    store: MemoryStore, workspace: Path, file: MemoryFile
) -> None:
    (workspace / ".metis").mkdir()
    assert store.read(file) == ""
    assert store.size_bytes(file) == 0
    assert store.exists(file) is False


@pytest.mark.parametrize("file", FILES)
def test_empty_file_reads_like_a_missing_one(
    store: MemoryStore, workspace: Path, file: MemoryFile
) -> None:
    write_memory(workspace, file, b"")
    assert store.read(file) == ""
    assert store.size_bytes(file) == 0
    # `exists` reports the file on disk; read and size smooth missing and empty over.
    assert store.exists(file) is True


def test_a_write_to_an_empty_file_starts_from_the_empty_hash(
    store: MemoryStore, workspace: Path
) -> None:
    write_memory(workspace, MemoryFile.MEMORY, b"")
    result = store.add_entry(MemoryFile.MEMORY, "fact")
    assert result.before_hash == sha(b"")
    assert result.before_size_bytes == 0


# ---- .metis/ is created lazily --------------------------------------------------------------


def test_reads_never_create_the_metis_dir(store: MemoryStore, workspace: Path) -> None:
    for file in FILES:
        store.read(file)
        store.exists(file)
        store.size_bytes(file)
        store.snapshot(file)
    store.assemble_system_prompt("base")
    assert os.listdir(workspace) == []


@pytest.mark.parametrize("file", FILES)
def test_first_write_creates_the_metis_dir(
    store: MemoryStore, workspace: Path, file: MemoryFile
) -> None:
    store.add_entry(file, "first fact")
    assert (workspace / ".metis").is_dir()
    assert memory_path(workspace, file).read_bytes() == b"first fact\n"


@pytest.mark.parametrize(
    ("write", "error"),
    [
        pytest.param(lambda s: s.add_entry("MEMORY.md", "  \n\t "), EmptyEntry, id="blank-add"),
        pytest.param(
            lambda s: s.add_entry("MEMORY.md", "x" * 4096), MemoryHardCapExceeded, id="add-cap"
        ),
        pytest.param(lambda s: s.replace("MEMORY.md", "a", "b"), OldTextNotFound, id="not-found"),
        pytest.param(lambda s: s.replace("USER.md", "", "b"), EmptyOldText, id="empty-old"),
        pytest.param(
            lambda s: s.consolidate("USER.md", "x" * 3073), MemoryHardCapExceeded, id="cons-cap"
        ),
        pytest.param(lambda s: s.consolidate("USER.md", "nul\x00"), InvalidText, id="nul"),
        pytest.param(lambda s: s.add_entry("memory.md", "x"), InvalidMemoryFile, id="bad-name"),
    ],
)
def test_a_rejected_first_write_creates_nothing(
    workspace: Path, write: Callable[[MemoryStore], object], error: type[Exception]
) -> None:
    with pytest.raises(error):
        write(MemoryStore(workspace))
    assert os.listdir(workspace) == []


# ---- newline discipline on add -------------------------------------------------------------


def test_add_to_an_empty_file_terminates_the_entry(store: MemoryStore, workspace: Path) -> None:
    store.add_entry(MemoryFile.MEMORY, "uses pytest")
    assert memory_path(workspace, MemoryFile.MEMORY).read_bytes() == b"uses pytest\n"


def test_add_after_newline_terminated_content_appends_directly(
    store: MemoryStore, workspace: Path
) -> None:
    write_memory(workspace, MemoryFile.MEMORY, "one\n")
    store.add_entry(MemoryFile.MEMORY, "two")
    assert memory_path(workspace, MemoryFile.MEMORY).read_bytes() == b"one\ntwo\n"


def test_add_after_unterminated_content_inserts_the_newline(
    store: MemoryStore, workspace: Path
) -> None:
    write_memory(workspace, MemoryFile.MEMORY, "one")
    result = store.add_entry(MemoryFile.MEMORY, "two")
    assert memory_path(workspace, MemoryFile.MEMORY).read_bytes() == b"one\ntwo\n"
    assert result.after_size_bytes == len(b"one\ntwo\n")


def test_an_entry_that_ends_in_a_newline_gets_no_second_one(
    store: MemoryStore, workspace: Path
) -> None:
    store.add_entry(MemoryFile.USER, "prefers tabs\n")
    assert memory_path(workspace, MemoryFile.USER).read_bytes() == b"prefers tabs\n"


def test_a_crlf_file_keeps_crlf(store: MemoryStore, workspace: Path) -> None:
    write_memory(workspace, MemoryFile.MEMORY, b"one\r\ntwo")
    store.add_entry(MemoryFile.MEMORY, "three")
    assert memory_path(workspace, MemoryFile.MEMORY).read_bytes() == b"one\r\ntwo\r\nthree\r\n"


def test_a_crlf_file_keeps_crlf_when_the_entry_brings_its_own_newlines(
    store: MemoryStore, workspace: Path
) -> None:
    write_memory(workspace, MemoryFile.MEMORY, b"one\r\n")
    store.add_entry(MemoryFile.MEMORY, "two\n")
    store.add_entry(MemoryFile.MEMORY, "three\nfour")
    store.add_entry(MemoryFile.MEMORY, "five\r\n")
    data = memory_path(workspace, MemoryFile.MEMORY).read_bytes()
    assert data == b"one\r\ntwo\r\nthree\r\nfour\r\nfive\r\n"


def test_an_lf_file_keeps_lf(store: MemoryStore, workspace: Path) -> None:
    write_memory(workspace, MemoryFile.MEMORY, b"one\n")
    store.add_entry(MemoryFile.MEMORY, "two\nthree")
    store.add_entry(MemoryFile.MEMORY, "four\r\nfive\r\n")
    data = memory_path(workspace, MemoryFile.MEMORY).read_bytes()
    assert data == b"one\ntwo\nthree\nfour\nfive\n"


def test_a_new_file_takes_the_first_entrys_line_endings(
    store: MemoryStore, workspace: Path
) -> None:
    store.add_entry(MemoryFile.USER, "one\r\ntwo")
    store.add_entry(MemoryFile.USER, "three")
    assert memory_path(workspace, MemoryFile.USER).read_bytes() == b"one\r\ntwo\r\nthree\r\n"


# ---- empty and whitespace-only entries -----------------------------------------------------


@pytest.mark.parametrize("entry", ["", " ", "\n", "\r\n", "\t \n  ", "\u3000\u00a0"])
@pytest.mark.parametrize("file", FILES)
def test_blank_entries_are_rejected_and_the_file_is_unchanged(
    store: MemoryStore, workspace: Path, file: MemoryFile, entry: str
) -> None:
    path = write_memory(workspace, file, b"kept\n")
    with pytest.raises(EmptyEntry) as info:
        store.add_entry(file, entry)
    assert isinstance(info.value, ValueError)
    assert "nothing was written" in str(info.value)
    assert path.read_bytes() == b"kept\n"


def test_a_non_text_entry_is_a_clear_error_not_an_empty_one(
    store: MemoryStore, workspace: Path
) -> None:
    with pytest.raises(ValueError) as info:
        store.add_entry(MemoryFile.MEMORY, 3)  # type: ignore[arg-type]
    assert "int" in str(info.value)
    assert "empty" not in str(info.value)
    assert os.listdir(workspace) == []


# ---- replace needs exactly one occurrence --------------------------------------------------


def test_replace_a_unique_occurrence(store: MemoryStore, workspace: Path) -> None:
    write_memory(workspace, MemoryFile.MEMORY, "build: make\ntest: tox\n")
    result = store.replace(MemoryFile.MEMORY, "tox", "make test")
    assert store.read(MemoryFile.MEMORY) == "build: make\ntest: make test\n"
    assert result.after_size_bytes == len(b"build: make\ntest: make test\n")


def test_replace_with_empty_new_deletes(store: MemoryStore, workspace: Path) -> None:
    write_memory(workspace, MemoryFile.USER, "keep\ndrop me\n")
    store.replace(MemoryFile.USER, "drop me\n", "")
    assert store.read(MemoryFile.USER) == "keep\n"


def test_replace_zero_occurrences_raises_not_found(store: MemoryStore, workspace: Path) -> None:
    path = write_memory(workspace, MemoryFile.MEMORY, "alpha\n")
    with pytest.raises(OldTextNotFound) as info:
        store.replace(MemoryFile.MEMORY, "beta", "gamma")
    assert not isinstance(info.value, OldTextNotUnique)
    assert "not found" in str(info.value)
    assert path.read_bytes() == b"alpha\n"


def test_replace_in_a_missing_file_raises_not_found(store: MemoryStore, workspace: Path) -> None:
    with pytest.raises(OldTextNotFound):
        store.replace(MemoryFile.USER, "anything", "x")
    assert not (workspace / ".metis").exists()


@pytest.mark.parametrize(("content", "count"), [("a\na\n", 2), ("x x x x x", 5)])
def test_replace_many_occurrences_raises_not_unique_with_the_count(
    store: MemoryStore, workspace: Path, content: str, count: int
) -> None:
    old = content.split()[0]
    path = write_memory(workspace, MemoryFile.MEMORY, content)
    with pytest.raises(OldTextNotUnique) as info:
        store.replace(MemoryFile.MEMORY, old, "y")
    assert not isinstance(info.value, OldTextNotFound)
    assert info.value.count == count
    assert f"occurs {count} times" in str(info.value)
    assert path.read_bytes() == content.encode()


def test_overlapping_occurrences_are_not_unique(store: MemoryStore, workspace: Path) -> None:
    # "aa" occurs at offsets 0 and 1 of "aaa": which one to replace is ambiguous.
    path = write_memory(workspace, MemoryFile.MEMORY, "aaa")
    with pytest.raises(OldTextNotUnique) as info:
        store.replace(MemoryFile.MEMORY, "aa", "b")
    assert info.value.count == 2
    assert path.read_bytes() == b"aaa"


def test_replace_is_case_and_whitespace_exact(store: MemoryStore, workspace: Path) -> None:
    write_memory(workspace, MemoryFile.MEMORY, "Uses Ruff\n")
    with pytest.raises(OldTextNotFound):
        store.replace(MemoryFile.MEMORY, "uses ruff", "x")
    with pytest.raises(OldTextNotFound):
        store.replace(MemoryFile.MEMORY, "Uses  Ruff", "x")


# ---- sizes are UTF-8 bytes ------------------------------------------------------------------


@pytest.mark.parametrize("text", ["é", "日本語", "🙂 emoji", "mixed ascii ü ß 中"])
def test_sizes_are_utf8_bytes(store: MemoryStore, text: str) -> None:
    result = store.consolidate(MemoryFile.USER, text)
    expected = len(text.encode("utf-8"))
    assert expected > len(text)
    assert result.after_size_bytes == expected
    assert store.size_bytes(MemoryFile.USER) == expected


def test_multibyte_text_hits_the_hard_cap_by_bytes_not_characters(store: MemoryStore) -> None:
    # 1,366 three-byte characters: 1,366 characters, 4,098 bytes > 4,096.
    text = "語" * 1366
    with pytest.raises(MemoryHardCapExceeded) as info:
        store.consolidate(MemoryFile.MEMORY, text)
    assert info.value.attempted_size == 4098
    store.consolidate(MemoryFile.MEMORY, "語" * 1365)  # 4,095 bytes fits


# ---- hashes chain --------------------------------------------------------------------------


def test_hashes_chain_across_writes_and_match_the_disk(store: MemoryStore, workspace: Path) -> None:
    path = memory_path(workspace, MemoryFile.MEMORY)
    results: list[WriteResult] = []
    results.append(store.add_entry(MemoryFile.MEMORY, "one"))
    assert results[-1].after_hash == sha(path.read_bytes())
    results.append(store.add_entry(MemoryFile.MEMORY, "two"))
    assert results[-1].after_hash == sha(path.read_bytes())
    results.append(store.replace(MemoryFile.MEMORY, "two", "2"))
    assert results[-1].after_hash == sha(path.read_bytes())
    results.append(store.consolidate(MemoryFile.MEMORY, "fresh\n"))
    assert results[-1].after_hash == sha(path.read_bytes())
    assert results[0].before_hash == sha(b"")
    for previous, following in pairwise(results):
        assert following.before_hash == previous.after_hash
        assert following.before_size_bytes == previous.after_size_bytes


def test_the_chain_picks_up_edits_made_behind_the_stores_back(
    store: MemoryStore, workspace: Path
) -> None:
    first = store.add_entry(MemoryFile.USER, "one")
    write_memory(workspace, MemoryFile.USER, b"edited by hand\n")
    second = store.add_entry(MemoryFile.USER, "two")
    assert second.before_hash == sha(b"edited by hand\n") != first.after_hash


# ---- consolidate -----------------------------------------------------------------------------


@pytest.mark.parametrize("file", FILES)
def test_consolidate_to_empty_clears(store: MemoryStore, workspace: Path, file: MemoryFile) -> None:
    write_memory(workspace, file, "a\nb\n")
    result = store.consolidate(file, "")
    assert result.after_size_bytes == 0
    assert result.after_hash == sha(b"")
    assert store.read(file) == ""
    assert memory_path(workspace, file).read_bytes() == b""


def test_consolidate_writes_the_content_verbatim(store: MemoryStore, workspace: Path) -> None:
    write_memory(workspace, MemoryFile.MEMORY, "old\n")
    store.consolidate(MemoryFile.MEMORY, "  no trailing newline, leading spaces kept")
    assert (
        memory_path(workspace, MemoryFile.MEMORY).read_bytes()
        == b"  no trailing newline, leading spaces kept"
    )


# ---- no in-process cache ---------------------------------------------------------------------


def test_every_call_rereads_the_disk(store: MemoryStore, workspace: Path) -> None:
    store.add_entry(MemoryFile.MEMORY, "one")
    assert store.read(MemoryFile.MEMORY) == "one\n"
    write_memory(workspace, MemoryFile.MEMORY, "changed behind the store's back\n")
    assert store.read(MemoryFile.MEMORY) == "changed behind the store's back\n"
    assert store.size_bytes(MemoryFile.MEMORY) == len("changed behind the store's back\n")
    assert "changed behind" in store.assemble_system_prompt("")
    store.add_entry(MemoryFile.MEMORY, "two")
    assert store.read(MemoryFile.MEMORY) == "changed behind the store's back\ntwo\n"
    memory_path(workspace, MemoryFile.MEMORY).unlink()
    assert store.read(MemoryFile.MEMORY) == ""
    assert store.exists(MemoryFile.MEMORY) is False


def test_two_stores_on_one_workspace_see_each_others_writes(workspace: Path) -> None:
    first, second = MemoryStore(workspace), MemoryStore(str(workspace))
    first.add_entry(MemoryFile.MEMORY, "from first")
    assert second.read(MemoryFile.MEMORY) == "from first\n"
    result = second.add_entry(MemoryFile.MEMORY, "from second")
    assert first.read(MemoryFile.MEMORY) == "from first\nfrom second\n"
    assert result.before_size_bytes == len(b"from first\n")


# ---- `file` is the enum or the exact name, never a path --------------------------------------


@pytest.mark.parametrize("name", ["MEMORY.md", "USER.md"])
def test_file_accepts_the_exact_strings(store: MemoryStore, workspace: Path, name: str) -> None:
    result = store.add_entry(name, "fact")
    assert result.file is MemoryFile(name)
    assert store.read(name) == store.read(MemoryFile(name)) == "fact\n"
    assert store.exists(name) and store.size_bytes(name) == 5
    assert memory_path(workspace, name).is_file()


BAD_FILES: list[object] = [
    "memory.md",
    "MEMORY",
    "MEMORY.md ",
    "../MEMORY.md",
    ".metis/MEMORY.md",
    "/etc/passwd",
    "",
    None,
    3,
    b"MEMORY.md",
    Path("MEMORY.md"),
]


@pytest.mark.parametrize("bad", BAD_FILES, ids=repr)
def test_anything_else_is_a_value_error_for_every_method(
    store: MemoryStore, workspace: Path, bad: object
) -> None:
    calls: list[Callable[[], object]] = [
        lambda: store.read(bad),  # type: ignore[arg-type]
        lambda: store.exists(bad),  # type: ignore[arg-type]
        lambda: store.size_bytes(bad),  # type: ignore[arg-type]
        lambda: store.add_entry(bad, "x"),  # type: ignore[arg-type]
        lambda: store.replace(bad, "a", "b"),  # type: ignore[arg-type]
        lambda: store.consolidate(bad, "x"),  # type: ignore[arg-type]
        lambda: MemoryStore.soft_cap(bad),  # type: ignore[arg-type]
        lambda: MemoryStore.hard_cap(bad),  # type: ignore[arg-type]
    ]
    for call in calls:
        with pytest.raises(ValueError) as info:
            call()
        assert isinstance(info.value, InvalidMemoryFile)
        assert "'MEMORY.md' or 'USER.md'" in str(info.value)
    assert os.listdir(workspace) == []


# ---- static caps and the public surface -------------------------------------------------------


def test_static_caps() -> None:
    assert MemoryStore.soft_cap(MemoryFile.MEMORY) == 2048
    assert MemoryStore.hard_cap(MemoryFile.MEMORY) == 4096
    assert MemoryStore.soft_cap(MemoryFile.USER) == 1536
    assert MemoryStore.hard_cap(MemoryFile.USER) == 3072
    # static: callable without an instance, and the same through one
    assert MemoryStore("unused").hard_cap(MemoryFile.USER) == 3072


def test_memory_file_is_a_str_enum_of_the_two_names() -> None:
    assert [m.value for m in MemoryFile] == ["MEMORY.md", "USER.md"]
    assert MemoryFile.MEMORY == "MEMORY.md"  # type: ignore[comparison-overlap]  # a str enum
    assert isinstance(MemoryFile.USER, str)
    assert str(MemoryFile.USER) == "USER.md"


def test_public_names_import_from_the_package_root() -> None:
    from metis_memory import MemoryFile as MF
    from metis_memory import MemoryHardCapExceeded as HCE
    from metis_memory import MemoryStore as MS
    from metis_memory import WriteResult as WR

    assert {MF, HCE, MS, WR} <= {getattr(metis_memory, n) for n in metis_memory.__all__}
    assert MS.__module__ == "metis_memory.store.memory_store"


def test_write_result_is_frozen(store: MemoryStore) -> None:
    result = store.add_entry(MemoryFile.MEMORY, "x")
    with pytest.raises(AttributeError):
        result.after_size_bytes = 0  # type: ignore[misc]
    assert result.over_hard_cap is False


def test_workspace_path_is_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    store = MemoryStore("relative-ws")
    assert store.workspace_path == str(tmp_path / "relative-ws")
    assert isinstance(store.workspace_path, str)
