"""Issue 39, item 4, third round: a group-writable `.metis/` of the user's own private
group is trusted (Debian's and Ubuntu's umask 002), and the group counted as private when
`grp.getgrgid(gid).gr_mem` was empty and the name matched. That list leaves out the
accounts whose PRIMARY group it is (passwd's gid field), and `getgrgid` returns only the
first /etc/group line for a gid: another user with the user's gid as their primary group
(`/tmp/metis/attack2/b02_primary_group.sh`), or listed on a second line of the same gid
(`b02b_duplicate_gid.sh`), wrote into a 0775 `.metis/` that Metis trusted, and the hook
sent the planted line as the user's own notes (`b02c_hook_as_user.sh`).

Each case runs in a private mount namespace (`unshare --mount`) whose /etc/passwd and
/etc/group are files the test wrote, bind-mounted over the system's (which are never
changed). In it the kernel is the judge, as in `test_owners_acl.py`: another account
(uid 1001, with the groups those files give it) really tries to write, and Metis's
decision (made as root, whose group is gid 0) must agree with what the kernel let it do."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
TOOLS = all(shutil.which(tool) for tool in ("unshare", "mount", "setpriv"))

pytestmark = [
    pytest.mark.skipif(not IS_ROOT, reason="needs root: a mount namespace, and writes as uid 1001"),
    pytest.mark.skipif(not TOOLS, reason="needs util-linux's unshare, mount and setpriv"),
]

ROOT = "root:x:0:0:root:/root:/bin/sh\n"
BOB = "bob:x:1001:{gid}::/nonexistent:/bin/sh\n"
GROUPS = "root:x:0:\nbob:x:1001:\n"

# What runs inside the namespace: bob (uid 1001, his passwd gid, the /etc/group lines that
# list him) appends to the file and creates a file in the folder; then Metis decides, on
# the descriptors it opened, as root.
PROBE = r"""
import json, os, subprocess, sys
from metis_memory.store.owners import whose
folder, gid = sys.argv[1], sys.argv[2]
target = os.path.join(folder, "MEMORY.md")
wrote = subprocess.run(
    ["setpriv", "--reuid", "1001", "--regid", gid, "--init-groups", "/bin/sh", "-c",
     'printf "%s\\n" "- planted by bob" >> "$1" && : > "$2"', "sh", target,
     os.path.join(folder, "planted")],
    capture_output=True, check=False,
).returncode == 0
said = {}
for path in (folder, target):
    fd = os.open(path, os.O_RDONLY)
    try:
        said[path] = whose(path, os.fstat(fd), fd)
    finally:
        os.close(fd)
print(json.dumps({"wrote": wrote, "folder": said[folder], "file": said[target]}))
"""


@pytest.fixture
def box() -> Iterator[Path]:
    """A folder in the system temp dir that uid 1001 can reach (pytest's tmp_path is under
    a root-only folder), holding a 0775 `.metis/` and a 0664 MEMORY.md of root's group."""
    base = Path(tempfile.mkdtemp(prefix="metis-groups-"))
    try:
        for ancestor in base.parents:
            if not os.stat(ancestor).st_mode & 0o001:
                pytest.skip(f"{ancestor} is not traversable by other users")
        base.chmod(0o711)
        metis = base / ".metis"
        metis.mkdir()
        (metis / "MEMORY.md").write_text("- build with make\n")
        os.chown(metis, 0, 0)
        os.chown(metis / "MEMORY.md", 0, 0)
        metis.chmod(0o775)
        (metis / "MEMORY.md").chmod(0o664)
        yield base
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _judged(box: Path, passwd: str, group: str, bob_gid: int) -> dict[str, object]:
    """Bob's write and Metis's decision, with `passwd` and `group` as the system's lists."""
    (box / "passwd").write_text(passwd)
    (box / "group").write_text(group)
    script = 'mount --bind "$1" /etc/passwd && mount --bind "$2" /etc/group && shift 2 && exec "$@"'
    server = str(Path(__file__).resolve().parents[2] / "server")
    namespace = ["unshare", "--mount", "--propagation", "private", "/bin/sh", "-c", script, "sh"]
    probe = [sys.executable, "-c", PROBE, str(box / ".metis"), str(bob_gid)]
    done = subprocess.run(
        [*namespace, str(box / "passwd"), str(box / "group"), *probe],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "PYTHONPATH": server},
    )
    assert done.returncode == 0, done.stderr
    found: dict[str, object] = json.loads(done.stdout)
    return found


def test_the_users_own_private_group_is_still_trusted(box: Path) -> None:
    """The common case that must keep working: each account its own group, no one else in
    root's. Bob cannot write, and the 0775/0664 memory is trusted."""
    seen = _judged(box, ROOT + BOB.format(gid=1001), GROUPS, 1001)
    assert seen == {"wrote": False, "folder": None, "file": None}


def test_a_group_that_lists_only_the_user_is_still_private(box: Path) -> None:
    seen = _judged(box, ROOT + BOB.format(gid=1001), "root:x:0:root\nbob:x:1001:\n", 1001)
    assert seen == {"wrote": False, "folder": None, "file": None}


def test_another_account_whose_primary_group_it_is_makes_it_not_private(box: Path) -> None:
    """b02: bob's passwd line gives him gid 0 as his primary group. Before: bob wrote, and
    both the folder and the file were trusted (None)."""
    seen = _judged(box, ROOT + BOB.format(gid=0), GROUPS, 0)
    assert seen["wrote"] is True
    for kind in ("folder", "file"):
        said = str(seen[kind])
        assert "is writable by other users (mode 0" in said, said
        assert "its group (gid 0) is also the primary group of uid 1001 (bob)" in said, said


def test_a_second_group_line_of_the_same_gid_listing_another_user_is_not_private(
    box: Path,
) -> None:
    """b02b: `devs:x:0:bob` after root's own line. `getgrgid(0)` returns the first line
    (named root, no members). Before: bob wrote, and both were trusted."""
    seen = _judged(box, ROOT + BOB.format(gid=1001), GROUPS + "devs:x:0:bob\n", 1001)
    assert seen["wrote"] is True
    for kind in ("folder", "file"):
        said = str(seen[kind])
        assert "its group (gid 0) also lists bob" in said, said


def test_lists_too_long_to_read_whole_are_not_taken_as_private(box: Path) -> None:
    """Past 100,000 accounts Metis stops reading and cannot tell who else has the group,
    so it does not trust it (bob cannot write here: the refusal errs towards safety)."""
    many = "".join(
        f"u{i}:x:{10_000 + i}:{10_000 + i}::/nonexistent:/bin/sh\n" for i in range(100_001)
    )
    seen = _judged(box, ROOT + many, GROUPS, 1001)
    assert seen["wrote"] is False
    assert "more than 100,000" in str(seen["folder"]), seen
