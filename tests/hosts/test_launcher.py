"""The `metis-memory` launcher (hosts/launcher.py) on a real file system, run for real: where
it goes, that it runs metis-memory (also through the extension's bundled `server.py`), that
it follows the extension when it moves, and that nothing at its place that is not ours is
ever written, nor a symlink followed."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from metis_memory import __version__
from metis_memory.hosts.launcher import (
    MARK,
    LauncherRefused,
    Target,
    install,
    place,
    script,
    status,
)

ROOT = Path(__file__).resolve().parents[2]
BUNDLE_LAUNCHER = ROOT / "extension" / "python" / "server.py"
MODULE = Target(sys.executable, ("-m", "metis_memory"))

pytestmark = pytest.mark.skipif(os.name == "nt", reason="the launcher is a POSIX shell script")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    return folder


def env_of(home: Path, *path: Path, **extra: str) -> dict[str, str]:
    return {"HOME": str(home), "PATH": os.pathsep.join(map(str, path)), **extra}


def run(launcher: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The launcher as an agent's shell runs `metis-memory ARGS`: by name, found on PATH."""
    environment = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}
    environment["PATH"] = f"{launcher.parent}{os.pathsep}/usr/bin{os.pathsep}/bin"
    return subprocess.run(
        ["metis-memory", *args],
        env=environment,
        cwd=cwd,
        capture_output=True,
        encoding="utf-8",
        timeout=60,
        check=False,
    )


def test_written_under_local_bin_mode_0755_and_runs_metis_memory(home: Path) -> None:
    env = env_of(home)
    after, written, message = install(MODULE, env)
    launcher = home / ".local" / "bin" / "metis-memory"
    assert written and after.path == launcher and after.state == "current"
    assert stat.S_IMODE(launcher.stat().st_mode) == 0o755
    assert MARK in launcher.read_text().splitlines()
    assert message.startswith("Added ~/.local/bin/metis-memory: it runs the metis-memory")
    # ~/.local/bin is not on this PATH: the message says what to add, and where.
    assert "~/.local/bin is not on your PATH" in message
    assert message.endswith('\nexport PATH="$HOME/.local/bin:$PATH"')
    assert after.path_hint() == 'export PATH="$HOME/.local/bin:$PATH"'
    done = run(launcher, "--version")
    assert (done.returncode, done.stdout.strip()) == (0, f"metis-memory {__version__}")
    again = install(MODULE, env)
    assert again[1:] == (
        False,
        "~/.local/bin/metis-memory already runs this metis-memory; nothing changed.",
    )


def test_on_path_the_message_has_no_path_line(home: Path) -> None:
    bin_dir = home / ".local" / "bin"
    after, written, message = install(MODULE, env_of(home, bin_dir))
    assert written and after.bin_on_path and after.found == str(bin_dir / "metis-memory")
    assert "PATH" not in message and after.path_hint() is None


@pytest.mark.parametrize(
    ("extra", "folder"),
    [
        ({"PIPX_BIN_DIR": "{tmp}/pipx-bin", "XDG_BIN_HOME": "{tmp}/xdg-bin"}, "pipx-bin"),
        ({"XDG_BIN_HOME": "{tmp}/xdg-bin"}, "xdg-bin"),
        ({"PIPX_BIN_DIR": "relative/bin", "XDG_BIN_HOME": ""}, "home/.local/bin"),
    ],
)
def test_its_folder_is_pipx_then_xdg_then_local_bin(
    tmp_path: Path, home: Path, extra: dict[str, str], folder: str
) -> None:
    env = env_of(home, **{k: v.format(tmp=tmp_path) for k, v in extra.items()})
    assert place(env) == tmp_path / folder / "metis-memory"
    after, written, message = install(MODULE, env)
    assert written and (tmp_path / folder / "metis-memory").is_file()
    if folder.startswith("home/"):
        assert after.path_hint() == 'export PATH="$HOME/.local/bin:$PATH"'
    else:
        assert after.path_hint() == f'export PATH={tmp_path / folder}:"$PATH"'
        assert f"{tmp_path / folder} is not on your PATH" in message


def test_rewritten_when_what_it_runs_moved_and_refresh_never_creates(home: Path) -> None:
    env = env_of(home)
    launcher = home / ".local" / "bin" / "metis-memory"
    assert install(MODULE, env, refresh=True)[1] is False
    assert not launcher.exists() and not launcher.parent.exists()
    old_extension = home / "ext-0.1.0" / "tool" / "server.py"
    install(Target(sys.executable, (str(old_extension), "cli")), env)
    assert str(old_extension) in launcher.read_text()
    # After an update the extension is elsewhere: its next start rewrites the launcher.
    assert status(MODULE, env).state == "stale"
    after, written, message = install(MODULE, env, refresh=True)
    assert written and after.state == "current" and message.startswith("Updated ")
    assert str(old_extension) not in launcher.read_text()
    assert launcher.read_text() == script(MODULE)
    assert run(launcher, "--version").returncode == 0
    assert not [p.name for p in launcher.parent.iterdir() if p.name != "metis-memory"]


def test_it_keeps_its_python_while_that_exists(tmp_path: Path, home: Path) -> None:
    """It follows the extension, not whichever interpreter a project selected: the Python it
    was written with stays until that Python is gone."""
    first = tmp_path / "first-python"
    first.symlink_to(sys.executable)
    env = env_of(home)
    launcher = home / ".local" / "bin" / "metis-memory"
    install(Target(str(first), ("-m", "metis_memory")), env)
    moved = Target(sys.executable, (str(tmp_path / "ext-0.2.0" / "server.py"), "cli"))
    _, written, message = install(moved, env, refresh=True)
    assert written and f"(with {first})" in message
    assert f"exec {first} {tmp_path / 'ext-0.2.0' / 'server.py'} cli" in launcher.read_text()
    assert status(moved, env).state == "current"
    assert install(moved, env, refresh=True)[1] is False
    first.unlink()
    assert status(moved, env).state == "stale"
    assert install(moved, env, refresh=True)[1] is True
    assert launcher.read_text() == script(moved)


def test_a_file_that_is_not_ours_is_never_touched(home: Path) -> None:
    launcher = home / ".local" / "bin" / "metis-memory"
    launcher.parent.mkdir(parents=True)
    # A user's own script that even says "metis-memory launcher" somewhere in a line.
    mine = f'#!/bin/sh\n# my own {MARK[2:]} copy\nexec /opt/metis/bin/metis-memory "$@"\n'
    launcher.write_text(mine)
    launcher.chmod(0o700)
    before = launcher.stat()
    for refresh in (True, False):
        if refresh:
            after, written, _ = install(MODULE, env_of(home), refresh=True)
            assert (after.state, written) == ("foreign", False)
        else:
            with pytest.raises(LauncherRefused) as refused:
                install(MODULE, env_of(home))
            assert str(refused.value).startswith(
                "~/.local/bin/metis-memory exists and was not written by this extension"
            )
            assert "it was left as it is" in str(refused.value)
            assert "pipx install metis-agent-memory" in str(refused.value)
    assert launcher.read_text() == mine
    now = launcher.stat()
    assert (now.st_mtime_ns, now.st_ino, stat.S_IMODE(now.st_mode)) == (
        before.st_mtime_ns,
        before.st_ino,
        0o700,
    )
    assert sorted(p.name for p in launcher.parent.iterdir()) == ["metis-memory"]


def test_a_symlink_is_never_followed_nor_replaced(tmp_path: Path, home: Path) -> None:
    """pipx's own command is a symlink into its venv; one of ours pointed elsewhere is not
    ours either: neither the link nor what it points to is written."""
    venv_command = tmp_path / "pipx-venv" / "bin" / "metis-memory"
    venv_command.parent.mkdir(parents=True)
    venv_command.write_text(script(MODULE))  # even a target holding our mark
    launcher = home / ".local" / "bin" / "metis-memory"
    launcher.parent.mkdir(parents=True)
    launcher.symlink_to(venv_command)
    for refresh in (True, False):
        if refresh:
            assert (
                install(Target(sys.executable, ("-m", "x")), env_of(home), refresh=True)[1] is False
            )
        else:
            with pytest.raises(LauncherRefused) as refused:
                install(Target(sys.executable, ("-m", "x")), env_of(home))
            assert str(refused.value).startswith(
                f"~/.local/bin/metis-memory is a symbolic link (to {venv_command}), as pipx "
                "installs its commands"
            )
            assert "~/.local/bin is not on your PATH" in str(refused.value)
    assert launcher.is_symlink() and os.readlink(launcher) == str(venv_command)
    assert venv_command.read_text() == script(MODULE)


def test_a_dangling_symlink_or_a_folder_is_refused_with_what_to_do(home: Path) -> None:
    launcher = home / ".local" / "bin" / "metis-memory"
    launcher.parent.mkdir(parents=True)
    launcher.symlink_to(home / "gone")
    with pytest.raises(LauncherRefused, match=r"What it points to is gone: reinstall it"):
        install(MODULE, env_of(home))
    assert not (home / "gone").exists()
    launcher.unlink()
    launcher.mkdir()
    with pytest.raises(LauncherRefused, match=r"is a folder or a special file, not a launcher"):
        install(MODULE, env_of(home))
    assert list(launcher.iterdir()) == []


def test_no_home_no_place(tmp_path: Path) -> None:
    with pytest.raises(LauncherRefused, match="Neither PIPX_BIN_DIR, XDG_BIN_HOME nor HOME"):
        install(MODULE, {"PATH": "/usr/bin", "HOME": "relative"})
    assert install(MODULE, {"PATH": ""}, refresh=True)[1] is False


def test_when_what_it_runs_is_gone_it_says_so_and_never_blocks_a_hook(home: Path) -> None:
    gone = home / "ext-0.1.0" / "tool" / "server.py"
    install(Target(sys.executable, (str(gone), "cli")), env_of(home))
    launcher = home / ".local" / "bin" / "metis-memory"
    hook = run(launcher, "hook", "--host", "claude")
    assert hook.returncode == 0 and hook.stdout == ""  # the agent's prompt goes on
    assert f"this launcher runs {sys.executable} {gone} cli, which is gone" in hook.stderr
    assert "pipx install metis-agent-memory" in hook.stderr
    assert run(launcher, "--version").returncode == 127


def test_paths_with_spaces_quotes_and_unicode(tmp_path: Path, home: Path) -> None:
    odd = tmp_path / "bin dir 'ü' $HOME \"x\""
    server = bundle(tmp_path / "ext $(touch pwned) `touch pwned` 'é'" / "bundled")
    env = env_of(home, PIPX_BIN_DIR=str(odd))
    _, written, _ = install(Target(sys.executable, (str(server), "cli")), env)
    assert written
    done = run(odd / "metis-memory", "--version")
    assert (done.returncode, done.stdout.strip()) == (0, f"metis-memory {__version__}"), done.stderr
    assert not list(tmp_path.rglob("pwned")) and not (Path.cwd() / "pwned").exists()


def bundle(root: Path) -> Path:
    """The VSIX's layout around a copy of the bundled launcher: tool/server.py and libs/ with
    this interpreter's folder (empty: this venv already has the libraries)."""
    tool = root / "tool"
    tool.mkdir(parents=True)
    shutil.copy(BUNDLE_LAUNCHER, tool / "server.py")
    threads = "t" if sysconfig.get_config_var("Py_GIL_DISABLED") else ""
    tag = "cp{}{}{}".format(*sys.version_info[:2], threads)
    for folder in (tag, "common"):
        (root / "libs" / folder).mkdir(parents=True)
    return tool / "server.py"


def test_through_the_extensions_bundled_server_py(
    tmp_path: Path, home: Path, workspace: Path
) -> None:
    server = bundle(tmp_path / "metis.metis-memory-0.1.0" / "dist" / "bundled")
    install(Target(sys.executable, (str(server), "cli")), env_of(home))
    launcher = home / ".local" / "bin" / "metis-memory"
    version = run(launcher, "--version")
    assert (version.returncode, version.stdout.strip()) == (0, f"metis-memory {__version__}")
    (workspace / ".metis").mkdir()
    (workspace / ".metis" / "MEMORY.md").write_text("- The launcher works.\n")
    payload = json.dumps(
        {"session_id": "s", "hook_event_name": "SessionStart", "cwd": str(workspace)}
    )
    environment = {**os.environ, "PATH": f"{launcher.parent}{os.pathsep}/usr/bin:/bin"}
    hook = subprocess.run(
        ["/bin/sh", "-c", "metis-memory hook --host claude"],
        input=payload,
        env={**environment, "CLAUDE_PROJECT_DIR": str(workspace)},
        cwd=workspace,
        capture_output=True,
        encoding="utf-8",
        timeout=60,
        check=False,
    )
    assert hook.returncode == 0, hook.stderr
    context = json.loads(hook.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "- The launcher works." in context
    check = run(launcher, "check", str(workspace))
    assert "MEMORY.md" in check.stdout + check.stderr
