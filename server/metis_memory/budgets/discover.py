"""Finding a workspace's budgeted files from the budgets' globs, for `check` (the language
server never does this: it gets its files from the editor). A glob without `**` is looked
up directly; one with `**` walks at most `MAX_DIRECTORIES` directories, never through a
symlink, skipping dependency and tool folders where agents keep no instructions."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from ..analysis.globs import GlobTooComplex, compile_glob
from ..store.within import is_within
from .model import Budget
from .paths import CLAUDE_PROJECT, claude_project

MAX_DIRECTORIES = 20_000
SKIPPED_DIRS = frozenset(
    {
        ".git",
        "node_modules",
        ".venv",
        "venv",
        "__pycache__",
        ".mypy_cache",
        ".cache",
        "dist",
        "build",
        "target",
        ".tox",
        ".next",
    }
)


def budgeted_files(workspace: Path, budgets: Iterable[Budget], home: Path) -> list[Path]:
    """Every existing file a budget's glob names, sorted, without duplicates."""
    return files_matching(workspace, [glob for b in budgets for glob in b.files], home)


def files_matching(workspace: Path, globs: Iterable[str], home: Path) -> list[Path]:
    """Every existing file the globs name (workspace-relative or `~/`), sorted, once each."""
    found: set[Path] = set()
    walked: list[str] | None = None
    for glob in globs:
        glob = glob.replace(CLAUDE_PROJECT, claude_project(workspace))
        base, pattern = (home, glob[2:]) if glob.startswith("~/") else (workspace, glob)
        if "*" not in pattern and "?" not in pattern:
            if os.path.lexists(base / pattern) and _inside(base / pattern, base):
                found.add(base / pattern)
            continue
        if base is home:
            found.update(_expand_shallow(home, pattern))
            continue
        try:
            matcher = compile_glob(pattern)
        except GlobTooComplex:
            continue  # `budgets.toml`'s own problem says so; it names no file
        if walked is None:
            walked = list(walk_files(workspace))
        found.update(workspace / rel for rel in walked if matcher.match(rel))
    return sorted(found)


def _inside(path: Path, base: Path) -> bool:
    """Whether `path`'s directory, symlinks resolved, is still under `base` (the file itself
    is opened without following a symlink)."""
    return is_within(path.parent, base)


def walk_files(root: Path) -> Iterator[str]:
    """Relative paths (posix) of the files under `root`, bounded and without symlinks."""
    yield from scan(root, MAX_DIRECTORIES)[0]


def scan(
    root: Path, max_dirs: int, skip: frozenset[str] | tuple[str, ...] = SKIPPED_DIRS
) -> tuple[list[str], bool]:
    """The files under `root` (posix, relative) within `max_dirs` directories, never
    through a symlink; and whether the scan saw every directory."""
    files: list[str] = []
    pending = [""]
    seen = 0
    while pending and seen < max_dirs:
        rel = pending.pop()
        seen += 1
        try:
            entries = list(os.scandir(root / rel if rel else root))
        except OSError:
            continue
        for entry in entries:
            child = f"{rel}/{entry.name}" if rel else entry.name
            if entry.is_dir(follow_symlinks=False):
                if entry.name not in skip and entry.name != ".git":
                    pending.append(child)
            elif entry.is_file(follow_symlinks=False) or entry.is_symlink():
                files.append(child)
    return files, not pending


def _expand_shallow(home: Path, pattern: str) -> Iterator[Path]:
    """A home-relative glob whose `*` stand for single directory names, expanded one level
    at a time (Claude Code's `~/.claude/projects/*/memory/MEMORY.md`)."""
    bases = [home]
    for part in pattern.split("/"):
        next_bases: list[Path] = []
        for base in bases:
            if "*" in part or "?" in part:
                try:
                    matcher = compile_glob(part)
                    next_bases += [base / e.name for e in os.scandir(base) if matcher.match(e.name)]
                except (OSError, GlobTooComplex):
                    continue
            elif os.path.lexists(base / part):
                next_bases.append(base / part)
        bases = next_bases
    yield from bases
