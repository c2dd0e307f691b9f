"""Real POSIX access ACLs on test files, set as `setfacl` sets them (the kernel's
`system.posix_acl_access` attribute, so no `acl` package is needed), and writes made as
another user, so that a test sees what the kernel lets that user do.

The attribute's format is Linux's `include/uapi/linux/posix_acl_xattr.h`: a little-endian
u32 version (2), then one 8-byte entry per line of `getfacl`'s output (u16 tag, u16 perm,
u32 id). Setting it also sets the mode's group bits to the mask, as `setfacl` does.
"""

from __future__ import annotations

import errno
import os
import subprocess
from pathlib import Path

import pytest

USER_OBJ, USER, GROUP_OBJ, GROUP, MASK, OTHER = 0x01, 0x02, 0x04, 0x08, 0x10, 0x20
NO_ID = 0xFFFFFFFF
NOBODY = 65534
"""uid and gid of `nobody`/`nogroup`: someone other than the user running the tests."""

IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
CAN_SET = hasattr(os, "setxattr")


def access_acl(*entries: tuple[int, int, int]) -> bytes:
    """The attribute's bytes for `(tag, perm, id)` entries, in the order given (the kernel
    wants them sorted by tag, then id, as `setfacl` writes them)."""
    out = (2).to_bytes(4, "little")
    for tag, perm, ident in entries:
        out += tag.to_bytes(2, "little") + perm.to_bytes(2, "little") + ident.to_bytes(4, "little")
    return out


def named_user_acl(uid: int, perm: int, *, mask: int = 7, owner: int = 7, group: int = 5) -> bytes:
    """`u::<owner>, u:<uid>:<perm>, g::<group>, m::<mask>, o::r-x`."""
    return access_acl(
        (USER_OBJ, owner, NO_ID),
        (USER, perm, uid),
        (GROUP_OBJ, group, NO_ID),
        (MASK, mask, NO_ID),
        (OTHER, 5, NO_ID),
    )


def named_group_acl(gid: int, perm: int, *, mask: int = 7, group: int = 5) -> bytes:
    """`u::rwx, g::<group>, g:<gid>:<perm>, m::<mask>, o::r-x`."""
    return access_acl(
        (USER_OBJ, 7, NO_ID),
        (GROUP_OBJ, group, NO_ID),
        (GROUP, perm, gid),
        (MASK, mask, NO_ID),
        (OTHER, 5, NO_ID),
    )


def set_access_acl(path: Path, value: bytes) -> None:
    """Give `path` the ACL `value` (`setfacl --set`); skips the test, saying why, where the
    file system has no POSIX ACLs."""
    try:
        os.setxattr(path, "system.posix_acl_access", value)
    except OSError as exc:
        if exc.errno in (errno.ENOTSUP, errno.EOPNOTSUPP):
            pytest.skip(f"the file system holding {path} has no POSIX ACLs")
        raise


def can_write_as(uid: int, gid: int, path: Path) -> bool:
    """Whether user `uid` (group `gid` alone) may write `path`: append to a file, or create
    a file in a folder. Run as that user in a child that starts in the folder (the test's
    tmp_path is a 0700 folder they could not walk through), so a file's folder must let
    them look names up in it (x)."""
    folder, target = (
        (path, "planted-by-another-user") if path.is_dir() else (path.parent, path.name)
    )
    done = subprocess.run(
        ["/bin/sh", "-c", 'printf "%s\\n" "- planted" >> "$1"', "sh", target],
        cwd=folder,
        user=uid,
        group=gid,
        extra_groups=[],
        capture_output=True,
        timeout=30,
        check=False,
    )
    return done.returncode == 0
