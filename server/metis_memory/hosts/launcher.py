"""The `metis-memory` launcher: a small script in the user's bin folder that runs the
metis-memory an editor extension carries, so that the hooks and MCP servers written into
committed files (which name only `metis-memory`) run on a machine without
`pipx install metis-agent-memory`.

Where: `$PIPX_BIN_DIR` when set (where `pipx install` would put the command), else
`$XDG_BIN_HOME` (where `uv tool install` would), else `~/.local/bin` (both tools' default).
Only an absolute value counts.

What is ours: a regular file holding `MARK` that is still exactly as `script()` wrote it
(for the target its exec line names). Only such a file is ever rewritten (when the extension
moved, after an update, or runs another Python); anything else at that name (the symlink
pipx makes, a user's own script, a folder, one of ours the user edited) is left as it is,
and a symlink is never followed. Written whole beside it, mode 0755, then linked into place
(a new launcher: never over a file that appeared meanwhile) or renamed over ours.

`script()`'s text is what recognises our launchers: a change to it makes every launcher
written before look edited (left alone, no longer kept current) unless `_parsed` also
accepts the earlier text (tests/hosts/test_launcher_attacks.py pins it).
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shlex
import shutil
import stat
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from .._version import DISTRIBUTION
from .detect import absolute_path_entries

COMMAND = "metis-memory"
MARK = "# metis-memory launcher, written by the Metis Memory editor extension."
MAX_READ = 64 * 1024
"""A launcher is well under 2 KB; a bigger file there is not ours, and is not read."""
PIPX = f"pipx install {DISTRIBUTION}"


class LauncherRefused(Exception):
    """Nothing was written: what is at the launcher's place is not ours, or there is no
    place for it. The message says what to do."""


@dataclass(frozen=True)
class Target:
    """What the launcher runs: `python ARGS... "$@"`, while every file in `needs` exists."""

    python: str
    args: tuple[str, ...]

    @property
    def needs(self) -> tuple[str, ...]:
        return (self.python, *(a for a in self.args if os.path.isabs(a)))

    def shown(self) -> str:
        return shlex.join([self.python, *self.args])


def own_target() -> Target | None:
    """How to run this process's metis-memory again: the extension's bundled launcher
    (`server.py`, with the interpreter it runs on) or this interpreter's module."""
    python = sys.executable
    if not python or not os.path.isabs(python):
        return None
    script = os.path.abspath(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    libs = os.path.join(os.path.dirname(os.path.dirname(script)), "libs")
    if os.path.basename(script) == "server.py" and os.path.isdir(libs):
        return Target(python, (script, "cli"))
    return Target(python, ("-m", "metis_memory"))


def script(target: Target) -> str:
    """The launcher's text: runs the target, or says plainly that it is gone."""
    q = shlex.quote
    tests = " && ".join(
        f"[ -x {q(target.python)} ]" if path == target.python else f"[ -f {q(path)} ]"
        for path in target.needs
    )
    gone = (
        f"metis-memory: this launcher runs {target.shown()}, which is gone (the editor "
        "extension that wrote it was updated or removed, or that Python was). Open the "
        f"editor again to rewrite it, or install metis-memory: {PIPX}"
    )
    return (
        "#!/bin/sh\n"
        f"{MARK}\n"
        "# It runs the metis-memory that the extension carries, for the agents' hooks and MCP\n"
        "# servers that committed files name only as `metis-memory`. The extension rewrites\n"
        "# this file when it updates, as long as it is as written here: edit it, and it is\n"
        f"# yours (left alone). Delete the file to stop, or replace it with `{PIPX}`.\n"
        f"if {tests}; then\n"
        f'  exec {shlex.join([target.python, *target.args])} "$@"\n'
        "fi\n"
        f"printf '%s\\n' {q(gone)} >&2\n"
        'if [ "${1-}" = hook ]; then exit 0; fi  # a hook never blocks the agent\n'
        "exit 127\n"
    )


@dataclass(frozen=True)
class Status:
    """The launcher's place and what is there, and whether agents find `metis-memory`."""

    path: Path | None
    """None where there is no place for it (no HOME, or Windows)."""
    state: str
    """absent | current | stale (ours, running something else) | edited (ours, changed by
    the user: left alone) | foreign | symlink | other (a folder, a special file) |
    unsupported (no place for it)."""
    found: str | None
    """What `metis-memory` is on PATH, if anything."""
    bin_on_path: bool
    home: Path | None

    def shown(self, path: str | Path | None = None) -> str:
        """`path` (by default the launcher's) with the home folder as `~`."""
        given = self.path if path is None else Path(path)
        if given is None:
            return COMMAND
        if self.home is not None and given.is_relative_to(self.home):
            return str(Path("~") / given.relative_to(self.home))
        return str(given)

    def path_hint(self) -> str | None:
        """The shell line that puts the bin folder on PATH, when it is not."""
        if self.bin_on_path or self.path is None:
            return None
        folder = self.path.parent
        if self.home is not None and folder.is_relative_to(self.home):
            rest = folder.relative_to(self.home).as_posix()
            if re.fullmatch(r"[\w./-]+", rest):
                return f'export PATH="$HOME/{rest}:$PATH"'
        return f'export PATH={shlex.quote(str(folder))}:"$PATH"'

    def path_note(self) -> str:
        hint = self.path_hint()
        if hint is None:
            return ""
        assert self.path is not None
        return (
            f" {self.shown(self.path.parent)} is not on your PATH, so agents do not find it "
            "yet: add this line to your shell's startup file (~/.profile, ~/.bashrc or "
            f"~/.zshrc), then start the agent from a new terminal:\n{hint}"
        )

    def wire(self) -> dict[str, object]:
        return {
            "path": self.shown(),
            "state": self.state,
            "found": None if self.found is None else self.shown(self.found),
            "binOnPath": self.bin_on_path,
            "pathHint": self.path_hint(),
        }


def place(environ: Mapping[str, str]) -> Path | None:
    """Where the launcher goes (see the module's docstring), or None."""
    if os.name == "nt":
        return None
    for variable in ("PIPX_BIN_DIR", "XDG_BIN_HOME"):
        value = environ.get(variable, "")
        if os.path.isabs(value):
            return Path(value) / COMMAND
    home = _home(environ)
    return None if home is None else home / ".local" / "bin" / COMMAND


def status(target: Target | None, environ: Mapping[str, str] | None = None) -> Status:
    env = os.environ if environ is None else environ
    path = place(env) if target is not None else None
    search = absolute_path_entries(env.get("PATH", ""))
    found = shutil.which(COMMAND, path=search) if search else None
    if path is None or target is None:
        return Status(None, "unsupported", found, False, _home(env))
    state, current = _inspect(path, "")
    state, _ = _inspect(path, script(_keeping_python(target, current)))
    on_path = any(_same_folder(Path(e), path.parent) for e in search.split(os.pathsep) if e)
    return Status(path, state, found, on_path, _home(env))


def install(
    target: Target | None, environ: Mapping[str, str] | None = None, *, refresh: bool = False
) -> tuple[Status, bool, str]:
    """Write the launcher for `target` (or, with `refresh`, only rewrite one of ours that
    runs something else). Returns the status after, whether it wrote, and a message for
    people. Raises LauncherRefused (not with `refresh`, which then writes nothing)."""
    try:
        return _install(target, environ, refresh=refresh)
    except LauncherRefused as refused:
        if not refresh:
            raise
        after = status(target, os.environ if environ is None else environ)
        return after, False, f"{after.shown()}: not rewritten. {refused}"


def _install(
    target: Target | None, environ: Mapping[str, str] | None, *, refresh: bool
) -> tuple[Status, bool, str]:
    env = os.environ if environ is None else environ
    before = status(target, env)
    if target is None or before.path is None:
        if refresh:
            return before, False, "There is no place for a launcher here."
        raise LauncherRefused(_no_place(env))
    path = before.path
    state, current = _inspect(path, "")
    target = _keeping_python(target, current)
    text = script(target)
    state, current = _inspect(path, text)
    if state == "current":
        return before, False, f"{before.shown()} already runs this metis-memory; nothing changed."
    if refresh and state != "stale":
        return before, False, f"{before.shown()}: not rewritten ({state})."
    if state in ("foreign", "edited", "symlink", "other"):
        raise LauncherRefused(_refusal(before, state))
    _write(path, text.encode("utf-8", "surrogateescape"), current if state == "stale" else None)
    after = status(target, env)
    verb = "Updated" if state == "stale" else "Added"
    message = (
        f"{verb} {after.shown()}: it runs the metis-memory this editor extension carries "
        f"(with {after.shown(target.python)}), and the extension keeps it current when it "
        "updates (delete the file to stop)."
    )
    if after.found is not None and not _same_file(after.found, path):
        message += (
            f" Note: `metis-memory` on your PATH is {after.shown(after.found)}, which comes "
            "first, so agents run that one."
        )
    return after, True, message + after.path_note()


def _keeping_python(target: Target, ours: bytes | None) -> Target:
    """`target`, with the Python our launcher there already runs while that still exists:
    it follows the extension when it moves, not each project's interpreter (a workspace can
    select one of its own), so it changes only when its Python is gone."""
    written = None if ours is None else _parsed(ours)
    if written is None:
        return target
    python = written.python
    if os.path.isabs(python) and os.access(python, os.X_OK):
        return Target(python, target.args)
    return target


def _parsed(data: bytes) -> Target | None:
    """What the launcher `data` runs, when it is exactly as `script()` writes it for that;
    None for anything else (not ours, or edited)."""
    text = data.decode("utf-8", "surrogateescape")
    start = text.find("\n  exec ")
    end = text.find(' "$@"\nfi\n', start)
    if start < 0 or end < 0:
        return None
    try:  # (the line may span lines: a path can hold a line break, quoted)
        words = shlex.split(text[start + len("\n  exec ") : end])
    except ValueError:
        return None
    if not words:
        return None
    target = Target(words[0], tuple(words[1:]))
    return target if script(target) == text else None


def _no_place(env: Mapping[str, str]) -> str:
    if os.name == "nt":
        return (
            "The launcher is a shell script for Linux and macOS; on Windows install "
            f"metis-memory with `{PIPX}` so that agents can run it."
        )
    if sys.executable and not os.path.isabs(sys.executable):
        return (
            f"This server runs on {sys.executable!r}, not an absolute path, so no launcher "
            f"can name it: install metis-memory with `{PIPX}`."
        )
    return (
        "Neither PIPX_BIN_DIR, XDG_BIN_HOME nor HOME is set to an absolute path, so there is "
        f"no bin folder for the launcher: set one, or install metis-memory with `{PIPX}`."
    )


def _refusal(status_: Status, state: str) -> str:
    shown = status_.shown()
    assert status_.path is not None
    if state == "symlink":
        try:
            points = f" (to {status_.shown(os.readlink(status_.path))})"
        except OSError:
            points = ""
        what = (
            f"{shown} is a symbolic link{points}, as pipx installs its commands, not the "
            "launcher this extension writes: it was left as it is."
        )
        if not os.path.exists(status_.path):
            return what + (
                f" What it points to is gone: reinstall it (`{PIPX} --force`), or remove the "
                "link and choose Add Launcher again."
            )
        return what + (status_.path_note() or " It is on your PATH: agents can run it.")
    if state == "other":
        blocker = _not_a_folder(status_.path.parent)
        if blocker is not None:
            return (
                f"{status_.shown(blocker)} is a file, not a folder, so there is no place for "
                f"the launcher in {status_.shown(status_.path.parent)}: nothing was written. "
                "Set PIPX_BIN_DIR to a folder for it (and put that folder on your PATH), or "
                f"install metis-memory with `{PIPX}`."
            )
        return (
            f"{shown} is a folder or a special file, not a launcher: nothing was written. "
            f"Move it aside and choose Add Launcher again, or install metis-memory with `{PIPX}`."
        )
    if state == "edited":
        return (
            f"{shown} is a launcher this extension wrote, edited since (its lines are not "
            "the ones the extension writes): it was left as it is. Delete it and choose Add "
            f"Launcher again for a fresh one, or keep it as your own (remove its line {MARK!r})."
        )
    return (
        f"{shown} exists and was not written by this extension (it has no line {MARK!r}): "
        "it was left as it is. Rename or remove it and choose Add Launcher again, or put the "
        f"metis-memory you want on PATH (`{PIPX}`)."
    )


def _not_a_folder(folder: Path) -> Path | None:
    """The closest of `folder` and its parents that exists, when that is not a folder."""
    for candidate in (folder, *folder.parents):
        if os.path.lexists(candidate):
            return None if os.path.isdir(candidate) else candidate
    return None


def _home(env: Mapping[str, str]) -> Path | None:
    home = env.get("HOME", "")
    return Path(home) if os.path.isabs(home) else None


def _inspect(path: Path, wanted: str) -> tuple[str, bytes | None]:
    """What is at `path` (never following a symlink), and its bytes when it is ours."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return "absent", None
    except (OSError, ValueError):
        return "other", None
    if stat.S_ISLNK(info.st_mode):
        return "symlink", None
    if not stat.S_ISREG(info.st_mode):
        return "other", None
    if info.st_size > MAX_READ:
        return "foreign", None
    data = _read(path)
    if data is None or MARK.encode() not in data.splitlines():
        return "foreign", None
    if _parsed(data) is None:
        return "edited", None
    return ("current" if data == wanted.encode("utf-8", "surrogateescape") else "stale"), data


def _read(path: Path) -> bytes | None:
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    flags |= getattr(os, "O_NONBLOCK", 0)  # a FIFO swapped in must not hang us
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        data = b""
        while len(data) <= MAX_READ:
            chunk = os.read(fd, MAX_READ + 1 - len(data))
            if not chunk:
                return data
            data += chunk
        return None  # grew past the bound since it was looked at: not ours
    finally:
        os.close(fd)


def _write(path: Path, data: bytes, replacing: bytes | None) -> None:
    """`data` at `path`, mode 0755, whole or not at all. `replacing`: the bytes of our
    launcher there (renamed over only while it still holds them); None: nothing may be
    there (linked into place, so a file that appeared meanwhile is never replaced)."""
    folder = path.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise LauncherRefused(
            f"Could not make the folder {folder} for the launcher ({exc.strerror}); nothing "
            f"was written. Make it yourself, or install metis-memory with `{PIPX}`."
        ) from None
    temp = folder / f".{path.name}.metis-{os.urandom(6).hex()}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(temp, flags | getattr(os, "O_CLOEXEC", 0), 0o700)
    except OSError as exc:
        raise LauncherRefused(
            f"Could not write in {folder} ({exc.strerror}); nothing was written. Check "
            f"that folder's permissions, or install metis-memory with `{PIPX}`."
        ) from None
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fchmod(fd, 0o755)
            os.fsync(fd)
        finally:
            os.close(fd)
        if replacing is None:
            _link_new(temp, path, data)
        else:
            now = _inspect(path, "")[1]
            if now == data:  # another window's refresh got there first
                return
            if now != replacing:
                raise LauncherRefused(
                    f"{path} changed while the launcher was written; it was left as it is. "
                    "Choose Add Launcher again."
                )
            os.replace(temp, path)
    except OSError as exc:
        raise LauncherRefused(
            f"Could not write {path} ({exc.strerror}); nothing was changed there."
        ) from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
    _sync_folder(folder)


def _link_new(temp: Path, path: Path, data: bytes) -> None:
    try:
        os.link(temp, path)
    except FileExistsError:
        if _inspect(path, "")[1] == data:  # another window added the same launcher first
            return
        raise LauncherRefused(
            f"{path} appeared while the launcher was written; it was left as it is. "
            "Choose Add Launcher again."
        ) from None
    except OSError as exc:  # a file system without hard links
        if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV):
            raise
        if os.path.lexists(path):
            raise LauncherRefused(f"{path} appeared meanwhile; it was left as it is.") from None
        os.rename(temp, path)


def _sync_folder(folder: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _same_folder(a: Path, b: Path) -> bool:
    if os.path.normpath(a) == os.path.normpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        return False


def _same_file(a: str, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        return False
