"""Entries of the user memory that belong to a workspace.

The user memory is read in every workspace, so a fact about one of them ("the rate limiter
lives in `ratelimit/bucket.go`", "run `make itest` before pushing") is carried into all the
others, where it is wrong. What makes an entry workspace-specific is a reference the
stale-reference analysis finds (`references.py`: a path in a code span or a relative link, a
`make`/`npm run`/`just`/`task`/`tox -e` target) that RESOLVES in an open workspace: the path
is there, the target is declared. A reference that resolves nowhere says nothing (it may be
an example, or a habit of the user's), nor does one that resolves in every open workspace
when several are open (`make test`: the user's habit, true in each); a lone top-level folder
(`src/`, `tests/`) says too little, since nearly every repository has one. A relative link
is the user memory's own (relative to its folder, not to a workspace) and is not taken.

Pure: each workspace is asked through `resolves(path)` and `declared(tool)`, answered from
the disk by `workspace/facts.py`; nothing here reads a file.
"""

from __future__ import annotations

import functools
import posixpath
from collections.abc import Callable, Sequence
from typing import NamedTuple, Protocol

from .entries import Entry, Outline
from .findings import Code, Finding, Severity
from .references import Kind, Tool, entry_references
from .stale import Targets

CODE: Code = "workspace-specific"
SEVERITY = Severity.INFORMATION

COMMAND_OF: dict[Tool, str] = {
    "make": "make",
    "npm": "npm run",
    "just": "just",
    "task": "task",
    "tox": "tox -e",
}
"""How a command reference is shown: the tool's words before the target."""
FILE_OF: dict[Tool, str] = {
    "make": "Makefile",
    "npm": "package.json",
    "just": "justfile",
    "task": "Taskfile",
    "tox": "tox.ini",
}
"""The file that declares a tool's targets, as a person names it."""
WHAT_OF: dict[Tool, str] = {
    "make": "a target",
    "npm": "a script",
    "just": "a recipe",
    "task": "a task",
    "tox": "an environment",
}


class OpenWorkspace(NamedTuple):
    """An open workspace, as this check asks it."""

    name: str
    """What a person calls it: the folder's name."""
    uri: str
    """Its URI, as the editor names it (what a fix is addressed to)."""
    resolves: Callable[[str], bool]
    """Whether a path relative to it (normalised, a trailing `/` for a folder) names
    something there; False when that cannot be told (nothing is claimed then)."""
    declared: Callable[[Tool], Targets | None]
    """The targets its Makefile (...) declares; None when absent or unreadable."""


class EntryScan(Protocol):
    """A check of a file's entries against the workspace (`stale.StaleCheck`), or against
    every open workspace (`WorkspaceSpecificCheck`, for the user memory): its findings, and
    (kind, path or target) of what it asked about, to watch."""

    def scan(self, outline: Outline) -> tuple[list[Finding], frozenset[tuple[str, str]]]: ...


class WorkspaceSpecificCheck:
    """The user memory's `EntryScan`: its entries against the open workspaces."""

    __slots__ = ("workspaces",)

    def __init__(self, workspaces: Sequence[OpenWorkspace]) -> None:
        self.workspaces = tuple(workspaces)

    def scan(self, outline: Outline) -> tuple[list[Finding], frozenset[tuple[str, str]]]:
        """The findings, and (kind, path or target) of every reference that could make an
        entry specific: what to watch in each workspace, so one appearing there is seen."""
        keys: set[tuple[str, str]] = set()
        findings = _scan(outline, self.workspaces, keys)
        return findings, frozenset(keys)


class Named(NamedTuple):
    """A reference of an entry that resolves in a workspace."""

    kind: Kind
    target: str
    """The path (relative to the workspace) or the target's name."""
    start: int
    end: int
    """In the text of the file (the reference as written)."""


def workspace_specific_findings(
    outline: Outline, workspaces: Sequence[OpenWorkspace]
) -> list[Finding]:
    """One finding per entry that names something of an open workspace: on the first such
    reference, naming the first workspace it belongs to (in `workspaces`' order); `data`
    lists every workspace the entry names something of, for one move per workspace."""
    return _scan(outline, workspaces, set())


def _scan(
    outline: Outline, workspaces: Sequence[OpenWorkspace], keys: set[tuple[str, str]]
) -> list[Finding]:
    # Each workspace's declared targets, asked once a scan (a Makefile's answer costs a
    # `stat` of every file it was read from, each time it is asked).
    workspaces = [ws._replace(declared=functools.cache(ws.declared)) for ws in workspaces]
    findings: list[Finding] = []
    for entry in outline.entries:
        if "`" not in entry.text and "](" not in entry.text:
            continue
        references = _references(entry)
        keys.update((ref.kind, ref.target.rstrip("/")) for ref in references)
        if len(workspaces) > 1:
            # What every open workspace has (`make test`, `README.md`) is the user's habit,
            # true in all of them: moved to one, it would be lost to the others.
            references = [
                ref for ref in references if not all(_resolves(ref, ws) for ws in workspaces)
            ]
        if not references or not workspaces:
            continue
        found: list[tuple[OpenWorkspace, Named]] = []
        for workspace in workspaces:
            ref = _first_resolving(references, workspace)
            if ref is not None:
                found.append((workspace, ref))
        if found:
            findings.append(_finding(entry, found))
    return findings


def _references(entry: Entry) -> list[Named]:
    """The entry's references that could name something of a workspace."""
    at = entry.start
    return [Named(k, t, at + a, at + b) for k, t, a, b in _relative_references(entry.text)]


MAX_CACHED_ENTRY_CHARS = 2_048
"""Entries up to this long have their references kept by text (a keystroke asks again about
every entry of the file), as the stale check keeps its own (`stale.py`)."""


def _relative_references(text: str) -> tuple[tuple[Kind, str, int, int], ...]:
    if len(text) > MAX_CACHED_ENTRY_CHARS:
        return _scan_entry(text)
    return _cached_scan_entry(text)


@functools.lru_cache(maxsize=4096)
def _cached_scan_entry(text: str) -> tuple[tuple[Kind, str, int, int], ...]:
    return _scan_entry(text)


def _scan_entry(text: str) -> tuple[tuple[Kind, str, int, int], ...]:
    """(kind, workspace path or target, start, end) of each reference, offsets in `text`."""
    out: list[tuple[Kind, str, int, int]] = []
    for kind, target, a, b, from_file in entry_references(text):
        if kind != "path":
            out.append((kind, target, a, b))
            continue
        if from_file:
            continue  # a link: relative to the user memory's own folder
        path = _workspace_path(target)
        if path is not None:
            out.append((kind, path, a, b))
    return tuple(out)


def _workspace_path(target: str) -> str | None:
    """`target` relative to a workspace, normalised (a trailing `/` kept for a folder);
    None when it leaves it, is the workspace itself, or is a lone top-level folder."""
    folder = target.endswith("/")
    normal = posixpath.normpath(target)
    if normal in (".", "..") or normal.startswith("../") or posixpath.isabs(normal):
        return None
    if folder and "/" not in normal:
        return None  # `src/`, `tests/`: a convention as much as a place
    return normal + "/" if folder else normal


def _first_resolving(references: list[Named], workspace: OpenWorkspace) -> Named | None:
    return next((ref for ref in references if _resolves(ref, workspace)), None)


def _resolves(ref: Named, workspace: OpenWorkspace) -> bool:
    """Whether the path is there, or the target declared, in `workspace`."""
    if ref.kind == "path":
        return workspace.resolves(ref.target)
    targets = workspace.declared(ref.kind)
    return targets is not None and targets.declares(ref.target)


def _finding(entry: Entry, found: list[tuple[OpenWorkspace, Named]]) -> Finding:
    workspace, ref = found[0]
    return Finding(
        CODE,
        SEVERITY,
        ref.start,
        ref.end,
        message(ref, workspace.name),
        entry=entry,
        data={
            "reference": ref.kind,
            "target": ref.target,
            "workspaces": [{"uri": ws.uri, "name": ws.name} for ws, _ in found],
        },
    )


def shown(kind: Kind, target: str) -> str:
    """The reference as a person reads it: `src/app.py`, `make itest`."""
    return target if kind == "path" else f"{COMMAND_OF[kind]} {target}"


def message(ref: Named, workspace: str) -> str:
    """What the finding says: "This entry names `src/app.py`, a file of the workspace shop:
    your user memory is read in every workspace. Move it to shop's MEMORY.md." """
    if ref.kind == "path":
        what = "a folder" if ref.target.endswith("/") else "a file"
        of = f"{what} of the workspace {workspace}"
    else:
        of = f"{WHAT_OF[ref.kind]} of {workspace}'s {FILE_OF[ref.kind]}"
    return (
        f"This entry names `{shown(ref.kind, ref.target)}`, {of}: your user memory is read in "
        f"every workspace. Move it to {workspace}'s MEMORY.md."
    )


def move_title(workspace: str) -> str:
    """The quick fix's title: "Move to shop's MEMORY.md"."""
    return f"Move to {workspace}'s MEMORY.md"
