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

from .references import Kind, Reference, Tool, entry_references

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

    def messages(self, outline: Outline) -> list[tuple[Reference, str]]:
        """Each stale reference and what to say of it."""
        return stale_scan(outline, self.exists, self.declared, self.file_dir)[0]

    def findings(self, outline: Outline) -> list[Finding]:
        return self.scan(outline)[0]

    def scan(self, outline: Outline) -> tuple[list[Finding], frozenset[Key]]:
        """The findings, and (kind, workspace path or target) of every reference: what to
        watch for them. One pass, for the keystroke path."""
        stale, keys = stale_scan(outline, self.exists, self.declared, self.file_dir)
        return _as_findings(outline, stale, self.severity), keys


Key = tuple[str, str]


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
) -> list[tuple[Reference, str]]:
    return stale_scan(outline, exists, declared, file_dir)[0]


def stale_findings(
    outline: Outline,
    exists: Callable[[str], bool],
    declared: Callable[[Tool], Targets | None],
    file_dir: str = ".metis",
    severity: Severity | None = None,
) -> list[Finding]:
    return _as_findings(outline, stale_messages(outline, exists, declared, file_dir), severity)


def stale_scan(
    outline: Outline,
    exists: Callable[[str], bool],
    declared: Callable[[Tool], Targets | None],
    file_dir: str = ".metis",
) -> tuple[list[tuple[Reference, str]], frozenset[Key]]:
    """Each stale reference with what to say of it, and the key of every reference. An
    entry's references and their workspace paths are kept by its text, so a keystroke
    costs a lookup per entry and one question to the workspace per reference."""
    found: list[tuple[Reference, str]] = []
    keys: set[Key] = set()
    for entry in outline.entries:
        checked = _entry_checks(entry.text, file_dir)
        for kind, target, a, b, from_file, probe, key in checked:
            if key is None:
                continue  # leaves the workspace, or is the workspace itself
            keys.add(key)
            if kind == "path":
                if exists(probe):
                    continue
                message = (
                    f"`{target}` does not exist in this workspace: this entry may be stale; "
                    "fix it or remove it"
                )
            else:
                targets = declared(kind)
                if targets is None or targets.declares(target):
                    continue
                message = (
                    f"`{target}` is not declared in {DECLARED_IN[kind]}: this entry may be "
                    "stale; fix it or remove it"
                )
            ref = Reference(kind, target, entry.start + a, entry.start + b, entry.index, from_file)
            found.append((ref, message))
    return found, frozenset(keys)


_Checked = tuple[Kind, str, int, int, bool, str, "Key | None"]
"""An entry's reference (offsets within the entry), the path to ask the workspace about
(for a path), and its key (None: not a claim about the workspace)."""


MAX_CACHED_ENTRY_CHARS = 2_048
"""Entries up to this long have their checks kept (a memory entry is a line or two; the
cache then holds at most 4,096 x 2 KiB); a longer one is scanned again on each keystroke."""


def _entry_checks(text: str, file_dir: str) -> tuple[_Checked, ...]:
    if "`" not in text and "](" not in text:
        return ()
    if len(text) > MAX_CACHED_ENTRY_CHARS:
        return _checks(text, file_dir)
    return _cached_checks(text, file_dir)


@functools.lru_cache(maxsize=4096)
def _cached_checks(text: str, file_dir: str) -> tuple[_Checked, ...]:
    return _checks(text, file_dir)


def _checks(text: str, file_dir: str) -> tuple[_Checked, ...]:
    out: list[_Checked] = []
    for kind, target, a, b, from_file in entry_references(text):
        if kind != "path":
            out.append((kind, target, a, b, from_file, "", (kind, target)))
            continue
        path = _workspace_path(target, from_file, file_dir)
        key = None if path is None or path == "." else ("path", path.rstrip("/"))
        out.append((kind, target, a, b, from_file, path or "", key))
    return tuple(out)


def _as_findings(
    outline: Outline, stale: list[tuple[Reference, str]], severity: Severity | None
) -> list[Finding]:
    from .findings import Finding, Severity

    level = Severity.INFORMATION if severity is None else severity
    findings: list[Finding] = []
    for ref, message in stale:
        data = {"reference": ref.kind, "target": ref.target, "fromFile": ref.from_file}
        entry = outline.entries[ref.entry]
        findings.append(
            Finding("stale-reference", level, ref.start, ref.end, message, entry=entry, data=data)
        )
    return findings
