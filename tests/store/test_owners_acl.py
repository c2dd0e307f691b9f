"""Issue 39, item 4 again: `owners.whose` read only the mode bits, and with a POSIX ACL the
mode's group bits are the ACL's mask, not who may write. A `.metis/` of the user's own,
0755, with the entry `u:65534:rwx` showed as 0775 under the user's private group, and was
trusted while uid 65534 wrote in it.

Here the kernel is the judge: for each mode and ACL, another user (uid and gid 65534)
really tries to write the file (or to create a file in the folder), and Metis's decision
must agree with what the kernel let them do."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from metis_memory.store.owners import whose
from support.acls import (
    CAN_SET,
    GROUP_OBJ,
    IS_ROOT,
    MASK,
    NO_ID,
    NOBODY,
    OTHER,
    USER,
    USER_OBJ,
    access_acl,
    can_write_as,
    named_group_acl,
    named_user_acl,
    set_access_acl,
)

pytestmark = [
    pytest.mark.skipif(not IS_ROOT, reason="needs root to write as another user and give files"),
    pytest.mark.skipif(not CAN_SET, reason="POSIX ACLs through xattrs are Linux's"),
]


def _own_group_is_private() -> bool:
    import grp
    import pwd

    own = grp.getgrgid(os.getgid())
    return not own.gr_mem and own.gr_name == pwd.getpwuid(os.geteuid()).pw_name


# (mode, the file's group, ACL or None): a group of None is the user's own.
CASES: dict[str, tuple[int, int | None, bytes | None]] = {
    "0644": (0o644, None, None),
    "0666 (anyone)": (0o666, None, None),
    "0664, a group of others": (0o664, NOBODY, None),
    "u:65534:rwx (the attack)": (0o644, None, named_user_acl(NOBODY, 7)),
    "u:65534:rwx, mask r-x": (0o644, None, named_user_acl(NOBODY, 7, mask=5)),
    "u:65534:r-x": (0o644, None, named_user_acl(NOBODY, 5)),
    "u:<self>:rwx": (0o644, None, named_user_acl(os.geteuid(), 7)),
    "g:65534:rwx": (0o644, None, named_group_acl(NOBODY, 7)),
    "g:65534:rwx, mask r-x": (0o644, None, named_group_acl(NOBODY, 7, mask=5)),
    "g::rwx of others": (0o644, NOBODY, named_user_acl(NOBODY - 1, 5, group=7)),
    "g::r-x of others, mask rwx": (0o644, NOBODY, named_user_acl(NOBODY - 1, 5, group=5)),
    "o::rwx": (
        0o644,
        None,
        access_acl(
            (USER_OBJ, 7, NO_ID),
            (USER, 5, NOBODY - 1),
            (GROUP_OBJ, 5, NO_ID),
            (MASK, 5, NO_ID),
            (OTHER, 7, NO_ID),
        ),
    ),
}


def _make(tmp_path: Path, kind: str, case: str) -> Path:
    mode, group, acl = CASES[case]
    box = tmp_path / "box"  # (tmp_path is 0700: the other user could not reach a file in it)
    box.mkdir(mode=0o711)
    path = box / "metis"
    if kind == "folder":
        path.mkdir()
        os.chmod(path, mode | 0o111)
    else:
        path.write_text("- CI runs on Fridays only\n")
        os.chmod(path, mode)
    if group is not None:
        os.chown(path, -1, group)
    if acl is not None:
        set_access_acl(path, acl)
    return path


def _decision(path: Path) -> str | None:
    """What the store decides, on the descriptor it opened, as `MemoryStore` does."""
    fd = os.open(path, os.O_RDONLY | (os.O_DIRECTORY if path.is_dir() else 0))
    try:
        return whose(path, os.fstat(fd), fd)
    finally:
        os.close(fd)


@pytest.mark.parametrize("kind", ["file", "folder"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_trusted_exactly_when_the_kernel_lets_no_one_else_write(
    kind: str, case: str, tmp_path: Path
) -> None:
    if not _own_group_is_private():
        pytest.skip("this user's primary group is not a private group of theirs")
    path = _make(tmp_path, kind, case)
    problem = _decision(path)
    they_wrote = can_write_as(NOBODY, NOBODY, path)
    assert (problem is not None) == they_wrote, (case, kind, oct(os.stat(path).st_mode), problem)


@pytest.mark.parametrize("kind", ["file", "folder"])
def test_the_refusal_names_who_the_acl_lets_write(kind: str, tmp_path: Path) -> None:
    path = _make(tmp_path, kind, "u:65534:rwx (the attack)")
    assert _decision(path) == f"{path} is writable by other users (an ACL lets uid 65534 write it)"
    group = tmp_path / "group"
    group.mkdir()
    set_access_acl(group, named_group_acl(NOBODY, 7))
    assert "an ACL lets group 65534 write it" in str(_decision(group))
