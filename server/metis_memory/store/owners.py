"""Whose files Metis trusts: one rule for what it reads as its own, the private cache
(`cache.py`) and a `.metis/` that the hook found by looking upward from the agent's folder
(`MemoryStore(..., discovered=True)`): the file and the folder that holds it belong to
this user, and no one else may write in either. Checked on what was opened (`fstat`, and
the ACL read from the same descriptor), never on a name looked up again later, so a swap
between the check and the read is caught too. Imports only `errno`, `os` and `stat`: the
hook before every prompt imports it.

A memory whoever else could write is not the user's "own notes from earlier sessions":
another user who plants `.metis/MEMORY.md` in a shared folder (`/tmp`) above the agent's
folder would be writing instructions into the agent's context.

Who may write is the mode and, on Linux, the POSIX access ACL (`setfacl`): with an ACL,
the mode's group bits are only its mask, and `u:65534:rwx` on a 0755 folder shows as 0775.
Not read, so not guaranteed: macOS and BSD extended ACLs (`chmod +a`; Python has no call
for them, so there the rule is the mode alone), NFSv4 ACLs (`system.nfs4_acl`), Windows
ACLs, and root or any process with CAP_DAC_OVERRIDE, which may write anything.

A group-writable file or folder is the user's alone only when its group is certainly their
private one (`private_group_problem`): named after them, and no other account has it,
neither as its primary group (passwd's gid field, which the group's member list leaves
out) nor as a member on any group line of that gid (a gid may have several lines;
`getgrgid` returns the first). When the account lists cannot tell (too long, or not
showing this user, as a directory service that does not enumerate), it is not private.
"""

from __future__ import annotations

import errno
import os
import stat

from .errors import MemoryStoreError


class ForeignMemory(MemoryStoreError):
    """A memory file, or its folder, that another user owns or may write in."""


def others_may_write(st: os.stat_result, fd: int | None) -> bool:
    """True when someone other than the owner may write the file, or in the folder, `st`
    describes (open as `fd`, whose ACL is read; see `other_writer`)."""
    return other_writer(st, fd) is not None


def other_writer(st: os.stat_result, fd: int | None) -> str | None:
    """Who other than the owner may write the file or folder `st` describes, as words for
    a message ("mode 0777", "an ACL lets uid 65534 write it"), or None: writable by all,
    or by a group that is not the user's own private group, or by anyone the POSIX ACL of
    `fd` (the descriptor `st` came from) lets write; without `fd`, the mode alone decides.
    (Windows: its ACLs are not modes; nothing is said there.)"""
    if os.name != "posix":  # pragma: no cover - Windows
        return None
    mode = stat.S_IMODE(st.st_mode)
    if mode & 0o002:
        return f"mode {mode:04o}"
    try:
        acl = access_acl(fd) if fd is not None else None
    except OSError as exc:
        return f"its ACL could not be read ({exc.strerror or exc}), so who may write it is unknown"
    if acl is None:  # the mode's group bits are the owning group's own
        if not mode & 0o020:
            return None
        problem = private_group_problem(st.st_gid)
        return None if problem is None else _with(f"mode {mode:04o}", problem)
    return _acl_writer(acl, st)


def _with(writer: str, problem: str) -> str:
    return f"{writer}, and {problem}" if problem else writer


# ---- POSIX access ACLs (Linux) -------------------------------------------------------------
# The attribute `setfacl` sets, as the kernel stores it (include/uapi/linux/posix_acl_xattr.h,
# include/uapi/linux/posix_acl.h): a little-endian u32 version (2), then 8-byte entries
# (u16 tag, u16 perm, u32 id), sorted by tag.
ACL_XATTR = "system.posix_acl_access"
_ACL_VERSION = 2
_USER, _GROUP_OBJ, _GROUP, _MASK, _OTHER = 0x02, 0x04, 0x08, 0x10, 0x20
_WRITE = 0x02
_NO_ACL = frozenset(
    code
    for code in (
        getattr(errno, "ENODATA", None),  # no ACL: the mode says it all
        getattr(errno, "ENOATTR", None),
        errno.ENOTSUP,  # a file system without POSIX ACLs (tmpfs without them, vfat, ...)
        errno.EOPNOTSUPP,
    )
    if code is not None
)
HAVE_ACLS = hasattr(os, "getxattr")
"""Whether ACLs are read: Linux's `os.getxattr`. macOS has no such call in Python (its
ACLs are another API), so there the rule is the mode alone."""


def access_acl(fd: int) -> list[tuple[int, int, int]] | None:
    """The POSIX access ACL of the file or folder open as `fd`, as `(tag, perm, id)`
    entries, or None where it has none (or the platform or file system has no POSIX
    ACLs). Read once, and bounded: the kernel keeps an attribute to 64 KiB
    (XATTR_SIZE_MAX), and `os.getxattr` asks for at most that, so at most 8,191 entries
    are parsed. Raises OSError when it cannot be read or is not a version-2 ACL (the
    caller then trusts nothing)."""
    if not HAVE_ACLS:  # pragma: no cover - macOS, BSDs, Windows
        return None
    try:
        value = os.getxattr(fd, ACL_XATTR)
    except OSError as exc:
        if exc.errno in _NO_ACL:
            return None
        raise
    if len(value) < 4 or (len(value) - 4) % 8:
        raise OSError(errno.EINVAL, f"an ACL of {len(value)} bytes is not whole entries")
    if int.from_bytes(value[:4], "little") != _ACL_VERSION:
        raise OSError(errno.EINVAL, "an ACL of an unknown version")
    little = int.from_bytes
    return [
        (
            little(value[i : i + 2], "little"),
            little(value[i + 2 : i + 4], "little"),
            little(value[i + 4 : i + 8], "little"),
        )
        for i in range(4, len(value), 8)
    ]


def _acl_writer(acl: list[tuple[int, int, int]], st: os.stat_result) -> str | None:
    """Who besides the owner the ACL lets write, as the kernel decides access: acl(5),
    "ACCESS CHECK ALGORITHM" (https://man7.org/linux/man-pages/man5/acl.5.html), and
    Linux's fs/posix_acl.c, posix_acl_permission() (https://github.com/torvalds/linux/
    blob/master/fs/posix_acl.c; generic_permission() asks it for all but the owner): the
    owner gets the USER_OBJ entry; a named user (USER) or group (GROUP), and the owning
    group (GROUP_OBJ), get their entry's permissions ANDed with the MASK entry's, where
    there is one; everyone else gets OTHER. So, besides the owner, someone may write when
    a USER entry for another uid, a GROUP entry for a group other than the user's own
    private group, or a GROUP_OBJ entry of a group other than it, has write after the
    mask; or OTHER has write. (A named entry for the user themself never applies: the
    owner is matched first. A folder's write without search (x) lets no one create in
    it, but is counted anyway: the rule errs towards refusing.)"""
    mask = next((perm for tag, perm, _ in acl if tag == _MASK), 0o7)
    me = os.geteuid()
    for tag, perm, ident in acl:
        if tag == _OTHER and perm & _WRITE:
            return "an ACL lets anyone write it"
        if not perm & mask & _WRITE:
            continue
        if tag == _USER and ident != me:
            return f"an ACL lets uid {ident} write it"
        if tag == _GROUP and (problem := private_group_problem(ident)) is not None:
            return _with(f"an ACL lets group {ident} write it", problem)
        if tag == _GROUP_OBJ and (problem := private_group_problem(st.st_gid)) is not None:
            return _with(f"an ACL lets its group (gid {st.st_gid}) write it", problem)
    return None


def own_private_group(st: os.stat_result) -> bool:
    """The file's group is the user's own private group (see `private_group_problem`):
    Debian's and Ubuntu's umask 002 scheme, under which group-writable means writable by
    the user alone."""
    return private_group_problem(st.st_gid) is None


MAX_ACCOUNTS = 100_000
"""The most account (passwd) or group entries looked at: past this, who else has a group
cannot be told, and it is not private. (`pwd.getpwall` has the C library list them all
first; this bounds what Metis goes through, and says that a list that long is not one to
rely on.)"""

_VERDICTS: dict[int, str | None] = {}
"""`private_group_problem`'s answers, per gid, for the life of the process (the lists are
read once: the hook asks about a folder and its file, the server on every read)."""


def private_group_problem(gid: int) -> str | None:
    """None when `gid` is certainly the user's own private group, else why not, as words
    for a message ("its group (gid 1000) also lists bob"; "" when it is plainly another
    group: not the user's own gid, or not named after them). Certain means: the process's
    gid, named as the user is, and among every account and group line the system lists
    (at most `MAX_ACCOUNTS` of each, the user among them), no other account has it as its
    primary group and no line of that gid lists anyone but the user."""
    if gid not in _VERDICTS:
        _VERDICTS[gid] = _group_problem(gid)
    return _VERDICTS[gid]


def _group_problem(gid: int) -> str | None:
    if not hasattr(os, "getgid") or gid != os.getgid():
        return ""
    try:
        import grp
        import pwd

        me = os.geteuid()
        name = pwd.getpwuid(me).pw_name
        if grp.getgrgid(gid).gr_name != name:
            return ""
        accounts = pwd.getpwall()
        groups = grp.getgrall()
    except (ImportError, KeyError, OSError):
        return f"who else has its group (gid {gid}) cannot be told: the lists could not be read"
    unknown = f"who else has its group (gid {gid}) cannot be told"
    if len(accounts) > MAX_ACCOUNTS or len(groups) > MAX_ACCOUNTS:
        return f"{unknown}: the system lists more than {MAX_ACCOUNTS:,} accounts or groups"
    mine = {account.pw_name for account in accounts if account.pw_uid == me}
    if name not in mine or not any(group.gr_gid == gid for group in groups):
        return f"{unknown}: the system's lists do not show this user and group in full"
    for account in accounts:
        if account.pw_gid == gid and account.pw_uid != me:
            return (
                f"its group (gid {gid}) is also the primary group of uid {account.pw_uid} "
                f"({account.pw_name})"
            )
    for group in groups:
        others = sorted(set(group.gr_mem) - mine) if group.gr_gid == gid else []
        if others:
            return f"its group (gid {gid}) also lists {', '.join(others[:3])}"
    return None


def someone_elses(st: os.stat_result) -> bool:
    return hasattr(os, "geteuid") and st.st_uid != os.geteuid()


def trouble(path: object, st: os.stat_result, fd: int | None) -> tuple[str, str] | None:
    """What is wrong with `path` (described by `st`, open as `fd`) as something of this
    user's, and its kind: None, or ("<path> belongs to another user (…)", "owner"),
    ("<path> is writable by other users (mode …)", "mode") or (… "(an ACL lets …)", "acl").
    """
    if someone_elses(st):
        return f"{path} belongs to another user (uid {st.st_uid}, you are {os.geteuid()})", "owner"
    writer = other_writer(st, fd)
    if writer is None:
        return None
    kind = "mode" if writer.startswith("mode ") else "acl"
    return f"{path} is writable by other users ({writer})", kind


def whose(path: object, st: os.stat_result, fd: int | None) -> str | None:
    """What is wrong with `path` (described by `st`) as something of this user's: None,
    or "<path> belongs to another user (…)" / "<path> is writable by other users (…)".
    Pass the descriptor `st` came from as `fd`, or its ACL is not read."""
    found = trouble(path, st, fd)
    return None if found is None else found[0]


def check_discovered(path: object, st: os.stat_result, fd: int | None, *, folder: bool) -> None:
    """Raise ForeignMemory when `path` (a memory file, or with `folder` the folder that
    holds it; `st` and its ACL read from `fd`, the descriptor opened) of a workspace found
    by looking upward is not the user's alone."""
    found = trouble(path, st, fd)
    if found is None:
        return
    problem, kind = found
    if kind == "owner":
        fix = "If you trust it, name the workspace explicitly"
    elif kind == "acl":
        fix = (
            f"Run `setfacl -b {path}` (which removes its ACL) if it is yours, or name the "
            "workspace explicitly"
        )
    else:
        fix = f"Run `chmod go-w {path}` if it is yours, or name the workspace explicitly"
    raise ForeignMemory(
        f"{problem}, so {'nothing in it was' if folder else 'it was not'} read or written as "
        "this workspace's memory: a `.metis/` found by looking upward from the agent's folder "
        f"is used only when it is the user's own and no one else may write it. {fix} "
        "(`--workspace DIR` for the hook, `metis-memory mcp DIR` for the MCP server, or the "
        "host's project variable)"
    )


def check_user_owned(path: object, st: os.stat_result, fd: int | None, *, folder: bool) -> None:
    """Raise ForeignMemory when the user memory's folder (`folder`) or file is not the
    user's alone: what it says reaches every session of every workspace."""
    found = trouble(path, st, fd)
    if found is None:
        return
    problem, kind = found
    if kind == "owner":
        fix = "Move it aside: the next write makes a folder of your own"
    elif kind == "acl":
        fix = f"Run `setfacl -b {path}` (which removes its ACL) if it is yours"
    else:
        fix = f"Run `chmod go-w {path}` if it is yours"
    raise ForeignMemory(
        f"{problem}, so {'nothing in it was' if folder else 'it was not'} read or written as "
        "your user memory: what it says reaches every session in every workspace, so it is "
        f"used only when it is yours alone. {fix}."
    )
