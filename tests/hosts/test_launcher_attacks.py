"""The launcher (hosts/launcher.py) attacked: a launcher of ours the user edited, a bin
folder that is a file, a Python path with a line break, two windows refreshing at once."""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

import pytest

from metis_memory.hosts.launcher import (
    MARK,
    LauncherRefused,
    Target,
    _write,
    install,
    script,
    status,
)

MODULE = Target(sys.executable, ("-m", "metis_memory"))

pytestmark = pytest.mark.skipif(os.name == "nt", reason="the launcher is a POSIX shell script")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    return folder


def env_of(home: Path, **extra: str) -> dict[str, str]:
    return {"HOME": str(home), "PATH": "/usr/bin", **extra}


def test_an_edited_launcher_of_ours_is_never_rewritten(tmp_path: Path, home: Path) -> None:
    """The user kept the mark but changed a line: their edit is theirs, not clobbered at the
    next start (refresh), and Add Launcher says what to do instead of writing over it."""
    env = env_of(home)
    launcher = home / ".local" / "bin" / "metis-memory"
    old = Target(sys.executable, (str(tmp_path / "ext-0.1.0" / "server.py"), "cli"))
    install(old, env)
    edited = launcher.read_text().replace("if [", "export METIS_DEBUG=1\nif [", 1)
    assert MARK in edited.splitlines()
    launcher.write_text(edited)
    assert status(MODULE, env).state == "edited"
    after, written, message = install(MODULE, env, refresh=True)
    assert (after.state, written) == ("edited", False)
    assert message == "~/.local/bin/metis-memory: not rewritten (edited)."
    assert launcher.read_text() == edited
    with pytest.raises(LauncherRefused) as refused:
        install(MODULE, env)
    assert str(refused.value).startswith(
        "~/.local/bin/metis-memory is a launcher this extension wrote, edited since"
    )
    assert "it was left as it is" in str(refused.value)
    assert "Delete it and choose Add Launcher again" in str(refused.value)
    assert launcher.read_text() == edited
    # Unedited, it is ours again: rewritten to follow the extension.
    launcher.write_text(script(old))
    assert install(MODULE, env, refresh=True)[1] is True


def test_a_python_path_with_a_line_break_is_kept_like_any_other(tmp_path: Path, home: Path) -> None:
    odd = tmp_path / "py\nthon"
    odd.symlink_to(sys.executable)
    env = env_of(home)
    install(Target(str(odd), ("-m", "metis_memory")), env)
    moved = Target(sys.executable, (str(tmp_path / "ext-0.2.0" / "server.py"), "cli"))
    _, written, _ = install(moved, env, refresh=True)
    assert written
    launcher = home / ".local" / "bin" / "metis-memory"
    assert launcher.read_text() == script(Target(str(odd), moved.args))


def test_a_refresh_that_another_window_already_did_is_no_refusal(home: Path) -> None:
    """Two windows start after an update: both find the launcher stale, one renames its
    copy in first. The other finds exactly what it meant to write: nothing to refuse."""
    launcher = home / "bin" / "metis-memory"
    launcher.parent.mkdir()
    old = script(Target(sys.executable, ("/gone/server.py", "cli"))).encode()
    new = script(MODULE).encode()
    launcher.write_bytes(new)  # the other window's write, after this one read `old`
    _write(launcher, new, old)
    assert launcher.read_bytes() == new
    assert sorted(p.name for p in launcher.parent.iterdir()) == ["metis-memory"]


def test_a_bin_folder_that_is_a_file_is_named_as_one(tmp_path: Path, home: Path) -> None:
    not_a_folder = tmp_path / "bin"
    not_a_folder.write_text("a file\n")
    for given in (not_a_folder, not_a_folder / "deeper"):
        with pytest.raises(LauncherRefused) as refused:
            install(MODULE, env_of(home, PIPX_BIN_DIR=str(given)))
        assert str(refused.value).startswith(
            f"{not_a_folder} is a file, not a folder, so there is no place for the launcher"
        ), str(refused.value)
        assert "PIPX_BIN_DIR" in str(refused.value)
    assert not_a_folder.read_text() == "a file\n"


def test_the_template_is_pinned_because_it_is_how_our_launchers_are_recognised() -> None:
    """A launcher counts as ours and unedited when it is exactly `script()`'s text: changing
    that text makes every launcher already installed look edited, left alone and never kept
    current again. Change it only with `_parsed` also accepting the previous text (and a
    test that a launcher written by it is still refreshed), then update this digest."""
    text = script(Target("/usr/bin/python3", ("/ext/tool/server.py", "cli")))
    assert hashlib.sha256(text.encode()).hexdigest() == (
        "39583818c9bee1afe8c0116c4f9fd203d264156838d2379a6b07c8f1cc4751ac"
    ), "script()'s text changed: see this test's docstring"


@pytest.mark.parametrize("entry", ["", ".", "bin"])
def test_a_relative_path_entry_does_not_count_as_metis_memory_on_path(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch, entry: str
) -> None:
    """A repository's own `metis-memory`, found from where the server runs, is not this
    machine's: the launcher is still offered."""
    for folder in (tmp_path, tmp_path / "bin"):
        folder.mkdir(exist_ok=True)
        (folder / "metis-memory").write_text("#!/bin/sh\n")
        (folder / "metis-memory").chmod(0o755)
    monkeypatch.chdir(tmp_path)
    found = status(MODULE, {"HOME": str(home), "PATH": f"{entry}:/nonexistent"})
    assert (found.found, found.state, found.bin_on_path) == (None, "absent", False)
