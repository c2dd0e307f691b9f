"""Which of an entry's references (`references.py`) the workspace no longer bears out.

Pure: the workspace is asked through two functions, `exists(path)` (a path relative to the
workspace, existence only) and `declared(tool)` (the targets a Makefile, package.json,
justfile, Taskfile or tox.ini declares, or None when that file is absent or cannot be read
to the end, so nothing is claimed). `workspace_facts.py` answers them from the disk.
"""

from __future__ import annotations

import functools
import posixpath
from collections.abc import Callable
from typing import TYPE_CHECKING

from .references import Reference, Tool, find_references

if TYPE_CHECKING:
    from .entries import Outline
    from .findings import Finding, Severity

DECLARED_IN: dict[Tool, str] = {
    "make": "the Makefile",
    "npm": "package.json's scripts",
    "just": "the justfile",
    "task": "the Taskfile",
    "tox": "tox.ini",
}


class Targets:
    """What one file declares: names, and patterns (a Makefile's `%` rules)."""

    __slots__ = ("names", "patterns")

    def __init__(self, names: frozenset[str], patterns: tuple[tuple[str, str], ...] = ()) -> None:
        self.names = names
        self.patterns = patterns
        """(prefix, suffix) of each `prefix%suffix` pattern rule."""

    def declares(self, name: str) -> bool:
        if name in self.names:
            return True
        return any(
            name.startswith(a) and name.endswith(b) and len(name) > len(a) + len(b)
            for a, b in self.patterns
        )


class StaleCheck:
    """How one workspace answers (see the module doc), and how findings are shown. (Plain
    classes here: the hooks import this before every prompt, and a dataclass costs ~1 ms.)"""

    __slots__ = ("declared", "exists", "file_dir", "severity")

    def __init__(
        self,
        exists: Callable[[str], bool],
        declared: Callable[[Tool], Targets | None],
        file_dir: str = ".metis",
        severity: Severity | None = None,
    ) -> None:
        self.exists = exists
        self.declared = declared
        self.file_dir = file_dir
        self.severity = severity

    def messages(
        self, outline: Outline, refs: list[Reference] | None = None
    ) -> list[tuple[Reference, str]]:
        """Each stale reference and what to say of it (`refs`: found already)."""
        return stale_messages(outline, self.exists, self.declared, self.file_dir, refs)

    def findings(self, outline: Outline, refs: list[Reference] | None = None) -> list[Finding]:
        return stale_findings(
            outline, self.exists, self.declared, self.file_dir, self.severity, refs
        )

    def keys(self, refs: list[Reference]) -> frozenset[tuple[str, str]]:
        """(kind, workspace path or target) of each reference: what to watch for them."""
        out: set[tuple[str, str]] = set()
        for ref in refs:
            if ref.kind != "path":
                out.add((ref.kind, ref.target))
                continue
            rel = workspace_path(ref, self.file_dir)
            if rel is not None and rel != ".":
                out.add(("path", rel.rstrip("/")))
        return frozenset(out)


def workspace_path(ref: Reference, file_dir: str) -> str | None:
    """`ref`'s path relative to the workspace, normalised; None when it leaves it.
    `file_dir` is the memory file's folder relative to the workspace (links start there)."""
    return _workspace_path(ref.target, ref.from_file, file_dir)


@functools.lru_cache(maxsize=8192)
def _workspace_path(target: str, from_file: bool, file_dir: str) -> str | None:
    """(Cached: a keystroke asks again about every reference of the file.)"""
    joined = posixpath.join(file_dir, target) if from_file else target
    folder = joined.endswith("/")
    normal = posixpath.normpath(joined)
    if normal == ".." or normal.startswith("../") or posixpath.isabs(normal):
        return None
    return normal + "/" if folder and normal != "." else normal


def stale_messages(
    outline: Outline,
    exists: Callable[[str], bool],
    declared: Callable[[Tool], Targets | None],
    file_dir: str = ".metis",
    refs: list[Reference] | None = None,
) -> list[tuple[Reference, str]]:
    found = []
    for ref in find_references(outline) if refs is None else refs:
        message = _stale(ref, exists, declared, file_dir)
        if message is not None:
            found.append((ref, message))
    return found


def stale_findings(
    outline: Outline,
    exists: Callable[[str], bool],
    declared: Callable[[Tool], Targets | None],
    file_dir: str = ".metis",
    severity: Severity | None = None,
    refs: list[Reference] | None = None,
) -> list[Finding]:
    from .findings import Finding, Severity

    level = Severity.INFORMATION if severity is None else severity
    findings: list[Finding] = []
    for ref, message in stale_messages(outline, exists, declared, file_dir, refs):
        data = {"reference": ref.kind, "target": ref.target, "fromFile": ref.from_file}
        entry = outline.entries[ref.entry]
        findings.append(
            Finding("stale-reference", level, ref.start, ref.end, message, entry=entry, data=data)
        )
    return findings


def _stale(
    ref: Reference,
    exists: Callable[[str], bool],
    declared: Callable[[Tool], Targets | None],
    file_dir: str,
) -> str | None:
    if ref.kind == "path":
        path = workspace_path(ref, file_dir)
        if path is None or path == "." or exists(path):
            return None
        return (
            f"`{ref.target}` does not exist in this workspace: this entry may be stale; fix it "
            "or remove it"
        )
    tool: Tool = ref.kind
    targets = declared(tool)
    if targets is None or targets.declares(ref.target):
        return None
    return (
        f"`{ref.target}` is not declared in {DECLARED_IN[tool]}: this entry may be stale; fix "
        "it or remove it"
    )
