"""Which of an entry's references (`references.py`) the workspace no longer bears out.

Pure: the workspace is asked through two functions, `exists(path)` (a path relative to the
workspace, existence only) and `declared(tool)` (the targets a Makefile, package.json,
justfile, Taskfile or tox.ini declares, or None when that file is absent or cannot be read
to the end, so nothing is claimed). `workspace_facts.py` answers them from the disk.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Collection
from dataclasses import dataclass

from .entries import Outline
from .findings import Finding, Severity
from .references import Reference, Tool, find_references

DECLARED_IN: dict[Tool, str] = {
    "make": "the Makefile",
    "npm": "package.json's scripts",
    "just": "the justfile",
    "task": "the Taskfile",
    "tox": "tox.ini",
}


@dataclass(frozen=True)
class Targets:
    """What one file declares: names, and patterns (a Makefile's `%` rules)."""

    names: frozenset[str]
    patterns: tuple[tuple[str, str], ...] = ()
    """(prefix, suffix) of each `prefix%suffix` pattern rule."""

    def declares(self, name: str) -> bool:
        if name in self.names:
            return True
        return any(
            name.startswith(a) and name.endswith(b) and len(name) > len(a) + len(b)
            for a, b in self.patterns
        )


@dataclass(frozen=True)
class StaleCheck:
    """How one workspace answers (see the module doc), and how findings are shown."""

    exists: Callable[[str], bool]
    declared: Callable[[Tool], Targets | None]
    file_dir: str = ".metis"
    severity: Severity = Severity.INFORMATION

    def findings(self, outline: Outline) -> list[Finding]:
        return stale_findings(outline, self.exists, self.declared, self.file_dir, self.severity)


def workspace_path(ref: Reference, file_dir: str) -> str | None:
    """`ref`'s path relative to the workspace, normalised; None when it leaves it.
    `file_dir` is the memory file's folder relative to the workspace (links start there)."""
    joined = posixpath.join(file_dir, ref.target) if ref.from_file else ref.target
    folder = joined.endswith("/")
    normal = posixpath.normpath(joined)
    if normal == ".." or normal.startswith("../") or posixpath.isabs(normal):
        return None
    return normal + "/" if folder and normal != "." else normal


def stale_findings(
    outline: Outline,
    exists: Callable[[str], bool],
    declared: Callable[[Tool], Targets | None],
    file_dir: str = ".metis",
    severity: Severity = Severity.INFORMATION,
    refs: Collection[Reference] | None = None,
) -> list[Finding]:
    findings: list[Finding] = []
    for ref in find_references(outline) if refs is None else refs:
        message = _stale(ref, exists, declared, file_dir)
        if message is not None:
            entry = outline.entries[ref.entry]
            data = {"reference": ref.kind, "target": ref.target, "fromFile": ref.from_file}
            findings.append(
                Finding(
                    "stale-reference", severity, ref.start, ref.end, message, entry=entry, data=data
                )
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
