"""Which budgets cover a file, and the Codex chain above it.

Matching is on path strings only. The chain looks up a fixed list of names in each
directory from the repository root down (an `lstat` each, never a directory listing),
so nothing here walks a tree, reads a file, or follows a symlink out of the workspace.
"""

from __future__ import annotations

import functools
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ..analysis.globs import glob_matches
from ..store.reading import read_bounded
from ..store.within import is_within
from .model import Budget

CODEX_NAMES = ("AGENTS.override.md", "AGENTS.md")
"""In each directory Codex reads the first of these that exists (an empty override still
hides AGENTS.md); a file of only whitespace adds nothing and spends none of the budget.
Source: openai/codex codex-rs/core/src/project_doc.rs (`discover_project_doc_paths`)."""

CLAUDE_PROJECT = "{claude-project}"
"""Stands in a budget's glob for Claude Code's folder name of the workspace's project."""
MAX_CLAUDE_PROJECT = 200


def claude_project(workspace: Path) -> str:
    """Claude Code's folder under `~/.claude/projects/` for `workspace`, as a glob: the git
    root (or the folder) with every character but ASCII letters and digits made `-`; a
    name over 200 characters is cut there and given a hash, matched here by its prefix.
    Source: Claude Code's `sanitizePath` (v2.1.88), auto memory in code.claude.com/docs: "all
    worktrees and subdirectories within the same git repository share one auto memory
    directory", so a linked worktree is named after its main repository."""
    root = canonical_repository_root(workspace) or workspace
    name = js_sanitised(str(root))
    return name if len(name) <= MAX_CLAUDE_PROJECT else name[:MAX_CLAUDE_PROJECT] + "-*"


NO_HOME = Path(os.devnull)
"""The home of an account that has none (HOME unset, no passwd entry: a container's bare
uid): a path under which nothing exists, so `~/` budgets name no file."""


def home_folder() -> Path:
    """`Path.home()`, or NO_HOME when there is none to be found (it raises RuntimeError, or
    KeyError from the account database)."""
    try:
        return Path.home()
    except (RuntimeError, KeyError):
        return NO_HOME


def js_sanitised(path: str) -> str:
    """`path.replace(/[^a-zA-Z0-9]/g, "-")` as JavaScript runs it, on UTF-16 code units: a
    character outside the Basic Multilingual Plane (an emoji) is two units, so two `-` (Claude
    Code's and Qwen Code's folder names for a workspace)."""
    return "".join(
        ch if ch.isascii() and ch.isalnum() else "--" if ord(ch) > 0xFFFF else "-" for ch in path
    )


@functools.lru_cache(maxsize=8192)
def matches(glob: str, path: Path, workspace: Path | None, home: Path) -> bool:
    """Whether `path` is one of `glob`'s files (relative to `workspace`, or `~/...`)."""
    glob = glob.replace(CLAUDE_PROJECT, "*")
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
    return glob_matches(pattern, str(relative))


def budgets_for(
    path: Path, workspace: Path | None, budgets: Iterable[Budget], home: Path | None = None
) -> list[Budget]:
    """The budgets that cover `path`, in catalogue order."""
    home = home if home is not None else home_folder()
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


MAX_GIT_POINTER_BYTES = 4096


def canonical_repository_root(directory: Path) -> Path | None:
    """`repository_root`, except that a linked worktree (`git worktree add`) gives its main
    repository's root, as Claude Code's `findCanonicalGitRoot` does. Only a well-formed link
    is followed: the worktree's `.git` file names `<main>/.git/worktrees/<name>`, whose
    `commondir` leads back to `<main>/.git` and whose `gitdir` names this `.git` file (a
    cloned repository's `.git` file is input like any other: read bounded, never trusted)."""
    root = repository_root(directory)
    if root is None:
        return None
    dot_git = root / ".git"
    if not _regular_file(dot_git):
        return root  # a main repository (or a symlink: not followed)
    gitdir = _pointer(dot_git, "gitdir: ", root)
    if gitdir is None:
        return root
    common_text = _read_small(gitdir / "commondir")
    back = _pointer(gitdir / "gitdir", "", gitdir)
    if common_text is None or back is None:
        return root  # a submodule, or not a worktree this layout knows
    common = Path(os.path.normpath(gitdir / common_text.strip()))
    real = os.path.realpath
    if (
        common.name != ".git"
        or real(gitdir.parent) != real(common / "worktrees")
        or real(back) != real(dot_git)
    ):
        return root
    return common.parent


def _regular_file(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _read_small(path: Path) -> str | None:
    read = read_bounded(path, MAX_GIT_POINTER_BYTES)
    return read.text


def _pointer(path: Path, prefix: str, base: Path) -> Path | None:
    """The path a git pointer file names (relative ones from `base`), if it is one."""
    text = _read_small(path)
    if text is None:
        return None
    line = text.strip()
    if not line.startswith(prefix) or "\n" in line or "\0" in line:
        return None
    target = Path(line[len(prefix) :].strip())
    return target if target.is_absolute() else base / target


@dataclass(frozen=True)
class ChainLink:
    path: Path
    size: int


def codex_chain(directory: Path, root: Path) -> list[ChainLink]:
    """The project docs Codex started in `directory` reads, root first, with the bytes each
    spends (0 for a file of only whitespace)."""
    try:
        relative = directory.relative_to(root)
    except ValueError:
        return []
    chain: list[ChainLink] = []
    for depth in range(len(relative.parts) + 1):
        current = root.joinpath(*relative.parts[:depth])
        chosen = _codex_file(current, root)
        if chosen is not None:
            chain.append(ChainLink(current / chosen[0], chosen[1]))
    return chain


def _codex_stat(path: Path, root: Path) -> os.stat_result | None:
    """A regular file Codex reads: itself, or a symlink to one inside the repository (an
    `AGENTS.md -> CLAUDE.md` is common); None otherwise."""
    try:
        st = os.lstat(path)
        if stat.S_ISLNK(st.st_mode):
            if not is_within(path, root):
                return None
            st = os.stat(path)
    except OSError:
        return None
    return st if stat.S_ISREG(st.st_mode) else None


def _codex_file(directory: Path, root: Path) -> tuple[str, int] | None:
    for name in CODEX_NAMES:
        st = _codex_stat(directory / name, root)
        if st is None:
            continue
        size = st.st_size
        # Keyed by the file itself (device, inode), not its realpath: a keystroke asks the
        # chain again, and a realpath costs an lstat per level of the path.
        file_key = (st.st_dev, st.st_ino, st.st_mtime_ns, size)
        if size <= BLANK_CHECK_BYTES and not _has_text(directory / name, file_key):
            size = 0
        return name, size
    return None


BLANK_CHECK_BYTES = 64 * 1024
"""Files up to this size are read to tell a file of only whitespace (which Codex skips)."""


@functools.lru_cache(maxsize=1024)
def _has_text(path: Path, _file: tuple[int, int, int, int]) -> bool:
    """Read again only when the file changed (its inode, mtime and size are the key)."""
    read = read_bounded(path, BLANK_CHECK_BYTES)
    return read.text is None or bool(read.text.strip())


def codex_position(path: Path, root: Path) -> tuple[int, str | None]:
    """For `path` (an open buffer, or a file on disk) read by Codex started in its
    directory: the bytes the directories above spend first, and the name of the file Codex
    reads in that directory instead of `path`, if it reads another one."""
    above = [link for link in codex_chain(path.parent, root) if link.path.parent != path.parent]
    spent = sum(link.size for link in above)
    if path.name in CODEX_NAMES:
        for name in CODEX_NAMES[: CODEX_NAMES.index(path.name)]:
            if _codex_stat(path.parent / name, root) is not None:
                return spent, name
    return spent, None


def shown_path(path: Path, workspace: Path, home: Path) -> str:
    """A path as people read it in a report: relative to the workspace, or `~/...`."""
    for base, prefix in ((workspace, ""), (home, "~/")):
        try:
            return prefix + path.relative_to(base).as_posix()
        except ValueError:
            continue
    return str(path)
