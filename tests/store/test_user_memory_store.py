"""The user memory against a real filesystem in a temporary config folder: where it lives,
what it holds, and that it keeps every guarantee of a workspace's USER.md."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import platformdirs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from metis_memory.store.errors import (
    MemoryHardCapExceeded,
    NotInUserMemory,
    StorageError,
    UnsafePath,
)
from metis_memory.store.files import CAPS, MemoryFile
from metis_memory.store.memory_store import MemoryStore
from metis_memory.store.owners import ForeignMemory
from metis_memory.store.prompt import USER_HEADING, USER_MEMORY_HEADING
from metis_memory.store.user_folder import user_config_home, user_memory_dir

USER_CAPS = CAPS[MemoryFile.USER]


def test_it_lives_in_the_xdg_config_folder(user_config_home: Path) -> None:
    store = MemoryStore.for_user()
    store.add_entry(MemoryFile.USER, "Answer in British English.")
    path = user_config_home / "metis-memory" / "USER.md"
    assert path.read_text() == "Answer in British English.\n"
    assert store.path(MemoryFile.USER) == path
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


def test_its_gitignore_does_not_say_it_is_meant_to_be_committed(user_config_home: Path) -> None:
    MemoryStore.for_user().add_entry(MemoryFile.USER, "Answer in British English.")
    ignore = (user_config_home / "metis-memory" / ".gitignore").read_text()
    assert "meant to be committed" not in ignore
    assert ".lock" in ignore


def test_a_missing_config_folder_is_made_owner_only(tmp_path: Path) -> None:
    home = tmp_path / "fresh" / "config"
    MemoryStore.for_user(str(home)).add_entry(MemoryFile.USER, "Prefers unified diffs.")
    assert (home / "metis-memory" / "USER.md").read_text() == "Prefers unified diffs.\n"
    assert stat.S_IMODE(home.stat().st_mode) == 0o700


_PATHISH = st.text(alphabet="/~.ab", max_size=8)


@given(xdg=st.one_of(st.none(), _PATHISH), home=st.one_of(st.none(), _PATHISH))
def test_the_folder_is_the_one_platformdirs_names(xdg: str | None, home: str | None) -> None:
    env = {k: v for k, v in (("XDG_CONFIG_HOME", xdg), ("HOME", home)) if v is not None}
    saved = {k: os.environ.get(k) for k in ("XDG_CONFIG_HOME", "HOME")}
    try:
        for key in saved:
            os.environ.pop(key, None)
        os.environ.update(env)
        expected = platformdirs.user_config_dir("metis-memory", appauthor=False)
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    assert user_memory_dir(env) == expected
    assert os.path.join(user_config_home(env), "metis-memory") == expected


def test_it_holds_only_user_md() -> None:
    with pytest.raises(NotInUserMemory, match=r"holds only USER\.md"):
        MemoryStore.for_user().add_entry(MemoryFile.MEMORY, "Build with make.")
    with pytest.raises(NotInUserMemory):
        MemoryStore.for_user().read("MEMORY.md")


def test_the_hard_cap_refuses_as_for_a_workspace() -> None:
    store = MemoryStore.for_user()
    with pytest.raises(MemoryHardCapExceeded):
        store.add_entry(MemoryFile.USER, "x" * (USER_CAPS.hard + 1))
    assert not store.exists(MemoryFile.USER)
    store.add_entry(MemoryFile.USER, "y" * (USER_CAPS.soft + 10))
    result = store.add_entry(MemoryFile.USER, "short")
    assert result.over_soft_cap


def test_writes_are_logged(user_config_home: Path) -> None:
    store = MemoryStore.for_user()
    store.add_entry(MemoryFile.USER, "Uses vim keys.")
    store.replace(MemoryFile.USER, "vim", "Emacs")
    records = store.history()
    assert [r.operation for r in records] == ["replace", "add"]
    assert (user_config_home / "metis-memory" / "history").is_dir()


def test_it_opens_every_workspace_prompt(tmp_path: Path) -> None:
    MemoryStore.for_user().add_entry(MemoryFile.USER, "Answer in British English.")
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    MemoryStore(first).add_entry(MemoryFile.USER, "Owns the billing service here.")
    prompt = MemoryStore(first).assemble_system_prompt("")
    assert prompt.index(USER_MEMORY_HEADING) < prompt.index(USER_HEADING)
    assert prompt.count("British English") == 1
    assert "British English" in MemoryStore(second).assemble_system_prompt("")


def test_no_user_memory_leaves_the_prompt_as_it_was(tmp_path: Path) -> None:
    MemoryStore(tmp_path).add_entry(MemoryFile.MEMORY, "Build with make.")
    assert USER_MEMORY_HEADING not in MemoryStore(tmp_path).assemble_system_prompt("")


def test_a_folder_others_may_write_is_neither_read_nor_written(user_config_home: Path) -> None:
    store = MemoryStore.for_user()
    store.add_entry(MemoryFile.USER, "Answer in British English.")
    folder = user_config_home / "metis-memory"
    folder.chmod(0o777)
    try:
        with pytest.raises(ForeignMemory, match=r"writable by other users.*chmod go-w"):
            store.read(MemoryFile.USER)
        with pytest.raises(ForeignMemory, match="your user memory"):
            store.add_entry(MemoryFile.USER, "More.")
    finally:
        folder.chmod(0o700)
    assert store.read(MemoryFile.USER) == "Answer in British English.\n"


def test_a_file_others_may_write_is_not_read(user_config_home: Path) -> None:
    store = MemoryStore.for_user()
    store.add_entry(MemoryFile.USER, "Answer in British English.")
    (user_config_home / "metis-memory" / "USER.md").chmod(0o666)
    with pytest.raises(ForeignMemory):
        store.read(MemoryFile.USER)


def test_a_symlink_leading_out_is_refused(user_config_home: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "USER.md").write_text("planted\n")
    folder = user_config_home / "metis-memory"
    folder.mkdir(mode=0o700)
    (folder / "USER.md").symlink_to(outside / "USER.md")
    store = MemoryStore.for_user()
    said = r"outside its folder .*your user memory is read in every workspace"
    with pytest.raises(UnsafePath, match=said):
        store.read(MemoryFile.USER)
    with pytest.raises(UnsafePath, match=said):
        store.add_entry(MemoryFile.USER, "More.")
    assert (outside / "USER.md").read_text() == "planted\n"


def test_no_home_folder_reads_nothing_and_refuses_writes_saying_why(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """An account with no home (HOME unset, no passwd entry: a container's bare uid) has no
    user memory; the workspace's memory still works, and a write to the user memory says why."""
    import pwd

    monkeypatch.delenv("XDG_CONFIG_HOME")
    monkeypatch.delenv("HOME")

    def no_entry(uid: int) -> pwd.struct_passwd:
        raise KeyError(f"getpwuid(): uid not found: {uid}")

    monkeypatch.setattr(pwd, "getpwuid", no_entry)
    workspace = MemoryStore(tmp_path)
    workspace.add_entry(MemoryFile.MEMORY, "Build with make.")
    assert workspace.assemble_system_prompt("") == (
        "## Workspace memory (MEMORY.md)\n\nBuild with make."
    )
    user = workspace.user_memory
    assert user.read(MemoryFile.USER) == ""
    assert user.history() == []
    with pytest.raises(StorageError, match=r"no home folder.*Set XDG_CONFIG_HOME or HOME"):
        user.add_entry(MemoryFile.USER, "Answer in British English.")
    assert not (Path("/") / "metis-memory").exists()
