"""Whose files Metis trusts: one rule for what it reads as its own, the private cache
(`cache.py`) and a `.metis/` that the hook found by looking upward from the agent's folder
(`MemoryStore(..., discovered=True)`): the file and the folder that holds it belong to
this user, and no one else may write in either. Checked on what was opened (`fstat`),
never on a name looked up again later, so a swap between the check and the read is
caught too. Imports only `os` and `stat`: the hook before every prompt imports it.

A memory whoever else could write is not the user's "own notes from earlier sessions":
another user who plants `.metis/MEMORY.md` in a shared folder (`/tmp`) above the agent's
folder would be writing instructions into the agent's context.
"""

from __future__ import annotations

import os
import stat

from .errors import MemoryStoreError


class ForeignMemory(MemoryStoreError):
    """A memory file, or its folder, that another user owns or may write in."""


def others_may_write(st: os.stat_result) -> bool:
    """True when someone other than the owner may write the file, or in the folder, `st`
    describes: writable by all, or by a group that is not the user's own private group.
    (Windows: its ACLs are not modes; nothing is said there.)"""
    if os.name != "posix":  # pragma: no cover - Windows
        return False
    mode = stat.S_IMODE(st.st_mode)
    if mode & 0o002:
        return True
    return bool(mode & 0o020) and not own_private_group(st)


def own_private_group(st: os.stat_result) -> bool:
    """The file's group is the user's own private group (named after them, no other
    members): Debian's and Ubuntu's umask 002 scheme, under which group-writable means
    writable by the user alone."""
    if not hasattr(os, "getgid") or st.st_gid != os.getgid():
        return False
    try:
        import grp
        import pwd

        group = grp.getgrgid(st.st_gid)
        return not group.gr_mem and group.gr_name == pwd.getpwuid(os.geteuid()).pw_name
    except (ImportError, KeyError):
        return False


def someone_elses(st: os.stat_result) -> bool:
    return hasattr(os, "geteuid") and st.st_uid != os.geteuid()


def whose(path: object, st: os.stat_result) -> str | None:
    """What is wrong with `path` (described by `st`) as something of this user's: None,
    or "<path> belongs to another user (…)" / "<path> is writable by other users (…)"."""
    if someone_elses(st):
        return f"{path} belongs to another user (uid {st.st_uid}, you are {os.geteuid()})"
    if others_may_write(st):
        return f"{path} is writable by other users (mode {stat.S_IMODE(st.st_mode):04o})"
    return None


def check_discovered(path: object, st: os.stat_result, *, folder: bool) -> None:
    """Raise ForeignMemory when `path` (a memory file, or with `folder` the folder that
    holds it) of a workspace found by looking upward is not the user's alone."""
    problem = whose(path, st)
    if problem is None:
        return
    if someone_elses(st):
        fix = "If you trust it, name the workspace explicitly"
    else:
        fix = f"Run `chmod go-w {path}` if it is yours, or name the workspace explicitly"
    raise ForeignMemory(
        f"{problem}, so {'nothing in it was' if folder else 'it was not'} read as this workspace's "
        "memory: a `.metis/` found by looking upward from the agent's folder is read only "
        f"when it is the user's own and no one else may write it. {fix} (the hook's "
        "--workspace DIR, or the host's project variable)"
    )
