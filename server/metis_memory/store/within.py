"""One answer to "is this path inside that root, once symlinks are resolved?", for every
place that must not follow a cloned repository's symlink out of the workspace."""

from __future__ import annotations

import os


def is_within(path: str | os.PathLike[str], root: str | os.PathLike[str]) -> bool:
    """Whether `path`, symlinks resolved, is `root` or below it (`root` resolved too)."""
    real = os.path.realpath(path)
    top = os.path.realpath(root)
    return real == top or real.startswith(top.rstrip(os.sep) + os.sep)
