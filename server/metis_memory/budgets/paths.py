"""Which budgets cover a file, and the Codex chain above it.

Matching is on path strings only. The chain looks up a fixed list of names in each
directory from the repository root down (an `lstat` each, never a directory listing),
so nothing here walks a tree, reads a file, or follows a symlink out of the workspace.
"""

from __future__ import annotations

import functools
import os
import re
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from .model import Budget

CODEX_NAMES = ("AGENTS.override.md", "AGENTS.md")
"""In each directory Codex reads the first of these that exists (and is not empty).
Source: openai/codex codex-rs/core/src/project_doc.rs (`discover_project_doc_paths`)."""


@functools.lru_cache(maxsize=512)
def glob_regex(glob: str) -> re.Pattern[str]:
    """`**/` any directories (or none), `*` and `?` within one path segment."""
    out = []
    i = 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out.append("(?:[^/]+/)*")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif glob[i] == "*":
            out.append("[^/]*")
            i += 1
        elif glob[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(glob[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")


def matches(glob: str, path: Path, workspace: Path | None, home: Path) -> bool:
    """Whether `path` is one of `glob`'s files (relative to `workspace`, or `~/...`)."""
    if glob.startswith("~/"):
        base, pattern = home, glob[2:]
    elif workspace is None:
        return False
    else:
        base, pattern = workspace, glob
    try:
        relative = PurePosixPath(path.relative_to(base).as_posix())
    except ValueError:
        return False
    return glob_regex(pattern).match(str(relative)) is not None


def budgets_for(
    path: Path, workspace: Path | None, budgets: Iterable[Budget], home: Path | None = None
) -> list[Budget]:
    """The budgets that cover `path`, in catalogue order."""
    home = home if home is not None else Path.home()
    return [b for b in budgets if any(matches(g, path, workspace, home) for g in b.files)]


def repository_root(directory: Path) -> Path | None:
    """The nearest directory at or above `directory` holding `.git` (a directory, or the
    file a worktree or submodule has), as Codex finds its project root; None if none."""
    current = directory
    while True:
        if os.path.lexists(current / ".git"):
            return current
        if current.parent == current:
            return None
        current = current.parent


@dataclass(frozen=True)
class ChainLink:
    path: Path
    size: int


def codex_chain(directory: Path, root: Path) -> list[ChainLink]:
    """The project docs Codex started in `directory` reads, root first: per directory the
    first regular, non-empty file of `CODEX_NAMES`. Sizes are from `lstat` (bytes)."""
    try:
        relative = directory.relative_to(root)
    except ValueError:
        return []
    chain: list[ChainLink] = []
    for depth in range(len(relative.parts) + 1):
        current = root.joinpath(*relative.parts[:depth])
        for name in CODEX_NAMES:
            try:
                st = os.lstat(current / name)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode) and st.st_size > 0:
                chain.append(ChainLink(current / name, st.st_size))
                break
    return chain


def codex_position(path: Path, root: Path) -> tuple[int, str | None]:
    """For `path` (an open buffer, or a file on disk) read by Codex started in its
    directory: the bytes the directories above spend first, and the name of the file Codex
    reads in that directory instead of `path`, if it reads another one."""
    above = [link for link in codex_chain(path.parent, root) if link.path.parent != path.parent]
    spent = sum(link.size for link in above)
    if path.name in CODEX_NAMES:
        for name in CODEX_NAMES[: CODEX_NAMES.index(path.name)]:
            try:
                st = os.lstat(path.parent / name)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode) and st.st_size > 0:
                return spent, name
    return spent, None
