"""Where "Show consolidation proposal" writes: a directory of the user's own in the user
cache, never a relative path (the server's cwd is often the workspace), never a directory
or symlink someone else put there."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from metis_memory.store.cache import CACHE_ENV, cache_root, private_dir


def test_a_relative_cache_override_is_not_used(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CACHE_ENV, "relative/cache")
    assert cache_root().is_absolute()
    assert not str(cache_root()).endswith("relative/cache")
    monkeypatch.setenv(CACHE_ENV, "/abs/cache")
    assert cache_root() == Path("/abs/cache/metis-memory")  # a folder of its own in it


def test_private_dir_creates_and_tightens_its_own(tmp_path: Path) -> None:
    made = private_dir(tmp_path / "a" / "b")
    assert made.is_dir() and os.stat(made).st_mode & 0o077 == 0
    os.chmod(made, 0o755)
    private_dir(made)
    assert os.stat(made).st_mode & 0o077 == 0


def test_private_dir_refuses_a_symlink_or_a_file(tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "elsewhere")
    (tmp_path / "file").write_text("x", encoding="utf-8")
    for name in ("link", "file"):
        with pytest.raises(OSError):
            private_dir(tmp_path / name)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give a directory to nobody")
def test_private_dir_refuses_another_users_directory(tmp_path: Path) -> None:
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    os.chown(theirs, 65534, 65534)
    with pytest.raises(PermissionError, match="belongs to another user"):
        private_dir(theirs)
