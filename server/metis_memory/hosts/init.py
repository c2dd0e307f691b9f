"""`metis-memory init`: wire agent hosts to the memory by writing their own configuration.

All or nothing: every file is read, merged and encoded before anything is written, so a
file that cannot be merged (invalid JSON, a foreign file in our place, a value that cannot
be written back faithfully) stops the whole run with nothing changed. Writes are atomic,
go only to the hosts' documented paths under the workspace, and never through a symlink
that leads out of it.
"""

from __future__ import annotations

import contextlib
import difflib
import errno
import os
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ..atomic import atomic_write
from ..confined import Dir, Located, resolve_beneath
from ..errors import MemoryStoreError, StorageError
from .configs import SETUPS, Edit
from .jsonfiles import ConfigRefused

MAX_CONFIG_BYTES = 1 * 2**20
"""Hosts' configuration files are small; a bigger one is not something to rewrite."""


@dataclass(frozen=True)
class FileChange:
    path: str
    hosts: tuple[str, ...]
    what: tuple[str, ...]
    before: str | None
    after: str
    mode: int
    data: bytes
    """`after` as written, encoded while planning so that no write can fail on it."""

    @property
    def changed(self) -> bool:
        return self.before != self.after

    @property
    def verb(self) -> str:
        if self.before is None:
            return "created"
        return "updated" if self.changed else "unchanged"

    def diff(self) -> str:
        before = [] if self.before is None else self.before.splitlines(keepends=True)
        after = self.after.splitlines(keepends=True)
        lines = difflib.unified_diff(
            before,
            after,
            "/dev/null" if self.before is None else f"a/{self.path}",
            f"b/{self.path}",
        )
        return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


@dataclass(frozen=True)
class InitPlan:
    workspace: Path
    hosts: tuple[str, ...]
    files: tuple[FileChange, ...]
    git_config: tuple[tuple[str, str], ...] = ()
    """The merge driver's settings for the repository's git config, when asked for."""

    def report(self, *, dry_run: bool, git_problem: str | None = None) -> str:
        verb = {"created": "would create", "updated": "would update"} if dry_run else {}
        lines = []
        for f in self.files:
            shown = verb.get(f.verb, f.verb)
            lines.append(f"{f.path}: {shown} ({'; '.join(f.what)})")
        for key, value in self.git_config:
            done = "would set" if dry_run else "not set" if git_problem else "set"
            lines.append(f"git config {key}: {done} ({value})")
        if git_problem and not dry_run:
            lines.append(f"  {git_problem}")
        todo = [f"- {SETUPS[h].title}: {SETUPS[h].still_to_do}" for h in self.hosts]
        if self.git_config:
            todo.append(
                "- Git: commit .gitattributes; git config is not cloned, so each clone runs "
                "`metis-memory init` once (or sets the two settings above by hand)."
            )
        if todo and not dry_run:
            lines += ["", "What is left to do:", *todo]
        return "\n".join(lines)


def plan_init(
    workspace: Path,
    hosts: Sequence[str],
    command: str,
    *,
    skip: frozenset[str] = frozenset(),
    merge_driver: bool = False,
) -> InitPlan:
    """Read every file the chosen hosts need and compute its new content.

    Raises ConfigRefused (a file that cannot be merged) or MemoryStoreError (a path that
    leaves the workspace, an unreadable file); nothing is written either way.
    """
    unknown = [h for h in hosts if h not in SETUPS]
    if unknown:
        raise ConfigRefused(f"unknown host {unknown[0]!r}; known: {', '.join(SETUPS)}")
    chosen = tuple(dict.fromkeys(hosts))
    by_path: dict[str, list[Edit]] = {}
    wanted = [edit for host in chosen for edit in SETUPS[host].edits(command)]
    if merge_driver:
        from ..git_merge import attributes_edit

        wanted.append(attributes_edit())
    for edit in wanted:
        if edit.path not in skip:
            by_path.setdefault(edit.path, []).append(edit)
    changes = []
    with Dir.open_root(workspace) as root:
        for path, edits in by_path.items():
            before = _read_config(root, workspace, path)
            after = _merge(path, before, edits)
            changes.append(
                FileChange(
                    path,
                    tuple(dict.fromkeys(e.host for e in edits)),
                    tuple(dict.fromkeys(e.what for e in edits)),
                    before,
                    after,
                    edits[0].mode,
                    _encoded(path, after),
                )
            )
    git_config: tuple[tuple[str, str], ...] = ()
    if merge_driver:
        from ..git_merge import git_settings

        git_config = git_settings(command)
    return InitPlan(workspace, chosen, tuple(changes), git_config)


def _merge(path: str, before: str | None, edits: list[Edit]) -> str:
    """`before` with every edit for `path` applied; whatever goes wrong is a refusal that
    names the file, raised while nothing has been written yet."""
    after = before
    try:
        for edit in edits:
            after = edit.apply(after)
    except (ConfigRefused, MemoryStoreError):
        raise
    except Exception as exc:  # a bug or a limit hit: still a message, still nothing written
        raise ConfigRefused(
            f"{path}: init could not merge its entries ({type(exc).__name__}: {exc}); "
            "nothing was written anywhere. Add its entries by hand (or move the file aside "
            "and run init again), and please report this."
        ) from exc
    assert after is not None
    return after


def _encoded(path: str, text: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        bad = text[exc.start : exc.end]
        raise ConfigRefused(
            f"{path}: its new content would hold {bad!r} at character {exc.start:,}, which "
            f"cannot be written as UTF-8 ({exc.reason}); nothing was written. If the command "
            "given to init (--command) holds bytes that are not UTF-8, give it in UTF-8."
        ) from exc


def apply_init(plan: InitPlan) -> str | None:
    """Write each changed file atomically; a file changed since it was planned is refused.
    Then set the plan's git config; returns why that could not be done, if it could not."""
    pending = [change for change in plan.files if change.changed]
    with Dir.open_root(plan.workspace) as root:
        for change in pending:  # every file still as planned, before the first write
            if _read_config(root, plan.workspace, change.path) != change.before:
                raise ConfigRefused(
                    f"{change.path} changed while init ran; nothing was written. Run init again."
                )
        for change in pending:
            shown = plan.workspace / change.path
            with _Place(root, plan.workspace, change.path, create=True) as found:
                now = _read_located(found, shown)
                if now != change.before:
                    raise ConfigRefused(
                        f"{change.path} changed while init ran; run init again "
                        "(files before it in this list were written)"
                    )
                atomic_write(
                    found.directory,
                    found.name,
                    change.data,
                    found.st,
                    new_mode=change.mode,
                )
    if not plan.git_config:
        return None
    from ..git_merge import apply_git_settings

    return apply_git_settings(plan.workspace, plan.git_config)


def _read_config(root: Dir, workspace: Path, path: str) -> str | None:
    try:
        with _Place(root, workspace, path, create=False) as found:
            return None if found is None else _read_located(found, workspace / path)
    except FileNotFoundError:
        return None


class _Place:
    """`path`'s directory held open (created with `create`), and its name there."""

    def __init__(self, root: Dir, workspace: Path, path: str, *, create: bool) -> None:
        self.root, self.workspace, self.rel, self.create = (
            root,
            workspace,
            PurePosixPath(path),
            create,
        )
        self.found: Located | None = None

    def __enter__(self) -> Located:
        shown = self.workspace / self.rel
        try:
            if self.create:
                self._make_dirs()
            self.found = resolve_beneath(self.root, self.rel, shown=shown)
        except NotADirectoryError as exc:
            raise ConfigRefused(
                f"{self.rel}: {exc.filename or 'a folder on the way'} is a file, not a folder; "
                "nothing was written for it"
            ) from exc
        except FileNotFoundError:
            raise
        except OSError as exc:
            raise StorageError("open", shown, exc) from exc
        return self.found

    def __exit__(self, *_: object) -> None:
        if self.found is not None:
            self.found.directory.close()

    def _make_dirs(self) -> None:
        parts = self.rel.parent.parts
        for depth in range(1, len(parts) + 1):
            prefix = PurePosixPath(*parts[:depth])
            found = resolve_beneath(self.root, prefix, shown=self.workspace / prefix)
            with found.directory:
                if found.st is None:
                    with contextlib.suppress(FileExistsError):  # made by someone else meanwhile
                        found.directory.mkdir(found.name, 0o777)  # the umask decides
                elif not stat.S_ISDIR(found.st.st_mode):
                    raise NotADirectoryError(errno.ENOTDIR, "not a folder", str(prefix))


def _read_located(found: Located, shown: Path) -> str | None:
    if found.st is None:
        return None
    if not stat.S_ISREG(found.st.st_mode):
        raise ConfigRefused(f"{shown} is not a regular file; nothing was written")
    if found.st.st_size > MAX_CONFIG_BYTES:
        raise ConfigRefused(
            f"{shown} is {found.st.st_size:,} bytes, more than a host's configuration file "
            f"should be ({MAX_CONFIG_BYTES:,}); nothing was written"
        )
    try:
        fd = found.directory.open(found.name, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as f:
            data = f.read(MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        raise StorageError("read", shown, exc) from exc
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigRefused(
            f"{shown} is not UTF-8 (first bad byte at offset {exc.start:,}); nothing was written"
        ) from exc


def diffs(plan: InitPlan) -> Iterable[str]:
    yield from (f.diff() for f in plan.files if f.changed)
    for key, value in plan.git_config:
        yield f"git config --local {key} '{value}'\n"


__all__ = ["ConfigRefused", "InitPlan", "MemoryStoreError", "apply_init", "diffs", "plan_init"]
