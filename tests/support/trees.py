"""A directory tree as a value: what "nothing on disk changed" is compared against."""

from __future__ import annotations

import os
from pathlib import Path


def tree(root: Path) -> dict[str, tuple[int, bytes | str]]:
    """Every path under `root` (not following symlinks) with its mode and its bytes
    (or its link target): what "nothing on disk changed" is checked against.

    The store's lock file, `.metis/.lock`, is left out: any write that gets as far as
    the lock creates it (a write refused at the hard cap decides under the lock). It
    must stay empty: it is a lock, never data.
    """
    found: dict[str, tuple[int, bytes | str]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            st = path.lstat()
            if name == ".lock" and path.parent.name == ".metis":
                assert st.st_size == 0, f"{path} holds data"
                continue
            rel = str(path.relative_to(root))
            if path.is_symlink():
                found[rel] = (st.st_mode, os.readlink(path))
            elif path.is_file():
                found[rel] = (st.st_mode, path.read_bytes())
            else:
                found[rel] = (st.st_mode, b"")
    return found
