"""Attacks on where the user memory lives (issue 43): `$XDG_CONFIG_HOME` naming a file, the
`metis-memory` folder a file, and review turned on where no write log can be kept. The store's
refusals said "could not open the workspace ... move it away so .metis can be a directory" of
a config folder, and `set_review(True)` returned as if review were on while nothing recorded it
(so agents' writes went on unreviewed after the user was told they would wait)."""

from __future__ import annotations

from pathlib import Path

import pytest

from metis_memory import MemoryStore
from metis_memory.store.errors import StorageError
from metis_memory.store.files import MemoryFile


def test_a_config_home_that_is_a_file_is_said_of_the_user_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "not-a-folder"
    config.write_text("")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    store = MemoryStore.for_user()
    for attempt in (
        lambda: store.add_entry(MemoryFile.USER, "- Answer in British English"),
        lambda: store.read(MemoryFile.USER),
    ):
        with pytest.raises(StorageError) as caught:
            attempt()
        message = str(caught.value)
        assert "your user memory's config folder" in message, message
        assert str(config) in message
        assert "XDG_CONFIG_HOME" in message
        assert "workspace" not in message and ".metis" not in message
    assert config.read_text() == ""


def test_a_user_memory_folder_that_is_a_file_is_named_as_such(user_config_home: Path) -> None:
    (user_config_home / "metis-memory").write_text("")
    store = MemoryStore.for_user()
    with pytest.raises(StorageError) as caught:
        store.add_entry(MemoryFile.USER, "- Answer in British English")
    message = str(caught.value)
    assert ".metis" not in message, message
    assert "metis-memory" in message and "move it away" in message
    assert (user_config_home / "metis-memory").read_text() == ""


def test_review_on_where_no_log_can_be_kept_is_refused_not_pretended(
    user_config_home: Path, workspace: Path
) -> None:
    (user_config_home / "metis-memory").write_text("")
    user = MemoryStore.for_user()
    with pytest.raises(StorageError, match="review"):
        user.set_review(True)
    assert not user.review_enabled()

    (workspace / ".metis").write_text("")
    store = MemoryStore(workspace)
    with pytest.raises(StorageError, match="review"):
        store.set_review(True)
    assert not store.review_enabled()
    assert (workspace / ".metis").read_text() == ""
