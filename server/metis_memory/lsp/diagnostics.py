"""Findings as LSP diagnostics (source ``metis``), with ranges in the client's
position encoding. `analyse` is pure and thread-safe: the refresher runs it off
the event loop."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from lsprotocol import types

from ..analysis.checks import ENTRY_CHECKS_LIMIT, check
from ..analysis.entries import Outline, parse
from ..analysis.findings import Finding
from ..analysis.positions import LineIndex
from ..store.usage import Usage
from .views import FileView

if TYPE_CHECKING:
    from ..analysis.workspace_specific import EntryScan

SOURCE = "metis"
_UNNECESSARY = frozenset({"duplicate-entry", "empty-entry"})


@dataclass(frozen=True)
class FileAnalysis:
    """One view of a file, analysed: what diagnostics, fixes, hover and lens use."""

    view: FileView
    outline: Outline
    lines: LineIndex
    findings: list[Finding]
    diagnostics: list[types.Diagnostic]
    encoding: str
    references: frozenset[tuple[str, str]] = frozenset()
    """(kind, path or target) of the workspace references its entries make (to watch)."""
    _tidied: list[str] = field(default_factory=list, repr=False, compare=False)

    @property
    def usage(self) -> Usage:
        return self.view.usage

    def tidied(self) -> str:
        """The tidy proposal for this text (computed once)."""
        if not self._tidied:
            from ..analysis.tidy import tidy

            self._tidied.append(tidy(self.view.text, self.outline))
        return self._tidied[0]

    def range(self, start: int, end: int) -> types.Range:
        return to_range(self.lines, start, end, self.encoding)


def analyse(
    view: FileView,
    encoding: str,
    stale: EntryScan | None = None,
    previous: FileAnalysis | None = None,
) -> FileAnalysis:
    """`stale`: the workspace's answers for the stale-reference check, or for the user
    memory the open workspaces' for the workspace-specific one (None: not checked).
    `previous`: the file's last analysis, whose outline is reused around the edit."""
    outline = parse(view.text, previous.outline if previous is not None else None)
    findings = check(
        view.file,
        view.text,
        size_bytes=view.size_bytes,
        utf8_error_offset=view.utf8_error_offset,
        outline=outline,
        hidden_prefix_bytes=view.hidden_prefix_bytes,
        user_memory=view.user_memory,
    )
    references: frozenset[tuple[str, str]] = frozenset()
    if stale is not None and view.size_bytes <= ENTRY_CHECKS_LIMIT:
        stale_found, references = stale.scan(outline)
        findings += stale_found
        findings.sort(key=lambda f: (f.start, f.end))
    lines = LineIndex(view.text, outline.line_starts, outline.line_ends)
    diagnostics = [to_diagnostic(f, lines, view.uri, encoding) for f in findings]
    return FileAnalysis(view, outline, lines, findings, diagnostics, encoding, references)


def to_range(lines: LineIndex, start: int, end: int, encoding: str) -> types.Range:
    sl, sc = lines.position(start, encoding)
    el, ec = lines.position(end, encoding)
    return types.Range(types.Position(sl, sc), types.Position(el, ec))


def to_diagnostic(
    finding: Finding, lines: LineIndex, uri: str | None, encoding: str
) -> types.Diagnostic:
    """The one conversion of a finding, in a memory file or another agent's file; the
    first occurrence of a duplicate is named where the document's `uri` is known."""
    related = None
    if finding.original is not None and uri is not None:
        original = finding.original
        related = [
            types.DiagnosticRelatedInformation(
                types.Location(uri, to_range(lines, original.start, original.end, encoding)),
                "first occurrence",
            )
        ]
    return types.Diagnostic(
        range=to_range(lines, finding.start, finding.end, encoding),
        message=finding.message,
        severity=types.DiagnosticSeverity(finding.severity.value),
        code=finding.code,
        source=SOURCE,
        tags=[types.DiagnosticTag.Unnecessary] if finding.code in _UNNECESSARY else None,
        related_information=related,
        data=finding.data,
    )
