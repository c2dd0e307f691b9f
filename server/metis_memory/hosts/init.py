"""`metis-memory init`: wire agent hosts to the memory by writing their own configuration.

All or nothing: every file is read, merged and encoded before anything is written, so a
file that cannot be merged (invalid JSON, a foreign file in our place, a value that cannot
be written back faithfully) stops the whole run with nothing changed. Writes are atomic,
go only to the hosts' documented paths under the workspace, and never through a symlink
that leads out of it.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..store.config_files import ConfigFiles
from ..store.errors import ConfigRefused, MemoryStoreError
from .config_edits import Edit
from .configs import SETUPS


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
        from .merge_driver import attributes_edit

        wanted.append(attributes_edit())
    changes = []
    with ConfigFiles(workspace) as files:
        for edit in (_placed(files, edit) for edit in wanted):
            if edit.path not in skip:
                by_path.setdefault(edit.path, []).append(edit)
        for path, edits in by_path.items():
            before = files.read(path)
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
        from .merge_driver import git_settings

        git_config = git_settings(command)
    return InitPlan(workspace, chosen, tuple(changes), git_config)


def _placed(files: ConfigFiles, edit: Edit) -> Edit:
    """`edit`, or the first of its alternatives whose file exists (a host that reads one
    of several files)."""
    if not edit.alternatives:
        return edit
    return next((e for e in (edit, *edit.alternatives) if files.read(e.path) is not None), edit)


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
    with ConfigFiles(plan.workspace) as files:
        for change in pending:  # every file still as planned, before the first write
            if files.read(change.path) != change.before:
                raise ConfigRefused(
                    f"{change.path} changed while init ran; nothing was written. Run init again."
                )
        for change in pending:
            files.replace(change.path, change.before, change.data, change.mode)
    if not plan.git_config:
        return None
    from .merge_driver import apply_git_settings

    return apply_git_settings(plan.workspace, plan.git_config)


def diffs(plan: InitPlan) -> Iterable[str]:
    yield from (f.diff() for f in plan.files if f.changed)
    for key, value in plan.git_config:
        yield f"git config --local {key} '{value}'\n"


__all__ = ["ConfigRefused", "InitPlan", "MemoryStoreError", "apply_init", "diffs", "plan_init"]
