"""Reading a file of a repository that may be hostile (a budgeted file, a Makefile, a
`.gitignore`, `.metis/budgets.toml`): regular files only, never through a symlink, never more
than `MAX_READ_BYTES`; anything else is reported, not read."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import NamedTuple

from .errors import fmt_bytes
from .files import METIS_DIR
from .within import is_within

MAX_READ_BYTES = 4 * 2**20


class Read(NamedTuple):
    text: str | None
    """None when the file was not read (then `problem` says why)."""
    size: int
    problem: str | None = None


def read_bounded(path: Path, limit: int = MAX_READ_BYTES) -> Read:
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if os.path.islink(path):
            return Read(None, 0, "it is a symlink: not followed")
        return Read(None, 0, f"cannot be read ({exc.strerror or exc})")
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return Read(None, 0, "it is not a regular file")
        if st.st_size > limit:
            return Read(None, st.st_size, f"it is {fmt_bytes(st.st_size)}, too large to check")
        data = b""
        while len(data) <= limit:
            chunk = os.read(fd, limit + 1 - len(data))
            if not chunk:
                break
            data += chunk
    finally:
        os.close(fd)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        # Measured as decoded text, every bad byte would count as three: say so instead.
        return Read(
            None, len(data), f"it is not valid UTF-8 (first bad byte at offset {exc.start})"
        )
    return Read(text.removeprefix("\ufeff"), len(data))


def read_metis_file(workspace: Path, name: str, limit: int) -> Read | None:
    """A file of the workspace's `.metis/` other than the memory files (`budgets.toml`), read
    as any file of the repository is, and not through a `.metis/` that leads out of the
    workspace: None when there is none. (Checked before the open, not on a held directory
    as the memory files are: this file is only ever read, never written.)"""
    path = workspace / METIS_DIR / name
    if not os.path.lexists(path):
        return None
    if not is_within(path.parent, workspace):
        return Read(None, 0, f"{METIS_DIR}/ is a symlink out of the workspace: not followed")
    return read_bounded(path, limit)
